"""hsw2v.distributed.cluster: a client of a LocalCluster of its own (worker processes on
127.0.0.1, its scratch space removed, closed at the end) or one given, errors in one
line, task keys, and tree reductions in order on a real cluster."""
from __future__ import annotations

import asyncio
import json
import logging
import operator
import os
import re
import subprocess
import sys
import tempfile

import pytest

from hsw2v.distributed.cluster import (
    _closed_unless_interrupted,
    _drop_ended_gathers,
    connect,
    task_key,
    tree_reduce,
)
from hsw2v.errors import HSW2VError

from tests.distributed.test_driver import write_shards
from tests.helpers import REPO, run_hsw2v

distributed = pytest.importorskip("distributed")


def test_a_local_cluster_of_worker_processes_closed_at_the_end(tmp_path, monkeypatch):
    """``workers`` processes (not this one) on 127.0.0.1, their scratch space in a
    directory of the run's own under the temporary directory, gone at the end with
    the client and the cluster; a client given is used as it is and left open; and
    ``tree_reduce`` combines any number of futures in their order, as ``functools``
    would, under keys grouped by its name."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with connect(workers=2) as client:
        client.wait_for_workers(2, timeout=60)
        [scratch] = os.listdir(tmp_path)
        assert scratch.startswith(f".hsw2v-{os.getpid()}-dask-")
        pids = client.run(os.getpid)
        assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
        assert all(address.startswith("tcp://127.0.0.1:") for address in pids)
        with connect(client=client, workers=5) as given:
            assert given is client
        assert client.status == "running"
        for n in range(1, 10):
            futures = [client.submit(str, i, key=task_key("digit")) for i in range(n)]
            total = tree_reduce(client, operator.add, futures, "join")
            assert total.result(timeout=60) == "".join(str(i) for i in range(n))
            assert total.key.startswith("join-" if n > 1 else "digit-")
    assert client.status == "closed"
    assert os.listdir(tmp_path) == []


def test_without_workers_or_a_scheduler_is_one_error():
    for workers in (None, 0, -1):
        with pytest.raises(HSW2VError, match="needs scheduler ADDRESS or workers N"):
            with connect(workers=workers):
                pass


def test_task_keys_group_by_name_and_never_repeat():
    keys = [task_key("train-round") for _ in range(1000)]
    assert all(re.fullmatch(r"train-round-[0-9a-f]{32}", k) for k in keys)
    assert len(set(keys)) == len(keys)


class Closable:
    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


def test_closed_at_the_end_unless_interrupted():
    """Closed once after the block, and after an error in it; left open by Ctrl-C."""
    thing = Closable()
    with _closed_unless_interrupted(thing) as same:
        assert same is thing and not thing.closed
    assert thing.closed == 1
    for error, closed in ((ValueError, 1), (SystemExit, 1), (KeyboardInterrupt, 0)):
        thing = Closable()
        with pytest.raises(error):
            with _closed_unless_interrupted(thing):
                raise error()
        assert thing.closed == closed, error


def test_ended_gathers_are_dropped_and_other_errors_reported(caplog):
    """The exception handler leaves out distributed's ``AllExit`` and cancellations, and
    logs anything else as asyncio's own handler does."""
    from distributed.client import AllExit

    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            _drop_ended_gathers(loop, {"message": "ended", "exception": AllExit()})
            _drop_ended_gathers(loop, {"message": "ended", "exception": asyncio.CancelledError()})
            assert caplog.records == []
            _drop_ended_gathers(loop, {"message": "a real failure", "exception": OSError("disk")})
        [record] = caplog.records
        assert "a real failure" in record.getMessage()
    finally:
        loop.close()


def test_a_local_cluster_leaves_nothing_in_tmpdir(tmp_path):
    """A LocalCluster's workers keep their scratch space in a directory of the run's
    own, removed at the end (Dask's default, $TMPDIR/dask-scratch-space, stayed)."""
    write_shards(tmp_path / "shards", n=2)
    (tmp_path / "tmp").mkdir()
    result = run_hsw2v(tmp_path, "train", str(tmp_path / "shards"), "--engine", "dask",
                       "--workers", "1", "--threads", "1", "--min-count", "1", "--dim", "8",
                       "--epochs", "1", "--quiet", "-o", "v.txt",
                       env={"TMPDIR": str(tmp_path / "tmp")})
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_local_cluster_leaves_this_processs_environment_as_it_was():
    """In a fresh process (whose environment no earlier cluster has touched): the
    nannies of a LocalCluster set their workers' variables (OMP_NUM_THREADS,
    PYTHONHASHSEED, …) in the environment of the process that starts them; once
    ``connect`` ends, that environment is the one before, and the workers had theirs."""
    script = (
        "import json, os\n"
        "from hsw2v.distributed.cluster import connect\n"
        "before = dict(os.environ)\n"
        "with connect(workers=1) as client:\n"
        "    inside = dict(os.environ)\n"
        "    workers = list(client.run(lambda: dict(os.environ)).values())\n"
        "print(json.dumps([before, inside, dict(os.environ), workers]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    before, inside, after, workers = json.loads(done.stdout.splitlines()[-1])
    assert after == before
    set_inside = {k: v for k, v in inside.items() if before.get(k) != v}
    assert len(workers) == 1 and all(workers[0].get(k) == v for k, v in set_inside.items())
