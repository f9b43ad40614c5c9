"""Ctrl-C and SIGTERM in the command: each ends the run through the main thread's
cleanup, as KeyboardInterrupt (SIGTERM as its subclass :class:`Terminated`), even
when it lands in a finalizer.

Python runs a signal's handler in the main thread, between two steps of whatever
runs there. If that is a finalizer (a ``__del__``, a weakref callback; Dask's
futures release themselves so), Python prints the exception as "Exception ignored"
and drops it, and the run goes on. The command's unraisable hook keeps such an
exception and a timer (SIGALRM) raises it again a moment later.
"""
from __future__ import annotations

import signal
import sys

AGAIN_SECONDS = 0.05
"""How long after a signal was lost in a finalizer it is raised again."""

_lost: list[type[KeyboardInterrupt]] = []  # signals lost in finalizers, not yet raised again


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every cleanup runs, as on Ctrl-C."""


def catch_signals() -> None:
    """From now on, SIGTERM raises :class:`Terminated` in the main thread, and a
    KeyboardInterrupt (or Terminated) raised in a finalizer is raised again."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGALRM, _raise_lost)
    sys.unraisablehook = _keep_lost


def _terminate(signum, frame) -> None:
    raise Terminated


def _keep_lost(unraisable) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _lost.append(type(unraisable.exc_value))
        signal.setitimer(signal.ITIMER_REAL, AGAIN_SECONDS)
    else:
        sys.__unraisablehook__(unraisable)


def _raise_lost(signum, frame) -> None:
    if frame is not None and frame.f_code is _keep_lost.__code__:  # it would be lost again
        signal.setitimer(signal.ITIMER_REAL, AGAIN_SECONDS)
    elif _lost:
        raise _lost.pop()
