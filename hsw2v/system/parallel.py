"""Work on a stream in threads: results in the stream's order, for numba kernels
that release the GIL (scoring held-out text, the semantic trees' context sums);
a stream read ahead by a thread of its own (``read_ahead``); and a queue's lock
checked after a signal (``lock_free``)."""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def ordered_map(make_worker: Callable[[], Callable[[Item], Result]], items: Iterable[Item],
                threads: int) -> Iterator[tuple[Item, Result]]:
    """Each item with its result, in the items' order, computed by ``threads``
    workers at once; ``make_worker()`` makes one worker (a function with scratch of
    its own), and each thread uses one at a time. At most ``2·threads`` items are
    in flight, so a long stream never sits in memory."""
    workers: queue.SimpleQueue = queue.SimpleQueue()
    for _ in range(threads):
        workers.put(make_worker())

    def run(item: Item) -> Result:
        worker = workers.get()
        try:
            return worker(item)
        finally:
            workers.put(worker)

    with ThreadPoolExecutor(threads) as pool:
        waiting: deque[tuple[Item, Any]] = deque()
        for item in items:
            waiting.append((item, pool.submit(run, item)))
            if len(waiting) > 2 * threads:
                done, future = waiting.popleft()
                yield done, future.result()
        while waiting:
            done, future = waiting.popleft()
            yield done, future.result()


def start_threads(threads: list[threading.Thread], what: str, fewer: bool = False) -> int:
    """Start ``threads`` in turn; returns how many started. Where the system lets no
    more start (``ulimit -u``, a pids cgroup: "can't start new thread"), with
    ``fewer`` the work goes on with those started, said in a warning; without, it
    is an HSW2VError in one line (the caller stops those started)."""
    import warnings

    from ..errors import HSW2VError, param

    for k, thread in enumerate(threads):
        try:
            thread.start()
        except RuntimeError as e:
            if fewer:
                warnings.warn(f"{what}: the system let only {k} of {len(threads)} threads start "
                              f"({e}); going on with {k}", RuntimeWarning, stacklevel=2)
                return k
            raise HSW2VError(f"{what}: the system let only {k} of {len(threads)} threads start "
                             f"({e}: a limit on processes, ulimit -u or a pids cgroup); lower "
                             f"{param('threads')}") from None
    return len(threads)


def lock_free(q: queue.Queue, seconds: float = 1.0) -> bool:
    """Whether ``q``'s lock can be taken within ``seconds``. A signal handler that
    raises (Ctrl-C, SIGTERM) just after a ``put`` or ``get`` took that lock, before
    its ``with`` block began, leaves the lock held for good: any later call on the
    queue would wait forever."""
    if q.mutex.acquire(timeout=seconds):
        q.mutex.release()
        return True
    return False


def read_ahead(blocks: Iterator[bytes], depth: int = 2) -> Iterator[bytes]:
    """The same blocks, read (and decompressed) by a background thread while the
    caller works on the previous ones; the reader's exceptions re-raise here."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def reader() -> None:
        try:
            for block in blocks:
                if stop.is_set():
                    return
                q.put(block)
            q.put(done)
        except BaseException as e:  # noqa: BLE001 (handed to the consumer)
            q.put(e)

    thread = threading.Thread(target=reader, daemon=True)
    start_threads([thread], "reading")
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        deadline = time.monotonic() + 1.0  # a reader blocked on input (a pipe) is left:
        while thread.is_alive() and time.monotonic() < deadline and lock_free(q):  # a daemon
            try:
                q.get(timeout=0.05)  # unblock a reader waiting on a full queue
            except queue.Empty:
                pass
