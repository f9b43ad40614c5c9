"""hsw2v.system.compiling: the watch counts the seconds numba spends compiling (within
the wall time around it, nothing for a loaded or already compiled function) and says
once, on stderr, what compiles when a compile lasts."""
from __future__ import annotations

import threading
import time

import numpy as np
from numba import njit

from hsw2v.system import compiling


def fresh_kernel():
    """A function numba has not compiled yet (and does not cache), slow to compile:
    sorting and unique values of an array."""
    @njit
    def kernel(a):
        b = np.sort(a)
        return np.unique(b).size + np.searchsorted(b, a).sum()

    return kernel


def test_the_watch_counts_compiles_only(capsys):
    """Seconds compiling are counted within the call's wall time; calling the compiled
    function again adds nothing, nor does a compile after the watch ends; without
    ``notify``, nothing is said."""
    kernel, later = fresh_kernel(), fresh_kernel()
    a = np.arange(50, dtype=np.int64)[::-1].copy()
    with compiling.CompileWatch(False) as watch:
        start = time.perf_counter()
        assert kernel(a) == 50 + np.searchsorted(np.sort(a), a).sum()
        wall = time.perf_counter() - start
        first = watch.seconds
        assert 0 < first <= wall
        kernel(a)
        assert watch.seconds == first
    later(a)
    assert watch.seconds == first and not watch.said
    assert capsys.readouterr().err == ""


def test_a_lasting_compile_is_said_once_naming_the_innermost_block(monkeypatch, capsys):
    """A compile that lasts past NOTICE_AFTER gives one line naming the innermost
    ``about`` block (an outer one that names the ``whole`` block wins); later compiles
    under the same watch say nothing more."""
    monkeypatch.setattr(compiling, "NOTICE_AFTER", 0.0)
    a = np.arange(20, dtype=np.int64)
    with compiling.CompileWatch(True) as watch, compiling.about("the outer kernels"):
        with compiling.about("the inner kernels"):
            fresh_kernel()(a)
        fresh_kernel()(a)
    time.sleep(0.1)  # (a late notice would come now)
    lines = capsys.readouterr().err.splitlines()
    assert watch.said and len(lines) == 1, lines
    assert lines[0].startswith("hsw2v: compiling the inner kernels (numba; cached on disk")

    with compiling.CompileWatch(True), compiling.about("the whole run", whole=True):
        with compiling.about("a part of it"):
            fresh_kernel()(a)
    time.sleep(0.1)
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("hsw2v: compiling the whole run (")


def test_a_short_compile_says_nothing_and_leaves_no_timer(monkeypatch, capsys):
    """A compile shorter than NOTICE_AFTER: no line, and its timer is cancelled, not
    left waiting (no thread outlives the watch)."""
    monkeypatch.setattr(compiling, "NOTICE_AFTER", 60.0)
    before = set(threading.enumerate())
    with compiling.CompileWatch(True) as watch:
        fresh_kernel()(np.arange(5, dtype=np.int64))
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(threading.enumerate()) - before
    assert not watch.said and watch.seconds > 0
    assert capsys.readouterr().err == ""
