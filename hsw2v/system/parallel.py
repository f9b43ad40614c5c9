"""Work on a stream in threads, results in the stream's order: for numba kernels
that release the GIL (scoring held-out text, the semantic trees' context sums)."""
from __future__ import annotations

import queue
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
