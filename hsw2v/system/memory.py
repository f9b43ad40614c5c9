"""How much memory there is (and sizes as users write them, ``200M``), and keeping
the resident set small.

:func:`total_memory` and :func:`available_memory` read the machine's memory and,
inside a container, its cgroup's limit (v2 ``memory.max``, v1
``memory.limit_in_bytes``, the tightest of the process's cgroup and its
ancestors): a default sized from physical memory would be killed there. The rest
hands memory the process no longer needs back to the OS (Linux and glibc;
elsewhere these do nothing)."""
from __future__ import annotations

import ctypes
import os
import sys

from ..errors import HSW2VError, param

def parse_size(text: str | None, option: str, least: int = 1 << 20) -> int | None:
    """'200M', '1.5G', '2GiB', '4096' as bytes (binary units); None stays None. Below
    ``least`` (1M unless given), or not a size: HSW2VError naming ``option``."""
    if text is None:
        return None
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    body = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = body[-1:] if body[-1:] in units else ""
    try:
        value = float(body[:len(body) - len(unit)]) * units[unit]
    except ValueError:
        value = -1.0
    if not least <= value < 1 << 60:
        floor = f"at least {least >> 20}M, " if least >= 1 << 20 else ""
        raise HSW2VError(f"{param(option)} must be a size, {floor}such as 200M or 4G; got {text!r}")
    return int(value)


_UNLIMITED = 1 << 60  # (cgroup v1 writes its "no limit" as a number near 2**63)


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # ("max": no limit)


def _cgroup_files(v2_name: str, v1_name: str) -> list[tuple[str, bool]]:
    """Each memory cgroup of this process and its ancestors: (file, own cgroup)."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if number == "0" and controllers == "":
            roots, name = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"), v2_name
        elif "memory" in controllers.split(","):
            roots, name = ("/sys/fs/cgroup/memory",), v1_name
        else:
            continue
        parts = [p for p in path.split("/") if p]
        for depth in range(len(parts), -1, -1):
            for root in roots:
                found.append((os.path.join(root, *parts[:depth], name), depth == len(parts)))
    return found


def memory_limit() -> int | None:
    """The tightest memory limit of this process's cgroups, in bytes, or None."""
    limits = [x for file, _ in _cgroup_files("memory.max", "memory.limit_in_bytes")
              if (x := _read_int(file)) is not None and x < _UNLIMITED]
    return min(limits) if limits else None


def total_memory() -> int:
    """Bytes of memory this process may use in all: physical memory, or its
    cgroup's limit where that is lower (1 GiB × 4 where neither can be read)."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not on Linux
        physical = 4 << 30
    limit = memory_limit()
    return physical if limit is None else min(physical, limit)


def available_memory() -> int:
    """Bytes of memory available to this process now: the kernel's MemAvailable,
    or what its cgroup's limit leaves (the limit less the cgroup's usage) where
    that is less."""
    available = 1 << 40
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    limit = memory_limit()
    if limit is not None:
        used = next((x for file, own in _cgroup_files("memory.current", "memory.usage_in_bytes")
                     if own and (x := _read_int(file)) is not None), 0)
        available = min(available, max(limit - used, 0))
    return available

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
