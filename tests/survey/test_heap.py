"""freed_memory_kept: while active, a large block freed and allocated again is served from the
memory the process keeps (no new page faults); after, freed memory goes back to the system."""

from __future__ import annotations

import resource
import threading

import pytest

from cx_app.survey import heap
from cx_app.survey.heap import freed_memory_kept

pytestmark = pytest.mark.skipif(heap._LIBC is None, reason="glibc's allocator only")

BLOCK = 64 << 20  # above the 32 MB that glibc otherwise maps (and unmaps) on its own
PAGES = BLOCK // 4096


def _faults_of_second_block() -> int:
    """Page faults taken by allocating and filling a block after an equal one was freed."""
    first = bytearray(BLOCK)  # bytearray(n) fills its memory with zeros: every page touched
    del first
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    second = bytearray(BLOCK)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    del second
    return faults


def test_a_freed_block_is_reused_within_and_given_back_after():
    with freed_memory_kept():
        within = _faults_of_second_block()
    after = _faults_of_second_block()
    assert within < PAGES // 10, within  # the freed pages served the second block
    assert after > PAGES // 2, after  # outside, the block is mapped afresh (as by default)


def test_nested_and_concurrent_users_restore_only_when_the_last_leaves():
    entered, leave = threading.Event(), threading.Event()

    def other_import():
        with freed_memory_kept():
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other_import)
    thread.start()
    try:
        assert entered.wait(10)
        with freed_memory_kept():
            pass  # leaving this one must not end the other's
        assert heap._active == 1
        assert _faults_of_second_block() < PAGES // 10  # still kept for the other import
    finally:
        leave.set()
        thread.join()
    assert heap._active == 0
    assert _faults_of_second_block() > PAGES // 2


def test_an_error_inside_still_restores():
    with pytest.raises(RuntimeError), freed_memory_kept():
        raise RuntimeError("the import failed")
    assert heap._active == 0
    assert _faults_of_second_block() > PAGES // 2


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def test_memory_freed_within_is_returned_on_leaving():
    with freed_memory_kept():
        blocks = [bytearray(BLOCK) for _ in range(3)]
        del blocks
        kept = _resident_bytes()  # freed, yet still held by the process for reuse
    returned = kept - _resident_bytes()
    assert returned > 2 * BLOCK, returned
