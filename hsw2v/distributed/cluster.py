"""Dask plumbing for :mod:`hsw2v.distributed.driver`: a client (given, connected to a
scheduler, or of a new LocalCluster), task keys the dashboard groups by name, and
tree reductions on the workers."""
from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import HSW2VError, param
from ..settings import CONNECT_SECONDS


def _distributed():
    try:
        import distributed
    except ImportError:
        raise HSW2VError(f"{param('engine', 'dask')} needs dask.distributed: pip install 'dask[distributed]'") from None
    return distributed


@contextmanager
def connect(client: Any = None, scheduler: str | None = None,
            workers: int | None = None) -> Iterator[Any]:
    """A Dask client: ``client`` as it is (never closed), one connected to
    ``scheduler``, or one of a new ``LocalCluster`` of ``workers`` processes on
    127.0.0.1 (both closed at the end)."""
    if client is not None:
        yield client
        return
    distributed = _distributed()
    if scheduler:
        try:
            c = distributed.Client(scheduler, timeout=f"{CONNECT_SECONDS}s")
        except (OSError, TimeoutError, ValueError) as e:
            raise HSW2VError(f"cannot reach the Dask scheduler at {scheduler}: "
                             f"{' '.join(str(e).split()) or type(e).__name__}") from None
        with _quiet(c), _closed_unless_interrupted(c):
            yield c
        return
    if not workers or workers < 1:
        raise HSW2VError(f"{param('engine', 'dask')} needs {param('scheduler')} ADDRESS or {param('workers')} N (N ≥ 1)")
    quiet = "ignore::UserWarning:multiprocessing.resource_tracker"
    if quiet not in sys.warnoptions:  # passed on to the tracker of the worker processes,
        sys.warnoptions.append(quiet)  # which would warn of their semaphores after Ctrl-C
    # The workers' scratch space ($TMPDIR/dask-scratch-space by default, left behind)
    # is a directory of the run's own, removed at the end.
    with tempfile.TemporaryDirectory(prefix=f".hsw2v-{os.getpid()}-dask-",
                                     ignore_cleanup_errors=True) as scratch:
        import dask

        with _environ_restored(), dask.config.set({"temporary-directory": scratch}):
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                               processes=True, host="127.0.0.1",
                                               dashboard_address=":0", local_directory=scratch,
                                               silence_logs=logging.CRITICAL)
            client = distributed.Client(cluster)
            with (_quiet(client), _closed_unless_interrupted(cluster),
                  _closed_unless_interrupted(client) as c):
                yield c


@contextmanager
def _environ_restored() -> Iterator[None]:
    """``os.environ`` as it was once the block ends: a LocalCluster's nannies set
    their workers' variables (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED``,
    ``MALLOC_TRIM_THRESHOLD_``, …) in this process's own environment, where every
    later child process of the caller would inherit them."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for name in [name for name in os.environ if name not in saved]:
            del os.environ[name]
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextmanager
def _quiet(client: Any) -> Iterator[None]:
    """A client of the run's own, without the client's chatter on stderr: its
    warnings (``Couldn't gather 1 keys, rescheduling`` when a worker dies; the run
    says what it means in one line) and, when it closes on a cluster that lost its
    workers, asyncio's report of the gathers it ended (``Task exception was never
    retrieved … AllExit``, a traceback)."""
    log = logging.getLogger("distributed.client")
    level = log.level
    log.setLevel(logging.ERROR)
    loop = getattr(getattr(client, "loop", None), "asyncio_loop", None)
    if loop is not None:
        loop.set_exception_handler(_drop_ended_gathers)
    try:
        yield
    finally:
        log.setLevel(level)


def _drop_ended_gathers(loop: Any, context: dict) -> None:
    """An asyncio exception handler that leaves out the gathers a closing client
    ended (``AllExit``, or cancelled) and reports everything else as asyncio would."""
    error = context.get("exception")
    if type(error).__name__ == "AllExit" or isinstance(error, asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


@contextmanager
def _closed_unless_interrupted(thing: Any) -> Iterator[Any]:
    """``thing``, closed at the end, unless Ctrl-C or SIGTERM ends the run: closing
    then could wait on busy workers, and the process is about to end (a
    LocalCluster's worker processes end with it)."""
    try:
        yield thing
    except KeyboardInterrupt:
        raise
    except BaseException:
        thing.close()
        raise
    thing.close()


def task_key(name: str) -> str:
    """A task key that the dashboard groups under ``name``."""
    return f"{name}-{uuid.uuid4().hex}"


def tree_reduce(client: Any, func, futures: list, name: str):
    """``func`` over the futures pairwise, level by level, in their order."""
    while len(futures) > 1:
        paired = [client.submit(func, a, b, key=task_key(name)) for a, b in zip(futures[::2], futures[1::2])]
        futures = paired + futures[len(futures) - len(futures) % 2:]
    return futures[0]
