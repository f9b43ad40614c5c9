"""The first run: with a seed and one thread, a run that compiles its kernels afresh
gives the bits of one that loads them from numba's cache; the compile is said and
counted apart; where numba can cache nowhere, one warning and a working run."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from hsw2v.training.kinds import model_kinds

from tests.helpers import REPO, hsw2v_command, run_hsw2v

RUN = ("--dim", "30", "--epochs", "2", "--threads", "1", "--seed", "9", "--min-count", "3")
CASES = [(name, ("--tree", "huffman") if model_kinds[name].language_model else ())
         for name in sorted(model_kinds)] + [  # (lbl's learned tree: as skip-gram's below)
    ("skipgram", ("--tree", "semantic", "--split", "adaptive", "--epsilon", "0.3")),
    ("cbow", ("--node-bias",)),
]


@pytest.fixture(scope="module")
def slice_path(tmp_path_factory) -> Path:
    """The first 60k words of the bundled corpus, as lines of 1,000 words."""
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
        words = f.read(400_000).split()[:60_000]
    path = tmp_path_factory.mktemp("slice") / "slice.txt"
    path.write_text("\n".join(" ".join(words[i:i + 1000]) for i in range(0, len(words), 1000)))
    return path


def _train(tmp_path: Path, cache: Path, name: str, corpus: Path, arch: str, extra, quiet=True):
    out = tmp_path / name
    result = run_hsw2v(tmp_path, "train", str(corpus), "--arch", arch, *RUN, *extra,
                       *(("--quiet",) if quiet else ()), "-o", f"{out}.txt",
                       "--save-model", f"{out}.npz", env={"NUMBA_CACHE_DIR": str(cache)})
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / f"{name}.npz", allow_pickle=False) as arrays:
        model = {k: arrays[k] for k in arrays.files if k != "meta"}
        meta = json.loads(arrays["meta"].tobytes())
    meta["settings"] = {k: v for k, v in meta["settings"].items()  # (how long it took)
                        if not k.endswith("_seconds")}
    model["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    return result, (tmp_path / f"{name}.txt").read_bytes(), model


@pytest.mark.newest_only
@pytest.mark.parametrize(("arch", "extra"), CASES, ids=[" ".join((a, *e)) for a, e in CASES])
def test_same_bits_whether_the_kernels_compile_or_load(tmp_path, slice_path, arch, extra):
    """An empty numba cache: the first run compiles every kernel afresh (children
    compile ahead, the run loads what they cached), and a second run loads them
    all. Both give the same vectors and model, bit for bit."""
    runs = {}
    for turn in ("cold", "warm"):
        runs[turn] = _train(tmp_path, tmp_path / "cache", turn, slice_path, arch, extra)
    first = runs["cold"]
    for key, (_, vectors, model) in runs.items():
        assert vectors == first[1], f"{key}: other vectors than a cold run's"
        assert model.keys() == first[2].keys()
        for name, array in model.items():  # every array of the model file, bit for bit
            assert array.tobytes() == first[2][name].tobytes(), f"{key}: {name} differs"


@pytest.mark.newest_only
def test_a_first_run_says_it_compiles_and_counts_it_apart(tmp_path, slice_path):
    """A cold run tells what it compiles (one line) and gives the compile's seconds
    beside the training's; a warm run says neither."""
    cache = tmp_path / "cache"
    cold, _, _ = _train(tmp_path, cache, "cold", slice_path, "cbow", (), quiet=False)
    warm, _, _ = _train(tmp_path, cache, "warm", slice_path, "cbow", (), quiet=False)
    notices = [line for line in cold.stderr.splitlines() if line.startswith("hsw2v: compiling")]
    assert len(notices) == 1, cold.stderr
    assert "s compiling)" in cold.stderr
    assert "compiling" not in warm.stderr, warm.stderr
    quiet, _, _ = _train(tmp_path, tmp_path / "cache-quiet", "quiet", slice_path, "cbow", ())
    assert quiet.stderr == ""


