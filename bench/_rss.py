"""Peak memory of a benchmark child process.

``ru_maxrss`` is preserved across ``execve``: a child started from a large parent (``make
bench`` runs every section in one process) reports the *parent's* peak. ``VmHWM`` in
``/proc/self/status`` belongs to the child's own address space, so children report that.
"""

PEAK_KB_SOURCE = '''
def peak_kb():
    """Peak resident set size of this process in KiB (VmHWM; ru_maxrss off Linux)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
'''
