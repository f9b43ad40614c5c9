"""Compiling ahead in a forked child: numba compiles one function at a time in a
process (its compiler lock), so on a first run the second core would sit idle
while a long kernel compiles. :func:`compiling_ahead` forks a child that
compiles it into numba's cache on disk while this process goes on (counting a
corpus, compiling other kernels); :func:`wait_for_child` waits for it before this
process loads what the child compiled. Forking, the child starts at once, with
everything imported and numba set up.

The child is only a helper, and only where forking is safe: on Linux, with two
cores or more, and while this process runs no other thread (a lock held by a
thread would stay held in the child). Otherwise nothing is forked and this
process compiles as it would have; if the child fails, likewise. Leaving the
block stops a child still compiling and reaps it; stop signals are held back
while it forks.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from .compiling import about

_children: dict[Hashable, int] = {}  # the pid of the child compiling for each key
_reaped: set[int] = set()  # those waited for (by wait_for_child)
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def can_fork() -> bool:
    """Whether a child forked now may compile: Linux, two cores or more, and no other
    thread in this process, neither Python's nor numba's parallel ones."""
    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2:
        return False
    if threading.active_count() > 1:
        return False
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    return not getattr(parallel, "_is_initialized", False)


@contextmanager
def compiling_ahead(key: Hashable, compile: Callable[[], object],
                    meanwhile: Callable[[], object] | None = None) -> Iterator[None]:
    """Within the block, a forked child calls ``compile`` (which compiles into
    numba's cache), if :func:`can_fork` and no child works for ``key`` already;
    this process then calls ``meanwhile`` (what the child's compile will load
    from the cache if this process compiled it first) and goes on.
    :func:`wait_for_child` with ``key`` waits for the child."""
    pid = None
    try:
        if key not in _children and can_fork():
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)  # (none lands mid-fork)
            parent, prctl = os.getpid(), _prctl()
            try:
                pid = os.fork()
                if pid == 0:
                    _run_and_exit(compile, parent, prctl)
                _children[key] = pid
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
            if meanwhile is not None:
                meanwhile()
        yield
    finally:
        if pid:
            _children.pop(key, None)
            if pid not in _reaped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            _reaped.discard(pid)


def _prctl() -> Callable | None:
    """libc's ``prctl``, looked up in the parent (a ``dlopen`` in a forked child could
    wait on a loader lock that another thread held at the fork), or None."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with(parent: int, prctl: Callable | None) -> None:
    """Have the kernel kill this process when its parent ends, however it ends
    (``PR_SET_PDEATHSIG``, tied to the thread that forked: the main thread, which
    compiles ahead); end now if the parent already has."""
    if prctl is not None:  # (else the parent still stops and reaps it when it leaves the block)
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _run_and_exit(compile: Callable[[], object], parent: int, prctl: Callable | None) -> None:
    """The child: die with ``parent``, call ``compile``, quietly, and exit without
    running anything of the parent's (its exit handlers, its buffered output)."""
    code = 1
    try:
        _die_with(parent, prctl)
        for sig in _STOPS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        compile()
        code = 0
    finally:
        os._exit(code)


def wait_for_child(key: Hashable, what: str) -> None:
    """Wait for the child compiling for ``key``, if one is; the wait counts as
    compiling ``what`` (a :class:`~hsw2v.system.compiling.CompileWatch` sees it)."""
    pid = _children.get(key)
    if pid is None or pid in _reaped:
        return
    from numba.core import event

    with about(what), event.trigger_event("numba:compile", data={"dispatcher": None}):
        os.waitpid(pid, 0)
    _reaped.add(pid)