def test_without_a_writable_cache_one_warning_and_a_working_run(tmp_path):
    """A copy of the package whose ``__pycache__`` cannot be made (a file holds each
    name) and a HOME that cannot be made either: numba has nowhere to cache. The
    command warns, caches in a private directory under $TMPDIR, and works; the next
    run uses that directory and says nothing (once is enough). Then an unwritable
    NUMBA_CACHE_DIR: the warning names the variable it overrides, once."""
    shutil.copytree(REPO / "hsw2v", tmp_path / "pkg" / "hsw2v",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for directory in (tmp_path / "pkg" / "hsw2v").rglob("*"):
        if directory.is_dir():
            (directory / "__pycache__").touch()
    (tmp_path / "pkg" / "hsw2v" / "__pycache__").touch()
    (tmp_path / "home-is-a-file").touch()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "c.txt").write_text("a b c\nb c a\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home-is-a-file" / "home"),
           "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(tmp_path / "pkg")}
    unwritable = str(tmp_path / "home-is-a-file" / "numba")
    runs = [(env, "numba cannot cache"), (env, None),
            ({**env, "NUMBA_CACHE_DIR": unwritable}, f"NUMBA_CACHE_DIR ({unwritable}) is not writable"),
            ({**env, "NUMBA_CACHE_DIR": unwritable}, None)]
    for run_env, said in runs:
        result = subprocess.run([sys.executable, "-m", "hsw2v", "vocab", "c.txt", "--min-count", "1"],
                                cwd=tmp_path, env=run_env, capture_output=True, text=True, timeout=600,
                                check=False)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["a", "2", "b", "2", "c", "2"]
        lines = result.stderr.splitlines()
        warnings = [line for line in lines if line.startswith("hsw2v: warning:")]
        assert len(warnings) == (said is not None), result.stderr
        assert said is None or said in warnings[0], result.stderr
        assert "Traceback" not in result.stderr
    cache = tmp_path / "tmp" / f"hsw2v-numba-{os.getuid()}"
    assert cache.is_dir() and any(cache.rglob("*.nbi"))
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)


@pytest.mark.parametrize("command", [["--help"], ["vocab"], ["similar", "three"], ["train", "--help"]])
def test_commands_that_compute_nothing_load_no_numba(tmp_path, command):
    """``--help``, and ``vocab`` and ``similar`` on files already written, answer
    without importing numba (its import alone takes a fifth of a second)."""
    model = tmp_path / "model.npz"
    vectors = tmp_path / "vectors.txt"
    words = [f"w{i}" for i in range(40)]
    import hsw2v

    m = hsw2v.train(sentences=[" ".join(words[i:] + words[:i]) for i in range(40)], dim=8,
                    epochs=1, min_count=1, threads=1, progress=False)
    m.save(str(model))
    m.save_vectors(str(vectors))
    command = [w if w != "three" else "w3" for w in command]
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: sys.stderr.write(f'numba loaded: {\"numba\" in sys.modules}'))\n"
             "from hsw2v.cli import main\n"
             f"sys.argv = ['hsw2v', *{command!r}]\n"
             "main()\n")
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout
    assert result.stderr.endswith("numba loaded: False"), result.stderr


def _children_of(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


ONE_CORE = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                              reason="a child compiles ahead only with two cores or more")


@ONE_CORE
@pytest.mark.parametrize("tree", ["huffman", "semantic"])
def test_a_child_compiles_the_training_kernel_ahead(tmp_path, tree):
    """With numba's cache empty, a forked child compiles the training kernel into it;
    the run waits for the child, reaps it, then loads the kernel without compiling
    (``compile=False`` only loads). Where the tree is learned (CBOW's default), a
    second child compiles the tree's kernels (the context walk and the split)."""
    probe = (
        "import json, os\n"
        "from hsw2v.runs.kernel_setup import first_kernel, first_kernel_ahead, "
        "wait_for_tree_kernels\n"
        "from hsw2v.system import ahead\n"
        "from hsw2v.settings import TrainSettings\n"
        f"s = TrainSettings(dim=13, threads=1, tree={tree!r}).resolved()\n"
        "before = first_kernel(s, compile=False)\n"
        "with first_kernel_ahead(s):\n"
        "    child = list(ahead._children.values())\n"
        "    ahead.wait_for_child(('first kernel', 'cbow', 13), 'the kernel')\n"
        "    after = first_kernel(s, compile=False)\n"
        "    wait_for_tree_kernels(s)\n"
        "reaped = []\n"
        "for pid in child:\n"
        "    try:\n"
        "        os.waitpid(pid, os.WNOHANG)\n"
        "        reaped.append(False)\n"
        "    except ChildProcessError:\n"
        "        reaped.append(True)\n"
        "print(json.dumps({'before': before is None, 'child': child,\n"
        "                  'after': after is not None, 'reaped': reaped, 'me': os.getpid()}))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PYTHONPATH", None)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=600, env=env, check=False)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["before"], "the cache held the kernel before the child compiled it"
    assert len(seen["child"]) == (2 if tree == "semantic" else 1)
    assert seen["me"] not in seen["child"]
    assert seen["after"], "the child's kernel is not in the cache"
    assert all(seen["reaped"])
    cached = {p.name for p in (tmp_path / "cache").rglob("*.nbi")}
    for kernel in ("accumulate_contexts", "_split_segments"):  # (the tree's, by the second)
        assert any(kernel in name for name in cached) == (tree == "semantic"), (kernel, cached)


