"""Keeping freed memory for reuse while a survey file is read (glibc's allocator only).

Reading a large workbook allocates and frees hundreds of megabytes in big blocks: the
inflated sheet XML, its shards, calamine's cells, grids and columns. By default glibc hands
such blocks back to the system as soon as they are freed (a block above a threshold that
starts at 128 KB and rises to at most 32 MB is mapped on its own and unmapped when freed; free
memory at the top of a heap beyond twice that is trimmed), so the next block touches fresh
pages again, each a page fault: reading a
200,000-respondent workbook took 450,000 faults and more than a second of system time for a
peak of 620 MB. While :func:`freed_memory_kept` is active, blocks come from the heap and
freed ones stay there to be reused (about 180,000 faults and 0.4 s of system time for a peak
of 800 MB, and the whole read 20% faster). On leaving it the free memory is returned to the
system (``malloc_trim``) and the thresholds are set to the values glibc itself moves to after
freeing large blocks (32 MB mapped alone, 64 MB kept at the top of a heap).

These are the knobs of glibc's ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``
environment variables, set at run time (``mallopt``) and only around the import. Elsewhere
(macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
KEPT_BYTES = 1 << 30
"""While active: blocks of up to this many bytes come from the heap, and this much free memory
may stay at the top of a heap. An import's largest block, its inflated sheet XML, is bounded
by the import limits (1,000 MB unzipped by default); a larger block is mapped on its own."""
AFTER_MMAP_THRESHOLD, AFTER_TRIM_THRESHOLD = 32 << 20, 64 << 20
"""After: glibc's own thresholds once its dynamic adjustment has seen large blocks freed."""

_lock = threading.Lock()
_active = 0  # imports running now (threads of one app server share the allocator)


def _glibc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _glibc()


def _set(trim: int, mmap: int) -> None:
    """Both thresholds (each refused silently by a glibc that does not take the value)."""
    _LIBC.mallopt(_M_MMAP_THRESHOLD, mmap)
    _LIBC.mallopt(_M_TRIM_THRESHOLD, trim)


@contextmanager
def freed_memory_kept() -> Iterator[None]:
    """Within: freed blocks stay in the process for reuse; after (the last of concurrent
    users): free memory returned to the system. Does nothing without glibc."""
    global _active
    if _LIBC is None:
        yield
        return
    with _lock:
        if _active == 0:
            _set(KEPT_BYTES, KEPT_BYTES)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                _set(AFTER_TRIM_THRESHOLD, AFTER_MMAP_THRESHOLD)
                _LIBC.malloc_trim(0)


__all__ = ["AFTER_MMAP_THRESHOLD", "AFTER_TRIM_THRESHOLD", "KEPT_BYTES", "freed_memory_kept"]
