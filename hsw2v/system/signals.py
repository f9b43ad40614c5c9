"""Ctrl-C, SIGTERM and SIGHUP (a closed terminal or SSH session) in the command: each
ends the run through the main thread's cleanup, as KeyboardInterrupt (SIGTERM as its
subclass :class:`Terminated`, SIGHUP as :class:`HungUp`), even when its first raise
is lost.

Python runs a signal's handler in the main thread, between two steps of whatever
runs there. If that is a finalizer (a ``__del__``, a weakref callback; Dask's
futures release themselves so) or Python code called back from C (an import that
numba makes while compiling), the exception is printed and dropped, and the run
goes on. So the command's handlers also note the signal, and the main loops of long
work call :func:`raise_pending`, which raises it again while the command has not
ended. Imports nothing from the package.
"""
from __future__ import annotations

import signal
import sys
import threading

_pending: list[type[KeyboardInterrupt]] = []  # the signals the command's handlers raised


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every cleanup runs, as on Ctrl-C."""

    message = "terminated"
    code = 143  # 128 + SIGTERM


class HungUp(Terminated):
    """SIGHUP: the terminal went away; the run ends as on SIGTERM."""

    message = "hung up"
    code = 129  # 128 + SIGHUP


def catch_signals() -> None:
    """Install the command's handlers: SIGTERM raises :class:`Terminated`, SIGHUP
    (unless ignored, as under nohup) :class:`HungUp` and SIGINT
    (unless ignored, as in a shell's background job) KeyboardInterrupt, each noted
    for :func:`raise_pending`; and a lost raise prints nothing."""
    _pending.clear()  # (a command run before in this process: its signals are over)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:  # (nohup ignores it: so do we)
        signal.signal(signal.SIGHUP, _hang_up)
    sys.unraisablehook = _quiet_unraisable
    sys.excepthook = _quiet_except


def raise_pending() -> None:
    """In the main thread, raise again a signal whose handler raised before: it was
    lost, or this would not run. For the main loops of long work; does nothing where
    the handlers are not :func:`catch_signals`'s (a notebook)."""
    if _pending and threading.current_thread() is threading.main_thread():
        raise _pending[-1]


def pending_signal() -> type[KeyboardInterrupt] | None:
    """The last signal the command's handlers raised, if any: an exception that a
    library made of that raise (numba's "no compiled object yet" when Ctrl-C lands
    while LLVM emits code) is that signal."""
    return _pending[-1] if _pending else None


def _interrupt(signum, frame) -> None:
    _pending.append(KeyboardInterrupt)
    raise KeyboardInterrupt


def _terminate(signum, frame) -> None:
    _pending.append(Terminated)
    raise Terminated


def _hang_up(signum, frame) -> None:
    _pending.append(HungUp)
    raise HungUp


def _quiet_unraisable(unraisable) -> None:
    if not (_pending and isinstance(unraisable.exc_value, KeyboardInterrupt)):
        sys.__unraisablehook__(unraisable)


def _quiet_except(kind, value, traceback) -> None:
    if not (_pending and isinstance(value, KeyboardInterrupt)):
        sys.__excepthook__(kind, value, traceback)