def _cold_run(tmp_path: Path, corpus: Path, name: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / f"cache-{name}")
    return subprocess.Popen([*hsw2v_command(), "train", str(corpus), *RUN, "-o",
                             f"{name}.txt", "--save-model", f"{name}.npz"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _its_child(run: subprocess.Popen) -> int:
    """The pid of the child that a cold run forks to compile (waits for it)."""
    for _ in range(6000):
        children = _children_of(run.pid)
        if children:
            return children[0]
        assert run.poll() is None, run.communicate()
        time.sleep(0.005)
    raise AssertionError("no child compiled ahead")


@pytest.mark.newest_only
@ONE_CORE
def test_a_child_that_dies_leaves_the_compile_to_the_run(tmp_path, slice_path):
    """Kill the compiling child: the run compiles the kernel itself and gives the
    bits of a run that loads it from a full cache."""
    run = _cold_run(tmp_path, slice_path, "killed")
    os.kill(_its_child(run), signal.SIGKILL)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    warm = _train(tmp_path, tmp_path / "cache-killed", "warm", slice_path, "cbow", ())[1]
    assert (tmp_path / "killed.txt").read_bytes() == warm


@ONE_CORE
def test_a_run_stopped_while_its_child_compiles_leaves_no_process(tmp_path, slice_path):
    """SIGTERM to a cold run while its child compiles: one line, and the child is
    stopped and reaped with it."""
    run = _cold_run(tmp_path, slice_path, "stopped")
    child = _its_child(run)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=600)
    assert run.returncode != 0
    assert "Traceback" not in err.decode()
    assert not Path(f"/proc/{child}").exists(), "the child outlived its run"


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie waiting for init)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


@ONE_CORE
def test_a_killed_run_takes_its_compiling_child_with_it(tmp_path, slice_path):
    """Hostile round five, item 14: SIGKILL to a cold run (no handler runs) while its
    child compiles: the kernel kills the child too, within a second, rather than
    leaving it compiling for seconds, adopted by init."""
    run = _cold_run(tmp_path, slice_path, "sigkilled")
    child = _its_child(run)
    run.kill()
    run.communicate(timeout=60)
    for _ in range(100):
        if _gone(child):
            break
        time.sleep(0.01)
    assert _gone(child), "the child outlived its killed run"


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"),
                                             (signal.SIGTERM, 143, "terminated")])
@pytest.mark.newest_only
@ONE_CORE
def test_a_signal_during_a_first_compile_is_one_line(tmp_path, slice_path, sig, code, word):
    """Hostile round five, item 10: Ctrl-C or SIGTERM 0 to 3 s into a cold run's compile,
    while numba and LLVM compile (where numba turned a Ctrl-C into "RuntimeError: no
    compiled object yet"), ends with the signal's one line and status, every time."""
    for delay in (0.0, 1.0, 2.0, 3.0):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["NUMBA_CACHE_DIR"] = str(tmp_path / f"cache-{delay}")
        run = subprocess.Popen([*hsw2v_command(), "train", str(slice_path), *RUN, "-o", "v.txt",
                                "--save-model", "m.npz"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        _its_child(run)  # (the run has its handlers and compiles: the child compiles ahead)
        time.sleep(delay)
        run.send_signal(sig)
        _, err = run.communicate(timeout=300)
        if run.returncode == 0:
            continue  # (done before the signal: nothing to see)
        lines = [ln for ln in err.decode().replace("\r", "\n").splitlines() if ln.strip()]
        assert lines[-1] == f"hsw2v: error: {word}", err.decode()[-2000:]
        assert run.returncode == code and "Traceback" not in err.decode()
        assert not (tmp_path / "v.txt").exists()
