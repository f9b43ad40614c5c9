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

from tests.helpers import hsw2v_command, one_line_error, planted_corpus, run_hsw2v

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


@pytest.mark.newest_only
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


@pytest.mark.newest_only
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


@pytest.mark.newest_only
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


@pytest.mark.newest_only
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


def test_a_slice_spool_gives_back_its_blocks_and_falls_back_to_the_text():
    """Blocks of word ids (up to 4 bytes as codes, sentences of any length, empty blocks)
    come back from :class:`hsw2v.distributed.spool.SliceSpool` as they went in, slice by slice
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


@pytest.mark.newest_only
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
