"""Training on Dask, with real clusters: a LocalCluster of worker processes, and
`dask scheduler` / `dask worker` subprocesses on 127.0.0.1."""
from __future__ import annotations

import gzip
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hsw2v
from hsw2v.text.reader import BLOCK_BYTES, Slice, iter_blocks, slice_block_bytes

from tests.helpers import REPO, hsw2v_command, one_line_error, planted_corpus, run_hsw2v

distributed = pytest.importorskip("distributed")

QUICK = {"min_count": 1, "dim": 16, "epochs": 3, "sample": 0, "seed": 3, "progress": False,
         "tree": "huffman"}  # (as on Dask; CBOW's default tree is learned locally only)


def write_shards(directory, n: int = 3, **corpus) -> tuple[list[str], list[list[str]], str]:
    """The planted corpus as ``n`` shards (the last gzipped); their paths, the word
    groups, and the whole text."""
    text, groups = planted_corpus(**corpus)
    lines = text.splitlines(keepends=True)
    directory.mkdir()
    paths = []
    for i in range(n):
        part = "".join(lines[i * len(lines) // n:(i + 1) * len(lines) // n])
        path = directory / (f"shard{i}.txt.gz" if i == n - 1 else f"shard{i}.txt")
        if i == n - 1:
            path.write_bytes(gzip.compress(part.encode()))
        else:
            path.write_text(part)
        paths.append(str(path))
    return paths, groups, text


def neighbour_accuracy(model, groups) -> float:
    group_of = {w: g for g, words in enumerate(groups) for w in words}
    hits = [group_of[o] == g for w, g in group_of.items() for o, _ in model.most_similar(w, topn=3)]
    return sum(hits) / len(hits)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        yield client


def test_slices_cover_a_file_exactly_once(tmp_path):
    """Byte ranges cut anywhere, even inside words, give each word exactly once."""
    rng = np.random.default_rng(0)
    words = [("x" * int(rng.integers(1, 9))) + str(i) for i in range(3000)]
    seps = rng.choice([" ", "\n", "  ", "\t"], size=len(words))
    text = "".join(w + s for w, s in zip(words, seps))
    path = tmp_path / "t.txt"
    path.write_text(text)
    for n in (1, 2, 7, 100):
        cuts = [len(text) * k // n for k in range(n + 1)]
        got = [w for a, b in itertools.pairwise(cuts)
               for w in b"".join(iter_blocks(Slice(str(path), a, b), 1024)).split()]
        assert got == text.encode().split(), n


def test_a_slice_has_blocks_for_each_thread(tmp_path):
    """A worker with several threads reads a slice in blocks small enough that each
    thread has some (at the reader's size, this 800 KB slice is a single block, which
    one thread would train alone), with the same words in the same order; with one
    thread, in the reader's blocks."""
    path = tmp_path / "t.txt"
    path.write_text(" ".join(f"w{i % 5000}" for i in range(200_000)))
    part = Slice(str(path), 100_000, 900_000)
    [whole] = iter_blocks(part)
    assert slice_block_bytes(part, 1) == BLOCK_BYTES
    for threads in (2, 8):
        blocks = list(iter_blocks(part, slice_block_bytes(part, threads)))
        assert len(blocks) >= 2 * threads
        assert b"".join(blocks).split() == whole.split()


def test_two_workers_train_as_well_as_one_machine(tmp_path, cluster):
    """2 worker processes, rounds of 2,000 words: the vocabulary is the local one,
    exactly, and the planted groups are found as well as by local training."""
    paths, groups, _ = write_shards(tmp_path / "shards", n=3)
    local = hsw2v.train(paths, threads=2, **QUICK)
    spread = hsw2v.train(paths, engine="dask", client=cluster, round_words=2000, threads=1, **QUICK)
    assert spread.words == local.words
    assert np.array_equal(spread.vocab.counts, local.vocab.counts)
    assert np.array_equal(spread.tree.children, local.tree.children)
    assert neighbour_accuracy(local, groups) >= 0.95
    assert neighbour_accuracy(spread, groups) >= 0.95
    assert abs(spread.epoch_loss[-1] - local.epoch_loss[-1]) < 0.15
    assert spread.epoch_loss[-1] < spread.epoch_loss[0]
    assert cluster.status == "running"  # a client passed in is not closed
    from hsw2v.distributed import rounds

    held = cluster.run(lambda: len(rounds._RESIDENT) + len(rounds._REPLICAS) + len(rounds._RUNS))
    assert set(held.values()) == {0}  # the workers let go of the run's weights


def test_node_biases_train_on_workers(tmp_path, cluster):
    """--node-bias on 2 workers: the replicas train and exchange the bias column with
    the node rows, and the model learns the planted groups as local training does,
    to about the same loss."""
    paths, groups, _ = write_shards(tmp_path / "shards", n=2)
    local = hsw2v.train(paths, threads=1, node_bias=True, **QUICK)
    spread = hsw2v.train(paths, engine="dask", client=cluster, round_words=2000, threads=1,
                         node_bias=True, **QUICK)
    assert spread.settings.node_bias and spread.node_vectors.shape == local.node_vectors.shape
    assert np.abs(spread.node_vectors[:, -1]).max() > 0.1  # the biases moved
    assert neighbour_accuracy(spread, groups) >= 0.95
    assert abs(spread.epoch_loss[-1] - local.epoch_loss[-1]) < 0.15


def test_workers_read_url_shards(tmp_path, cluster, http_server):
    """Shards given as http:// URLs (a server on 127.0.0.1) are read by the workers:
    the vocabulary of the local files, and the planted groups found."""
    pytest.importorskip("fsspec")
    root, base = http_server
    paths, groups, _ = write_shards(root / "shards", n=2)
    urls = [f"{base}/shards/{os.path.basename(p)}" for p in paths]
    spread = hsw2v.train(urls, engine="dask", client=cluster, round_words=2000, threads=1, **QUICK)
    local = hsw2v.train(paths, threads=1, **QUICK)
    assert spread.words == local.words
    assert neighbour_accuracy(spread, groups) >= 0.95


def test_a_killed_worker_changes_nothing(tmp_path):
    """Killing a worker process (SIGKILL, by PID) in the middle of training: the run
    finishes, and since every task is a pure function of its inputs, with the very
    vectors of a run that lost nothing."""
    paths, _, _ = write_shards(tmp_path / "shards", n=2, sentences=4000)
    options = {**QUICK, "epochs": 4, "threads": 1}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        whole = hsw2v.train(paths, engine="dask", client=client, round_words=1500, **options)
        result, errors = {}, []

        def run() -> None:
            try:
                result["model"] = hsw2v.train(paths, engine="dask", client=client,
                                              round_words=1500, **options)
            except BaseException as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        def applied() -> set:  # the replicas' changes held
            return {k for keys in client.has_what().values() for k in keys
                    if str(k).startswith("train-round")}

        before = applied()  # (keys of the first run may linger a moment)
        thread = threading.Thread(target=run)
        thread.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not applied() - before:
            time.sleep(0.02)
        pids = client.run(os.getpid)
        assert thread.is_alive()  # training is under way
        os.kill(pids[min(pids)], signal.SIGKILL)
        thread.join(300)
        assert not errors, errors
        assert np.array_equal(result["model"].vectors, whole.vectors)
        assert np.array_equal(result["model"].node_vectors, whole.node_vectors)


def test_what_the_client_sends_survives_the_worker_holding_it(tmp_path):
    """The job (vocabulary, tree, settings) goes to the cluster as a task's result,
    not as scattered data: killing the only worker that holds it (SIGKILL), a task
    needing it still gets it. Scattered data would be lost for good, as a killed
    worker once took the run's only copy of the job (Dask's memory manager keeps
    one copy of data no waiting task needs)."""
    from hsw2v.distributed.driver import on_cluster

    value = {"words": [f"w{i}" for i in range(1000)], "array": np.arange(10_000)}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        client.wait_for_workers(2)
        future = on_cluster(client, value, "job")
        distributed.wait(future)
        [holder] = client.who_has(future)[future.key]
        os.kill(client.run(os.getpid, workers=[holder])[holder], signal.SIGKILL)
        size = client.submit(lambda v: len(v["words"]) + int(v["array"].sum()), future)
        assert size.result(timeout=120) == 1000 + int(np.arange(10_000).sum())


DASK = [os.path.join(os.path.dirname(sys.executable), "dask")]
if not os.path.exists(DASK[0]):
    DASK = [sys.executable, "-m", "dask"]
QUIET = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


def start_scheduler(directory) -> tuple[subprocess.Popen, str]:
    """A `dask scheduler` process on 127.0.0.1, and its address."""
    info = directory / "scheduler.json"
    proc = subprocess.Popen([*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                             "--no-dashboard", "--scheduler-file", str(info)], **QUIET)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # (dask writes the file in place: it may be half there)
        try:
            return proc, json.loads(info.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("the dask scheduler wrote no address in 60 s")


@pytest.fixture(scope="module")
def scheduler_address(tmp_path_factory):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1."""
    procs = []
    try:
        scheduler, address = start_scheduler(tmp_path_factory.mktemp("cluster"))
        procs.append(scheduler)
        procs += [subprocess.Popen([*DASK, "worker", address, "--nthreads", "1", "--nworkers", "1",
                                    "--host", "127.0.0.1", "--no-dashboard"], **QUIET)
                  for _ in range(2)]
        with distributed.Client(address) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)


def test_a_scheduler_without_workers_is_one_line(tmp_path):
    """`--scheduler` naming a scheduler that has no workers: one line, once the wait
    for a first worker ends, and no output."""
    write_shards(tmp_path / "shards", n=2)
    scheduler, address = start_scheduler(tmp_path)
    try:
        line = one_line_error(run_hsw2v(tmp_path, "train", str(tmp_path / "shards"), "--engine",
                                        "dask", "--scheduler", address, "-o", "v.txt"))
    finally:
        scheduler.terminate()
        scheduler.wait(30)
    assert "the Dask cluster has no workers" in line
    assert not (tmp_path / "v.txt").exists()


def test_scheduler_and_workers_started_apart(tmp_path, scheduler_address):
    """`hsw2v train --engine dask --scheduler ADDRESS` in a real process, on a
    cluster of `dask scheduler` and `dask worker` processes."""
    _, groups, _ = write_shards(tmp_path / "shards", n=2)
    result = run_hsw2v(tmp_path, "train", str(tmp_path / "shards"), "--engine", "dask",
                       "--scheduler", scheduler_address, "--min-count", "1", "--dim", "16",
                       "--epochs", "3", "--sample", "0", "--round-words", "3000",
                       "-o", "v.txt", "--save-model", "m.npz")
    assert result.returncode == 0, result.stderr
    said = [line for line in result.stderr.splitlines() if "warning" in line]
    assert said == ["hsw2v: warning: --engine dask trains cbow on a Huffman tree: its default "
                    "semantic tree is learned only with --engine local"]  # (CBOW's default tree)
    model = hsw2v.load_model(str(tmp_path / "m.npz"))
    assert model.tree.kind == "huffman" and model.settings.epochs == 3
    assert neighbour_accuracy(model, groups) >= 0.95
    assert hsw2v.read_vectors(str(tmp_path / "v.txt")).words == model.words


def test_a_killed_client_resumes_from_its_checkpoint(tmp_path, scheduler_address):
    """The client (hsw2v train) killed with SIGKILL after its first checkpoint, then
    `--resume`: the same vectors, bit for bit, as a run that was never stopped."""
    write_shards(tmp_path / "shards", n=2, sentences=6000)
    args = ["train", str(tmp_path / "shards"), "--engine", "dask", "--scheduler",
            scheduler_address, "--min-count", "1", "--dim", "16", "--epochs", "6", "--sample",
            "0", "--round-words", "2000", "--threads", "1", "--quiet"]
    whole = run_hsw2v(tmp_path, *args, "--save-model", "whole.npz")
    assert whole.returncode == 0, whole.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([*hsw2v_command(), *args, "--save-model", "cut.npz",
                             "--checkpoint", "run.ckpt.npz", "--checkpoint-every", "0"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (tmp_path / "run.ckpt.npz").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    assert not (tmp_path / "cut.npz").exists()  # it died before the end
    resumed = run_hsw2v(tmp_path, *args, "--save-model", "cut.npz", "--resume", "run.ckpt.npz")
    assert resumed.returncode == 0, resumed.stderr
    a, b = hsw2v.load_model(str(tmp_path / "whole.npz")), hsw2v.load_model(str(tmp_path / "cut.npz"))
    assert np.array_equal(a.vectors, b.vectors)
    assert np.array_equal(a.node_vectors, b.node_vectors)
    local = one_line_error(run_hsw2v(tmp_path, "train", str(tmp_path / "shards"),
                                     "--resume", "run.ckpt.npz"))
    assert "resume it with --engine dask" in local


def test_ctrl_c_ends_a_dask_run_at_once(tmp_path):
    """Ctrl-C (SIGINT) while a LocalCluster trains: exit 130 within seconds, one
    line after the progress bar, no output written, and the worker processes
    end with the run."""
    import psutil

    write_shards(tmp_path / "shards", n=2, sentences=20000)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # A shell starts background jobs with SIGINT ignored, and a child inherits that;
    # a handler here is reset to the default in the child instead.
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([*hsw2v_command(), "train", str(tmp_path / "shards"), "--engine",
                                 "dask", "--workers", "2", "--min-count", "1", "--dim", "16",
                                 "--epochs", "200", "--round-words", "3000", "-o", "v.txt"],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, ignored)
    try:
        deadline = time.monotonic() + 120
        children: list = []
        while len(children) < 2 and time.monotonic() < deadline:  # the 2 workers are up
            children = [c for c in psutil.Process(proc.pid).children(recursive=True)
                        if "resource_tracker import" not in " ".join(c.cmdline())]
            time.sleep(0.2)
        assert len(children) >= 2
        time.sleep(3)
        assert proc.poll() is None  # still training
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and time.monotonic() - start < 10
    lines = [ln for ln in err.decode().replace("\r", "\n").splitlines()
             if ln.strip() and not ln.startswith("train")
             and not (ln.startswith("hsw2v: ") and not ln.startswith("hsw2v: error: "))]
    assert lines == ["hsw2v: error: interrupted"], err.decode()
    assert not (tmp_path / "v.txt").exists()
    _, alive = psutil.wait_procs(children, timeout=20)
    assert not alive


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


def test_dask_errors_are_one_line(tmp_path):
    """A scheduler that is not there, both --scheduler and --workers, --workers
    without --engine dask, a semantic tree, a shard a worker cannot read, and dask
    not installed:
    one line each, no traceback, and nothing written."""
    _paths, _, _ = write_shards(tmp_path / "shards", n=2)
    args = ["train", str(tmp_path / "shards"), "--engine", "dask", "--min-count", "1",
            "--dim", "8", "--epochs", "1", "--tree", "huffman", "-o", "v.txt"]
    line = one_line_error(run_hsw2v(tmp_path, *args, "--scheduler", "tcp://127.0.0.1:9"))
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in line
    line = one_line_error(run_hsw2v(tmp_path, *args, "--scheduler", "tcp://127.0.0.1:9",
                                    "--workers", "2"))
    assert "not several" in line
    line = one_line_error(run_hsw2v(tmp_path, *args[:2], "--workers", "2", "-o", "v.txt"))
    assert "--workers goes with --engine dask" in line
    line = one_line_error(run_hsw2v(tmp_path, *args[:-4], "-o", "v.txt", "--workers", "1",
                                    "--tree", "semantic"))
    assert "--tree semantic is built locally" in line
    (tmp_path / "shards" / "shard9.txt.gz").write_bytes(b"\x1f\x8b\x08\x00 not gzip")
    line = one_line_error(run_hsw2v(tmp_path, *args, "--workers", "2"))
    assert "shard9.txt.gz: cannot read" in line
    fake = tmp_path / "no-dask" / "distributed"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no dask here')\n")
    line = one_line_error(run_hsw2v(tmp_path, *args, "--workers", "2",
                                    env={"PYTHONPATH": str(fake.parent)}))
    assert "pip install 'dask[distributed]'" in line
    assert not (tmp_path / "v.txt").exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_round_changes_against_dense_numpy():
    """A round's sparse changes: combined by ``combine`` (more than 4 workers) they
    sum as dense matrices do; moving the weights by them follows the rule written
    out in numpy; and the worker's resident copy, moved on round by round, has the
    very bits of a copy built from the anchor in one go (a rerun task's)."""
    from types import SimpleNamespace

    from hsw2v.distributed import rounds
    from hsw2v.trees.tree import huffman

    rng = np.random.default_rng(0)
    v, dim = 40, 5
    counts = np.sort(rng.integers(1, 1000, v))[::-1]
    tree = huffman(counts)
    visits = (rng.uniform(0, 50, v), rng.uniform(0, 500, v - 1))
    job = rounds.Job("t", None, tree, SimpleNamespace(threads=1), 0, visits)

    def quantized(n):  # some rows, their steps (one row's largest 127 or -127) and scales
        rows = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int32)
        steps = rng.integers(-127, 128, (len(rows), dim)).astype(np.int8)
        steps[np.arange(len(rows)), rng.integers(0, dim, len(rows))] = 127 * rng.choice([-1, 1], len(rows))
        return rows, steps, rng.uniform(1e-6, 1e-3, len(rows)).astype(np.float32)

    def change(words):
        return rounds.Change(*quantized(v), *quantized(v - 1), words, 1.0, 10)

    def dense(ch, n, which):
        out = np.zeros((n, dim), np.float64)
        rows, steps, scale = ch[3 * which:3 * which + 3]
        out[rows] = steps * scale.astype(np.float64)[:, None]
        return out

    a, b = change(300), change(500)
    both = rounds.combine(a, b)
    assert both.words == 800 and both.replicas == 2
    for which, n in ((0, v), (1, v - 1)):  # the sum, quantized again: within about half a step
        want, got = dense(a, n, which) + dense(b, n, which), dense(both, n, which)
        step = np.abs(want).max(axis=1, keepdims=True) / 127
        assert np.all(np.abs(got - want) <= 0.51 * step)
        assert np.array_equal(np.flatnonzero(step), both[3 * which])
    anchor = rounds.Anchor(0, rng.normal(size=(v, dim)).astype(np.float32),
                           rng.normal(size=(v - 1, dim)).astype(np.float32))
    kept = (anchor.syn0.copy(), anchor.syn1.copy())
    rounds._RESIDENT.clear()
    moved = rounds.weights_at(job, anchor, [[a, b]])
    for which, (w, n) in enumerate(((anchor.syn0, v), (anchor.syn1, v - 1))):
        share = 0.5 + 0.5 / (1 + visits[which] * 800 / rounds.MEAN_VISITS)
        want = w + (dense(a, n, which) + dense(b, n, which)) * share[:, None]
        np.testing.assert_allclose(moved[1 + which], want, rtol=1e-5, atol=1e-6)
    history = [[a, b], [change(200), change(100)], [change(50), change(70)]]
    rounds._RESIDENT.clear()
    for k in range(1, 4):  # round by round, in place
        stepwise = rounds.weights_at(job, anchor, history[:k])
    stepwise = (stepwise.syn0.copy(), stepwise.syn1.copy())
    rounds._RESIDENT.clear()
    at_once = rounds.weights_at(job, anchor, history)
    assert np.array_equal(stepwise[0], at_once.syn0) and np.array_equal(stepwise[1], at_once.syn1)
    assert np.array_equal(anchor.syn0, kept[0]) and np.array_equal(anchor.syn1, kept[1])


def test_work_on_rows_split_among_threads_gives_the_same_bits():
    """A worker with several threads finds and quantizes a replica's changed rows,
    and moves its weights by a round's changes, on all of them at once: the same
    bits as on one thread, and the changed rows those numpy finds."""
    from types import SimpleNamespace

    from hsw2v.distributed import rounds

    rng = np.random.default_rng(1)
    n, dim = 3 * rounds.SPLIT_ROWS + 7, 8
    old = rng.normal(size=(n, dim)).astype(np.float32)
    new = old.copy()
    moved = rng.choice(n, n // 3, replace=False)
    new[moved] += rng.normal(scale=1e-3, size=(len(moved), dim)).astype(np.float32)
    candidates = rng.permutation(n).astype(np.int32)[: n - 5]
    one = rounds._moved(new, old, candidates, 1)
    three = rounds._moved(new, old, candidates, 3)
    np.testing.assert_array_equal(one[0], np.intersect1d(moved, candidates))
    for a, b in zip(one, three):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    change = rounds.Change(*one, *one, 1000, 1.0, 10)
    visits = (rng.uniform(0, 50, n), rng.uniform(0, 500, n))
    anchor = rounds.Anchor(0, old, old)
    results = []
    for threads in (1, 3):
        job = rounds.Job("t", None, None, SimpleNamespace(threads=threads), 0, visits)
        rounds._RESIDENT.clear()
        w = rounds.weights_at(job, anchor, [[change, change]])
        results.append((w.syn0.copy(), w.syn1.copy()))
    rounds._RESIDENT.clear()
    assert not np.array_equal(results[0][0], old)
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


def test_a_round_trains_a_sparse_replica_to_the_change_of_a_full_copy(tmp_path):
    """``train_slice`` copies into its replica only the rows the slice's words can
    read, and compares only those: with every other row of the replica NaN, its
    change is exactly what training a full copy of the weights moves, found by
    comparing the whole matrices in numpy. So is that of a long slice, which
    copies the whole weights."""
    from dataclasses import replace

    from hsw2v.distributed import rounds
    from hsw2v.model.model import Model
    from hsw2v.runs.checkpoint import Position
    from hsw2v.runs.epochs import run_epochs
    from hsw2v.settings import TrainSettings

    from tests.helpers import count_tree

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz") as f:
        words = f.read(200_000).decode().split()[:-1]
    text = "\n".join(" ".join(words[i:i + 30]) for i in range(0, len(words), 30)) + "\n"
    path = tmp_path / "c.txt"
    path.write_text(text)
    counts = hsw2v.counting.corpus.count_words(str(path), threads=1, min_count=1)
    vocab = counts.to_vocab(1, None)
    rng = np.random.default_rng(5)
    dense = rounds.DENSE_WORDS * len(vocab) + 1  # a slice that long copies every row at once
    for arch, words in (("cbow", 700), ("skipgram", 700), ("skipgram", dense)):
        s = TrainSettings(arch=arch, dim=16, window=3, sample=1e-3, threads=1, seed=7,
                          tree="huffman").resolved()
        tree = count_tree(s.tree, vocab.counts, s.seed)
        job = rounds.Job(f"t-{arch}-{words}", vocab, tree, s, 10**6, rounds.row_visits(vocab, tree, s))
        start = rounds.Anchor(0, rng.normal(size=(len(vocab), 16)).astype(np.float32),
                              rng.normal(size=(len(vocab) - 1, 16)).astype(np.float32))
        part = Slice(str(path), len(text) // 3, len(text) // 3 + 4000)  # a few sentences
        rounds._RESIDENT.clear()
        rounds._REPLICAS.clear()
        rounds._REPLICAS[job.token] = (np.full_like(start.syn0, np.nan), np.full_like(start.syn1, np.nan))
        got = rounds.train_slice(job, start, [], part, 1, 5000, words, 3)

        full = Model(vocab, tree, start.syn0.copy(), start.syn1.copy(), replace(s, epochs=2))
        seeds = np.random.SeedSequence([s.seed, 1, 3]).generate_state(1, np.uint64)
        at = Position(words, exact=False, epoch=1, words=5000, loss_sum=[0.0, 0.0], examples=[0, 0],
                      rng=[int(x) for x in seeds])
        run_epochs(part, full, full.settings, False, at, schedule=10**6)
        for (rows, steps, scale), new, old in ((got[0:3], full.vectors, start.syn0),
                                               (got[3:6], full.node_vectors, start.syn1)):
            want = np.flatnonzero((new != old).any(axis=1))
            assert 0 < len(want) < len(old) // 2
            np.testing.assert_array_equal(rows, want)
            moves = (new[want] - old[want]).astype(np.float64)  # as int8 steps of each row's
            biggest = np.abs(moves).max(axis=1)  # largest move / 127, rounded to the nearest
            np.testing.assert_allclose(scale, biggest / 127, rtol=1e-6)
            assert steps.dtype == np.int8 and np.all(np.abs(steps).max(axis=1) == 127)
            assert np.all(np.abs(steps * scale[:, None].astype(np.float64) - moves)
                          <= 0.51 * scale[:, None])
        assert got.loss_sum == at.loss_sum[1] and got.words == at.words - 5000
    rounds._REPLICAS.clear()


def test_later_epochs_of_a_slice_read_the_workers_spool(tmp_path):
    """A slice that trains again in a later epoch is kept in the worker's spool as
    its text is encoded, and read back from there: after the text is overwritten
    (other words, same bytes), the slice's second epoch changes the weights
    exactly as on the original text, and differently from a worker without a
    spool (``--no-spool``) reading the new text."""
    from dataclasses import replace

    from hsw2v.distributed import rounds
    from hsw2v.settings import TrainSettings

    from tests.helpers import count_tree

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz") as f:
        words = f.read(400_000).decode().split()[:-1]
    text = "\n".join(" ".join(words[i:i + 30]) for i in range(0, len(words) // 2, 30)) + "\n"
    other = "\n".join(" ".join(words[i:i + 30]) for i in range(len(words) // 2, len(words), 30))
    path = tmp_path / "c.txt"
    path.write_text(text)
    vocab = hsw2v.counting.corpus.count_words(str(path), threads=1, min_count=1).to_vocab(1, None)
    s = TrainSettings(arch="cbow", dim=16, window=3, sample=0, threads=1, seed=7, epochs=3,
                      min_count=1, tree="huffman").resolved()
    tree = count_tree(s.tree, vocab.counts, s.seed)
    rng = np.random.default_rng(5)
    start = rounds.Anchor(0, rng.normal(size=(len(vocab), 16)).astype(np.float32),
                          rng.normal(size=(len(vocab) - 1, 16)).astype(np.float32))
    part = Slice(str(path), 1000, len(text) - 1000)  # many blocks' worth of sentences
    changes = {}
    for spool in (True, False):
        job = rounds.Job(f"spool-{spool}", vocab, tree, replace(s, spool=spool), 10**6,
                         rounds.row_visits(vocab, tree, s))
        path.write_text(text)
        first = rounds.train_slice(job, start, [], part, 0, 0, 40_000, 3)
        run = rounds._RUNS[job.token]
        assert (part in run.spool.where) if spool else run.spool is None
        path.write_text((other + " " * len(text))[:len(text) - 1] + "\n")  # same bytes, other words
        changes[spool] = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
        rounds.release(job.token)
    path.write_text(text)
    rounds._RUNS.clear()  # a worker that never saw the slice reads its text
    again = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
    rounds.release(job.token)
    assert first.words > 10_000
    for a, b in zip(changes[True], again):
        np.testing.assert_array_equal(a, b)
    assert changes[False].words != again.words or changes[False].loss_sum != again.loss_sum

    # A spool given up (its file deleted, as when a write finds the disk full) gives
    # the same change from the text.
    job = rounds.Job("given-up", vocab, tree, s, 10**6, rounds.row_visits(vocab, tree, s))
    rounds.train_slice(job, start, [], part, 0, 0, 40_000, 3)
    rounds._RUNS[job.token].spool.tokens.file.close()
    given_up = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
    rounds.release(job.token)
    for a, b in zip(given_up, again):
        np.testing.assert_array_equal(a, b)


def test_a_slice_spool_gives_back_its_blocks_and_falls_back_to_the_text():
    """Blocks of word ids (up to 4 bytes as codes, sentences of any length, empty blocks)
    come back from :class:`hsw2v.counting.corpus.SliceSpool` as they went in, slice by slice
    and in any order; a spool whose file goes mid-read gives the rest from the text."""
    from hsw2v.distributed.spool import SliceSpool

    rng = np.random.default_rng(3)
    words = 1 << 22

    def block(n):
        ids = rng.integers(0, words if n % 2 else 90, n).astype(np.int32)
        ends = np.unique(np.append(rng.integers(1, n + 1, rng.integers(0, 9)), n)).astype(np.int64)
        return ids, ends[ends > 0]

    slices = {name: [block(n) for n in rng.integers(0, 5000, 6)] for name in ("a", "c")}
    slices["b"] = [block(1_500_001) for _ in range(4)]  # 6 MB each, past the 4 MB reads
    spool = SliceSpool(words)
    for name, blocks in sorted(slices.items()):
        assert len(list(spool.blocks(name, lambda b=blocks: iter(b), again=True))) == len(blocks)
    for name in ("c", "a", "b"):
        got = list(spool.blocks(name, lambda: pytest.fail("read the text"), again=True))
        assert len(got) == len(slices[name])
        for (ids, ends), (want_ids, want_ends) in zip(got, slices[name]):
            np.testing.assert_array_equal(ids, want_ids)
            np.testing.assert_array_equal(ends, want_ends)
    texts = []
    reading = spool.blocks("b", lambda: texts.append(1) or iter(slices["b"]), again=True)
    got = [next(reading), next(reading)]
    spool.tokens.file.close()  # as a failed write does
    got += list(reading)
    assert len(got) == len(slices["b"]) and texts == [1]
    for (ids, ends), (want_ids, want_ends) in zip(got, slices["b"]):
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(ends, want_ends)


def test_reach_lists_the_nodes_on_every_code_of_a_word():
    """A word's inner-node rows in :func:`hsw2v.distributed.rounds.reach` are those on each of
    its codes' paths (walked up from the leaves in Python here), also when words
    have several codes; its word rows are the word itself."""
    from hsw2v.counting.vocab import Vocab
    from hsw2v.distributed import rounds
    from hsw2v.trees.tree import Tree, huffman

    several = Tree(np.array([[0, 4], [1, 5], [2, 3], [6, 7], [8, 9]]), "test", np.array([0, 2]))
    for tree in (huffman(np.array([9, 7, 5, 4, 2, 1])), several):
        v, leaves = tree.n_words, tree.n_leaves
        vocab = Vocab([f"w{i}" for i in range(v)], np.arange(v, 0, -1) * 10)
        got = rounds.reach(vocab, tree)
        parent = {int(c): a for a, pair in enumerate(tree.children) for c in pair}
        for w in range(v):
            want = []
            for leaf in [w] + [v + j for j, x in enumerate(tree.extra_leaves) if x == w]:
                node = leaf
                while node in parent:
                    want.append(parent[node])
                    node = leaves + parent[node]
            (o0, i0), (o1, i1) = got.words, got.nodes
            assert list(i0[o0[w]:o0[w + 1]]) == [w]
            assert sorted(i1[o1[w]:o1[w + 1]]) == sorted(want), (tree.kind, w)
        assert sorted(got.hot) == list(range(leaves - 1))  # fewer than HOT_NODES: all


def test_the_default_round_length_follows_the_corpus():
    """Unless told, a round is the kind's length, but an epoch gives at least 32 of
    them (a 2M-word corpus trained 3 rounds a worker an epoch and lost quality: see
    the Dask benchmarks page), and none is shorter than 1,000 words."""
    from hsw2v.distributed.driver import default_round_words
    from hsw2v.settings import TrainSettings
    from hsw2v.training.kinds import model_kinds

    for name, kind in model_kinds.items():
        s = TrainSettings(arch=name).resolved()
        assert default_round_words(s, 2_000_000) == min(kind.round_words, 62_500)
        assert default_round_words(s, 10**10) == kind.round_words
        assert default_round_words(s, 5_000) == 1_000


def test_losing_the_last_worker_ends_the_run_with_one_line(tmp_path):
    """An external cluster's only worker dies mid-run: the client waits
    HSW2V_DASK_WORKER_WAIT seconds for another, then ends with one line; the
    checkpoint it saved before stays, and loads."""
    from hsw2v.runs.checkpoint import load_checkpoint

    write_shards(tmp_path / "shards", n=2, sentences=6000)
    scheduler, address = start_scheduler(tmp_path)
    worker = subprocess.Popen([*DASK, "worker", address, "--nthreads", "1", "--no-nanny",
                               "--host", "127.0.0.1", "--no-dashboard"], **QUIET)
    try:  # (no nanny: it would start the worker again)
        with distributed.Client(address) as client:
            client.wait_for_workers(1, timeout=60)
        pid = worker.pid
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["HSW2V_DASK_WORKER_WAIT"] = "3"
        proc = subprocess.Popen([*hsw2v_command(), "train", str(tmp_path / "shards"), "--engine",
                                 "dask", "--scheduler", address, "--min-count", "1", "--dim", "16",
                                 "--epochs", "500", "--round-words", "2000", "--threads", "1",
                                 "--tree", "huffman",
                                 "--checkpoint", "ck.npz", "--checkpoint-every", "0",
                                 "-o", "v.txt"],
                                cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not (tmp_path / "ck.npz").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert (tmp_path / "ck.npz").exists()
        os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=90)
    finally:
        for p in (worker, scheduler):
            p.kill()
            p.wait(30)
    result = subprocess.CompletedProcess(proc.args, proc.returncode, "", err.decode())
    line = one_line_error(result)
    assert "lost its last worker" in line and "3 s" in line
    assert not (tmp_path / "v.txt").exists()
    model, position = load_checkpoint(str(tmp_path / "ck.npz"))
    assert position.words > 0 and np.isfinite(model.vectors).all()
