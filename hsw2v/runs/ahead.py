"""Compiling ahead: when numba's cache lacks a run's training kernel, a forked
child process compiles it into that cache while this process counts the corpus
and compiles the counting and writing kernels; the run then waits for the child
and loads the kernel. numba compiles one function at a time in a process (its
compiler lock), so on a first run the second core would otherwise sit idle for
the seconds the training kernel takes. Forking, the child starts at once, with
everything imported. A kernel loaded from the cache gives the same bits as one
compiled in the process (``tests/test_first_run.py``).

The child is only a helper, and only where forking is safe: on Linux, with
more than one core, and while this process runs no other thread (a lock held
by a thread would stay held in the child). Otherwise, or if the child fails,
the run compiles the kernel itself, as it would without it. A run that ends
early stops its child.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..settings import TrainSettings
from ..training.block import load_callees
from ..system.compiling import about

_children: dict[tuple, int] = {}  # the pid of the child compiling each kernel
_reaped: set[int] = set()  # those waited for (by wait_for_child)
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def _key(s: TrainSettings) -> tuple:
    """What tells a run's first kernels apart (a one-shot tree's first pass has other
    settings than its run, but the same kernel)."""
    return s.arch, s.dim


def _can_fork() -> bool:
    """Whether a child forked now may compile: Linux, two cores or more, and no other
    thread in this process, neither Python's nor numba's parallel ones."""
    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2:
        return False
    if threading.active_count() > 1:
        return False
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    return not getattr(parallel, "_is_initialized", False)


@contextmanager
def compiling_ahead(s: TrainSettings) -> Iterator[None]:
    """Within the block, a forked child compiles the training kernel that a run with
    settings ``s`` calls first, unless numba's cache holds it or forking is not safe
    (see the module); :func:`wait_for_child` waits for it. On leaving, a child still
    compiling is stopped."""
    from .kernels import first_kernel

    key = _key(s)
    pid = None
    try:
        if key not in _children and _can_fork() and first_kernel(s, compile=False) is None:
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)  # (none lands mid-fork)
            try:
                pid = os.fork()
                if pid == 0:
                    _compile_and_exit(s)
                _children[key] = pid
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
            load_callees()  # (while the child types the kernel: it loads them from the cache)
        yield
    finally:
        if pid:
            _children.pop(key, None)
            if pid not in _reaped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            _reaped.discard(pid)


def _compile_and_exit(s: TrainSettings) -> None:
    """The child: compile the kernel, quietly, and exit without running anything of
    the parent's (its exit handlers, its buffered output)."""
    code = 1
    try:
        for sig in _STOPS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        from .kernels import first_kernel

        first_kernel(s)
        code = 0
    finally:
        os._exit(code)


def wait_for_child(s: TrainSettings, what: str) -> None:
    """Wait for the child compiling the training kernel of settings ``s``, if one
    is; the wait counts as compiling ``what`` (the run's compile watch sees it)."""
    pid = _children.get(_key(s))
    if pid is None or pid in _reaped:
        return
    from numba.core import event

    with about(what), event.trigger_event("numba:compile", data={"dispatcher": None}):
        os.waitpid(pid, 0)
    _reaped.add(pid)
