"""Seeing numba compile: a first run, or a run at a new vector size, spends seconds
compiling kernels. :class:`CompileWatch` counts that time apart from the run's
own, and says on stderr what is compiling the first time a compile lasts
:data:`NOTICE_AFTER` seconds (one line a run; the run's summary gives the total)."""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

NOTICE_AFTER = 0.5
"""Seconds a compile lasts before the watch says so (loading from numba's cache is faster)."""


_what = [("the kernels", False)]


@contextmanager
def about(what: str, whole: bool = False) -> Iterator[None]:
    """Name what compiles inside this block, for a watch's notice; the innermost
    name counts, unless an outer one says it names the ``whole`` block."""
    _what.append((what, whole))
    try:
        yield
    finally:
        _what.pop()


def _named() -> str:
    return next((what for what, whole in _what if whole), _what[-1][0])


class CompileWatch:
    """Counts the seconds numba spends compiling while it is active (``with``), and,
    if ``notify``, says what is compiling the first time a compile lasts."""

    def __init__(self, notify: bool):
        self.notify = notify
        self.seconds = 0.0
        self._depth = 0
        self._start = 0.0
        self._timer: threading.Timer | None = None
        self.said = False  # whether the notice was given
        self._lock = threading.Lock()
        self._listener = None
        self._compiles = 0

    def __enter__(self) -> CompileWatch:  # noqa: PYI034 (typing.Self is Python 3.11+)
        from numba.core import event

        watch = self

        class Listener(event.Listener):
            def on_start(self, ev):
                watch._started()

            def on_end(self, ev):
                watch._ended()

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        with self._lock:
            self._cancel()

    def _started(self) -> None:
        self._depth += 1
        if self._depth == 1:
            self._start = time.perf_counter()
            with self._lock:
                self._compiles += 1
                if self.notify and not self.said:
                    self._timer = threading.Timer(NOTICE_AFTER, self._announce,
                                                  (self._compiles, _named()))
                    self._timer.daemon = True
                    self._timer.start()

    def _ended(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            seconds = time.perf_counter() - self._start
            self.seconds += seconds
            with self._lock:
                self._cancel()
                self._compiles += 1  # a notice still on its way is stale now

    def announce(self, what: str) -> None:
        """Say now that ``what`` compiles (a first run's kernels, compiled ahead by
        children while this process counts), unless a notice was given."""
        with self._lock:
            if self.notify and not self.said:
                self.said = True
                self._cancel()
                _write(_NOTICE.format(what))

    def _announce(self, compiles: int, what: str) -> None:
        with self._lock:
            if compiles == self._compiles:
                self.said = True
                _write(_NOTICE.format(what))

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


_NOTICE = ("compiling {} (numba; cached on disk, so this is once: each model kind, vector "
           "size and command compiles its own kernels)")


def _write(text: str) -> None:
    """A line on stderr, above any progress bar."""
    from tqdm import tqdm

    tqdm.write(f"hsw2v: {text}", file=sys.stderr)
