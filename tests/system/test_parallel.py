"""hsw2v.system.parallel: ``ordered_map`` against Python's ``map`` (order, threads at once,
a worker to a thread, a bounded read of the stream), ``read_ahead`` against the stream
it reads, ``start_threads`` where a thread cannot start, and ``lock_free``."""
from __future__ import annotations

import itertools
import queue
import threading
import time
import warnings

import pytest

from hsw2v.errors import HSW2VError
from hsw2v.system.parallel import lock_free, ordered_map, read_ahead, start_threads


def test_ordered_map_is_map_in_order():
    """Each item with its result, in the items' order, for any number of threads,
    however long each item takes."""
    items = list(range(200))

    def make_worker():
        def work(x):
            time.sleep((x * 7919 % 13) / 10_000)  # finishing out of order
            return x * x - 3
        return work

    for threads in (1, 2, 5):
        got = list(ordered_map(make_worker, iter(items), threads))
        assert got == list(zip(items, map(lambda x: x * x - 3, items)))
    assert list(ordered_map(make_worker, [], 3)) == []


def test_ordered_map_runs_threads_at_once_each_with_a_worker_of_its_own():
    """``threads`` items run at the same time (a barrier that only that many threads
    can pass), off the calling thread; ``make_worker`` is called ``threads`` times and
    no worker ever runs two items at once."""
    threads = 3
    barrier = threading.Barrier(threads, timeout=30)
    made, idents = [], set()

    def make_worker():
        busy = threading.Lock()
        made.append(busy)

        def work(x):
            assert busy.acquire(blocking=False), "a worker ran two items at once"
            try:
                idents.add(threading.get_ident())
                if x < threads:
                    barrier.wait()  # the first items wait for each other: all at once
                time.sleep(0.001)
                return -x
            finally:
                busy.release()
        return work

    got = list(ordered_map(make_worker, range(60), threads))
    assert got == [(x, -x) for x in range(60)]
    assert len(made) == threads
    assert threading.get_ident() not in idents and 1 < len(idents) <= threads


def test_ordered_map_reads_a_bounded_way_ahead():
    """An endless stream: when each result comes, at most 2·threads items more have been
    read than given back."""
    pulled = []

    def stream():
        for x in itertools.count():
            pulled.append(x)
            yield x

    results = ordered_map(lambda: (lambda x: x + 1), stream(), 2)
    for k, (item, result) in enumerate(itertools.islice(results, 50)):
        assert (item, result) == (k, k + 1)
        assert len(pulled) - (k + 1) <= 2 * 2
    results.close()


def test_read_ahead_gives_the_same_blocks_and_the_readers_error():
    blocks = [bytes([i]) * (i + 1) for i in range(100)]
    assert list(read_ahead(iter(blocks))) == blocks
    assert list(read_ahead(iter(blocks), depth=1)) == blocks

    def failing():
        yield b"one"
        yield b"two"
        raise OSError("disk gone")

    got = []
    with pytest.raises(OSError, match="disk gone"):
        for block in read_ahead(failing()):
            got.append(block)
    assert got == [b"one", b"two"]


def test_read_ahead_reads_in_another_thread_and_stops_when_left():
    """The stream is read off the calling thread, ahead of the caller; a caller that
    stops early leaves no reader running."""
    readers, read = set(), []

    def stream():
        for i in range(10_000):
            readers.add(threading.get_ident())
            read.append(i)
            yield b"x"

    before = set(threading.enumerate())
    blocks = read_ahead(stream(), depth=2)
    assert next(blocks) == b"x"
    deadline = time.monotonic() + 5
    while len(read) < 3 and time.monotonic() < deadline:  # it reads on while we wait
        time.sleep(0.01)
    assert len(read) >= 3 and threading.get_ident() not in readers
    blocks.close()
    deadline = time.monotonic() + 5
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(threading.enumerate()) - before
    assert len(read) < 100


def test_start_threads_where_a_thread_cannot_start():
    """All started: their number. A thread that cannot start (here one already
    started, which Python refuses as it refuses one past a process limit): with
    ``fewer``, the number started before it and a warning; without, one error."""
    done = threading.Event()

    def threads(n):
        return [threading.Thread(target=done.wait) for _ in range(n)]

    fine = threads(3)
    assert start_threads(fine, "testing") == 3 and all(t.is_alive() for t in fine)
    again = threads(2) + [fine[0]] + threads(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert start_threads(again, "testing", fewer=True) == 2
    [warning] = caught
    assert warning.category is RuntimeWarning
    assert str(warning.message).startswith("testing: the system let only 2 of 4 threads start")
    assert not again[3].is_alive()
    with pytest.raises(HSW2VError) as e:
        start_threads([*threads(1), fine[1]], "reading")
    assert str(e.value).startswith("reading: the system let only 1 of 2 threads start")
    assert "threads" in str(e.value).split(";")[-1]
    done.set()


def test_lock_free_says_whether_a_queues_lock_can_be_taken():
    q = queue.Queue()
    assert lock_free(q, 0.01)
    q.mutex.acquire()
    try:
        start = time.monotonic()
        assert not lock_free(q, 0.2)
        assert time.monotonic() - start >= 0.19
    finally:
        q.mutex.release()
    assert lock_free(q, 0.01)
    q.put(1)
    assert q.get() == 1  # the lock was left as it was found
