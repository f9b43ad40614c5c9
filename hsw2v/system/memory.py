"""Keeping the resident set small: hand memory the process no longer needs back
to the OS (Linux and glibc; elsewhere these do nothing)."""
from __future__ import annotations

import ctypes
import sys

_MADV_DONTNEED = 4
_MADV_PAGEOUT = 21  # Linux ≥ 5.4
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 3 << 19
"""Allocations of this many bytes (1.5 MiB) or more get pages of their own (see
:func:`map_large_allocations`); the text blocks (1 MiB) stay on the heap, which
reuses them without page faults."""


def map_large_allocations() -> None:
    """Give every allocation of MMAP_THRESHOLD bytes or more pages of its own, which
    go back to the OS when it is freed (glibc's mallopt).

    glibc otherwise raises its threshold after each large free (up to 32 MiB), so
    that the counting pass's many arrays of a few MiB come from the heap, where
    freed memory stays in the resident set: 15-30% more than a memory budget.
    Setting the threshold keeps it fixed for the process. (At 1 MiB, every text
    block would be mapped afresh: counting ran 15% slower.)"""
    try:
        ctypes.CDLL("libc.so.6").mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):
        pass


def release_free_memory() -> None:
    """Return freed heap memory to the OS (glibc's malloc_trim)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def release_compiler_pages() -> None:
    """Drop LLVM's shared library from the resident set once the kernels a run needs
    are loaded.

    Loading numba's cached kernels still runs LLVM, which reads about 70 MB of
    libllvmlite into memory; training never calls it again. Its code pages (never
    written) are unmapped with MADV_DONTNEED and the other clean pages are offered
    back with MADV_PAGEOUT (Linux ≥ 5.4). Nothing is lost: if LLVM runs again, the
    pages are read back from the file.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        with open("/proc/self/maps") as maps:
            spans = [line.split()[:2] for line in maps if "libllvmlite" in line]
    except (OSError, AttributeError):
        return
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for span, perms in spans:
        lo, hi = (int(x, 16) for x in span.split("-"))
        advice = _MADV_DONTNEED if perms == "r-xp" else _MADV_PAGEOUT
        libc.madvise(lo, hi - lo, advice)  # an old kernel refuses PAGEOUT: fine
