"""Hostile input and faults, each in a real process: one line and a non-zero exit
(or a correct result), no old output lost, no temporary left behind.
``python scripts/tools/hostile.py`` runs this battery and counts the clean cases."""
from __future__ import annotations

import gzip
import importlib
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import zipfile

import numpy as np
import pytest

from tests.helpers import REPO, hsw2v_command, model_bomb, one_line_error, run_hsw2v

TRAIN = ["--dim", "8", "--min-count", "1", "--epochs", "1", "--threads", "1", "--quiet"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A small corpus c.txt, and the vectors file v.txt and model m.npz of a run on
    it: made once per worker; each test works on copies of them (:func:`work`)."""
    here = tmp_path_factory.mktemp("trained")
    words = [f"w{i}" for i in range(40)]
    rng = np.random.default_rng(0)
    (here / "c.txt").write_text(
        "\n".join(" ".join(rng.choice(words, 12)) for _ in range(300)) + "\n")
    result = run_hsw2v(here, "train", "c.txt", "-o", "v.txt", "--save-model", "m.npz", *TRAIN)
    assert result.returncode == 0, result.stderr
    return here


@pytest.fixture
def work(tmp_path, trained):
    """A directory with a small corpus c.txt, a vectors file v.txt and a model m.npz
    from an earlier run (copies, times kept), and a private $TMPDIR."""
    for name in ("c.txt", "v.txt", "m.npz"):
        shutil.copy2(trained / name, tmp_path / name)
    (tmp_path / "tmp").mkdir()
    return tmp_path


def snapshot(d):
    """Every file below ``d`` with its bytes and mode (symlinks and specials by kind)."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in files + [x for x in dirs if os.path.islink(os.path.join(root, x))]:
            p = os.path.join(root, name)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    body = f.read()
            else:
                body = stat.S_IFMT(st.st_mode)
            out[os.path.relpath(p, d)] = (body, stat.S_IMODE(st.st_mode))
    return out


def no_temporaries(d) -> bool:
    return not [n for _, _, files in os.walk(d) for n in files if n.startswith(".hsw2v-")]


def run(d, *args, **kw):
    return run_hsw2v(d, *args, env={"TMPDIR": str(d / "tmp")}, **kw)


def assert_refused(d, args, fragment, **kw):
    """``args`` fail with one line holding ``fragment``, and nothing in ``d`` changed."""
    before = snapshot(d)
    line = one_line_error(run(d, *args, **kw))
    assert fragment in line, line
    assert snapshot(d) == before
    return line


# ---------------------------------------------------------------- writing outputs

def test_special_files_are_never_replaced(work):
    os.mkfifo(work / "fifo")
    os.symlink("v.txt", work / "link")
    targets = ["fifo", "link"]
    if os.geteuid() == 0:  # a private /dev/null: (1, 3) is the null device
        os.mknod(work / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append("null")
    for target in targets:
        assert_refused(work, ["train", "c.txt", "-o", target, *TRAIN], target)
        assert_refused(work, ["train", "c.txt", "--save-model", target, *TRAIN], target)
    assert stat.S_ISFIFO(os.lstat(work / "fifo").st_mode) and os.path.islink(work / "link")


@pytest.mark.parametrize("umask, old_mode, expect", [(0o077, None, 0o600), (0o022, None, 0o644),
                                                    (0o022, 0o600, 0o600), (0o077, 0o640, 0o640)])
def test_modes_follow_umask_or_the_replaced_file(work, umask, old_mode, expect):
    out = work / "new.txt"
    if old_mode is not None:
        out.write_text("old")
        os.chmod(out, old_mode)
    result = run(work, "train", "c.txt", "-o", "new.txt", "--save-model", "new.npz", *TRAIN,
                 preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(os.stat(out).st_mode) == expect
    assert stat.S_IMODE(os.stat(work / "new.npz").st_mode) == 0o666 & ~umask


def test_a_late_failure_replaces_neither_output(work):
    """The model cannot be written (the file size limit sits between the vectors'
    size and the model's): the vectors written first are not put in place either."""
    for name in ("v.bin", "m2.npz"):
        (work / name).write_bytes(b"old " + name.encode())
    vectors_bytes = 40 * (4 + 4 * 8 + 2)

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (vectors_bytes + 600, vectors_bytes + 600))

    args = ["train", "c.txt", "--binary", "--no-spool", *TRAIN]
    run(work, *args, "-o", "warm.bin")  # numba's cache files are written now, not under the limit
    (work / "warm.bin").unlink()
    before = snapshot(work)
    result = run(work, *args, "-o", "v.bin", "--save-model", "m2.npz", preexec_fn=limit)
    line = one_line_error(result)
    assert line.startswith("hsw2v: error: m2.npz: cannot write"), line  # the output, not a temporary
    assert snapshot(work) == before


@pytest.mark.newest_only
@pytest.mark.parametrize("arch, alpha", [("cbow", "1"), ("cbow", "0.5"), ("skipgram", "0.5")])
def test_a_diverging_run_keeps_the_old_output(work, arch, alpha):
    """Too high a learning rate on real text: NaN weights (alpha 1) or a loss of
    about 1e20 nats (alpha 0.5) stop the run before anything is written."""
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
        words = f.read(1_500_000).split()[:200_000]
    (work / "wiki.txt").write_text(" ".join(words) + "\n")
    line = assert_refused(work, ["train", "wiki.txt", "-o", "v.txt", "--save-model", "m.npz",
                                 "--arch", arch, "--alpha", alpha, "--epochs", "1", "--quiet"],
                          "diverged")
    assert "lower --alpha" in line


def test_output_and_model_must_differ(work):
    assert_refused(work, ["train", "c.txt", "-o", "x", "--save-model", "./x", *TRAIN], "same file")


def _default_signal_handling() -> None:
    """In the child, before exec: SIGHUP, SIGTERM and SIGINT as a terminal's job has
    them, whatever this process inherited (under ``nohup`` SIGHUP is ignored, and
    hsw2v rightly keeps a signal ignored that it inherited ignored)."""
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


def start_training(work, **kw) -> subprocess.Popen:
    """A run reading stdin (so a copy goes to $TMPDIR) that trains long enough to be
    interrupted, with the signals' default handling; returns once it is training."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TMPDIR"] = str(work / "tmp")
    proc = subprocess.Popen([*hsw2v_command(), "train", "-", "-o", "v.txt", "--dim", "16",
                             "--min-count", "1", "--epochs", "100000", "--threads", "1"],
                            cwd=work, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=_default_signal_handling)
    proc.stdin.write((work / "c.txt").read_bytes())
    proc.stdin.close()
    seen = b""
    while b"train:" not in seen:
        chunk = proc.stderr.read1(4096)
        assert chunk, seen
        seen += chunk
    return proc


LEAKED_LOCK = """
import queue, sys
import hsw2v
from hsw2v.system.parallel import read_ahead

class Leaky(queue.Queue):
    # A queue whose chosen put or get is interrupted the way a signal can interrupt
    # one: just after it took the queue's lock, which stays taken.
    def put(self, item, block=True, timeout=None):
        if sys.argv[1] == "train" and isinstance(item, tuple) and len(item) == 5:
            self.mutex.acquire()
            raise KeyboardInterrupt
        super().put(item, block, timeout)
    def get(self, block=True, timeout=None):
        if sys.argv[1] == "read" and block and timeout is None:
            self.mutex.acquire()
            raise KeyboardInterrupt
        return super().get(block, timeout)

queue.Queue = Leaky
try:
    if sys.argv[1] == "train":
        hsw2v.train(sys.argv[2], epochs=2, dim=8, min_count=1, threads=1, progress=False)
    else:
        for block in read_ahead(iter([b"a b"] * 10)):
            pass
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("where", ["train", "read"])
def test_a_signal_that_leaves_a_queue_locked_does_not_hang(work, where):
    """A signal whose handler raises (Ctrl-C, SIGTERM) right after a queue call took
    the queue's lock leaves that lock taken: the cleanup must not wait on the queue
    (CI once hung so in test_sigterm_cleans_up_like_ctrl_c). In a real process, with
    the moment of the signal simulated."""
    done = subprocess.run([sys.executable, "-c", LEAKED_LOCK, where, str(work / "c.txt")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "interrupted", done.stderr


@pytest.mark.parametrize("name, code, word", [("SIGTERM", 143, "terminated"),
                                              ("SIGHUP", 129, "hung up")])
def test_sigterm_and_sighup_clean_up_like_ctrl_c(work, name, code, word):
    """SIGTERM, and SIGHUP (a closed terminal or SSH session) alike: one line, the
    signal's exit status, no output replaced, no temporary left."""
    before = snapshot(work)
    proc = start_training(work)
    assert list((work / "tmp").iterdir())  # the stdin copy exists while it runs
    proc.send_signal(getattr(signal, name))
    err = proc.stderr.read().decode()
    assert proc.wait(60) == code
    assert err.replace("\r", "\n").strip().splitlines()[-1] == f"hsw2v: error: {word}"
    assert "Traceback" not in err
    assert snapshot(work) == before and list((work / "tmp").iterdir()) == []


SIGNAL_IN_A_FINALIZER = """
import signal, sys
import hsw2v.api
from hsw2v.cli import main

SIGNAL = getattr(signal, sys.argv.pop(1))
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a shell's foreground job

class Finalizer:
    def __del__(self):  # the signal arrives, and its handler raises, in a finalizer
        signal.raise_signal(SIGNAL)

train = hsw2v.api.train_with  # (what the CLI calls)
def train_after_a_finalizer(*args, **kwargs):
    Finalizer()
    return train(*args, **kwargs)

hsw2v.api.train_with = train_after_a_finalizer
main()
"""


@pytest.mark.parametrize("name, code, word", [("SIGINT", 130, "interrupted"),
                                              ("SIGTERM", 143, "terminated")])
def test_a_signal_in_a_finalizer_is_not_lost(work, name, code, word):
    """Python ignores an exception raised in a finalizer, with an "Exception ignored"
    traceback; a Ctrl-C or SIGTERM whose handler raised there must still end the run
    (CI once saw a Dask run train on after Ctrl-C). In a real process, with the moment
    of the signal simulated."""
    before = snapshot(work)
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_FINALIZER, name, "train", "c.txt",
                           "-o", "v.txt", *TRAIN, "--epochs", "50"],
                          cwd=work, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr.strip()) == (code, f"hsw2v: error: {word}")
    assert snapshot(work) == before


def test_ctrl_c_while_threads_count(work):
    """SIGINT during a parallel counting pass of stdin, with a reader thread blocked
    on the pipe: exit 130 with one line, no traceback, no crash at shutdown,
    nothing written, no temporary left."""
    warm = run(work, "vocab", "c.txt", "--threads", "2", "-o", "warm.txt")  # numba's cache
    assert warm.returncode == 0, warm.stderr
    before = snapshot(work)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TMPDIR"] = str(work / "tmp")
    # A shell starts background jobs with SIGINT ignored, and a child inherits that (CI
    # may run so); a handler here is reset to the default in the child instead.
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([*hsw2v_command(), "vocab", "-", "--threads", "2", "-o", "v.txt"],
                                cwd=work, stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    finally:
        signal.signal(signal.SIGINT, ignored)
    text = (work / "c.txt").read_bytes() * 100
    fed = [0]

    def feed() -> None:  # 8 MiB and then nothing, the pipe left open
        try:
            while fed[0] < 8 << 20:
                proc.stdin.write(text)
                proc.stdin.flush()
                fed[0] += len(text)
        except (BrokenPipeError, ValueError, OSError):
            pass

    threading.Thread(target=feed, daemon=True).start()
    while fed[0] < 8 << 20:  # past the pipe's buffer: the counting pass reads
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.01)
    time.sleep(0.5)  # the threads now wait for input that does not come
    proc.send_signal(signal.SIGINT)
    watchdog = threading.Timer(60, proc.kill)  # a hang fails the test instead of stalling it
    watchdog.start()
    try:
        err = proc.stderr.read().decode()  # (stdin stays open: no end of input)
        proc.wait()
    finally:
        watchdog.cancel()
        proc.stdin.close()
    assert proc.returncode == 130, err
    assert err.replace("\r", "\n").strip().splitlines()[-1] == "hsw2v: error: interrupted"
    assert "Traceback" not in err
    assert snapshot(work) == before and list((work / "tmp").iterdir()) == []


def test_sigkill_leftovers_are_cleared_by_the_next_run(work):
    proc = start_training(work)
    proc.kill()
    proc.wait(60)
    left = list((work / "tmp").iterdir())
    assert len(left) == 1 and left[0].name.startswith(f".hsw2v-{proc.pid}-")
    # a temporary of a killed writer beside the output, too
    (work / f".hsw2v-{proc.pid}-abc.tmp").write_text("half")
    result = run(work, "train", "-", "-o", "v.txt", *TRAIN, input=(work / "c.txt").read_bytes())
    assert result.returncode == 0, result.stderr
    assert list((work / "tmp").iterdir()) == [] and no_temporaries(work)


# ---------------------------------------------------------------- reading models and vectors

def rewrite_model(work, name, **changes):
    """m.npz with some arrays replaced (``meta`` may be a dict)."""
    with np.load(work / "m.npz") as z:
        arrays = dict(z)
    for k, v in changes.items():
        arrays[k] = np.frombuffer(json.dumps(v).encode(), np.uint8) if k == "meta" else v
    np.savez(work / name, **arrays)
    return name


def model_meta(work):
    with np.load(work / "m.npz") as z:
        return json.loads(z["meta"].tobytes())


def test_a_model_that_would_inflate_is_refused_unread(work):
    """Headers declaring 40 GB of vectors in a file of a few kilobytes."""
    v, d = 10_000_000, 1000
    model_bomb(work / "bomb.npz", v, d, filler=1_000_000)
    assert (work / "bomb.npz").stat().st_size < 200_000
    assert_refused(work, ["tree", "bomb.npz"], "GiB")
    # a real deflate bomb that memory could hold: 400 MB of zero vectors in 400 KB
    with np.load(work / "m.npz") as z:
        arrays = dict(z)
    with zipfile.ZipFile(work / "deflated.npz", "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in arrays.items():
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                if name == "vectors":
                    v = len(arrays["counts"])
                    np.lib.format.write_array_header_1_0(
                        f, {"descr": "<f4", "fortran_order": False, "shape": (v, 2_500_000)})
                    for _ in range(v * 10):
                        f.write(bytes(1_000_000))
                else:
                    np.lib.format.write_array(f, value)
    assert (work / "deflated.npz").stat().st_size < 1_000_000
    assert_refused(work, ["tree", "deflated.npz"], "would inflate")


@pytest.mark.parametrize("change, fragment", [
    ({"counts": np.array(5, dtype=np.int64)}, "counts"),
    ({"counts": np.ones((40, 2), dtype=np.int64)}, "counts"),
    ({"meta": "settings list"}, "JSON object"),
    ({"meta": {"window": "x"}}, "window"),
    ({"meta": {"window": 10**20}}, "window must lie in"),
    ({"counts": np.zeros(40, dtype=np.int64)}, "counts must be positive"),
    ({"vectors": "nan"}, "NaN"),
])
def test_corrupt_models_are_named_not_crashed_on(work, change, fragment):
    meta = model_meta(work)
    [(key, value)] = change.items()
    if key == "meta":
        value = {**meta, "settings": ["a", "list"]} if value == "settings list" else {
            **meta, "settings": {**meta["settings"], **value}}
    elif key == "vectors":
        with np.load(work / "m.npz") as z:
            value = z["vectors"].copy()
        value[3, 2] = np.nan
    name = rewrite_model(work, "bad.npz", **{key: value})
    for args in (["tree", name], ["predict", "--model", name, "w1"],
                 ["score", "--model", name, "c.txt"], ["similar", "w1", "--vectors", name],
                 ["train", "c.txt", "-o", "t.txt", "--tree-from", name, *TRAIN]):
        assert fragment in assert_refused(work, args, name)


def test_score_window_out_of_range(work):
    assert_refused(work, ["score", "--model", "m.npz", "c.txt", "--window", str(10**20)], "--window")


def test_nan_vectors_file_is_refused(work):
    lines = (work / "v.txt").read_text().splitlines()
    lines[5] = lines[5].split()[0] + " nan" + " 0.5" * 7
    (work / "nan.txt").write_text("\n".join(lines) + "\n")
    assert_refused(work, ["similar", "w1", "--vectors", "nan.txt"], "NaN")


def test_duplicate_words_keep_the_first_as_gensim_does(work):
    gensim = importlib.import_module("gensim")
    lines = (work / "v.txt").read_text().splitlines()
    rows = lines[1:]
    dup = rows[3].split()[0] + " " + " ".join(["0.25"] * 8)
    (work / "dup.txt").write_text(f"{len(rows) + 1} 8\n" + "\n".join(rows + [dup]) + "\n")
    result = run(work, "similar", rows[3].split()[0], "--vectors", "dup.txt", "-n", "5", "--json")
    assert result.returncode == 0, result.stderr
    assert "hsw2v: warning: " in result.stderr and "repeated" in result.stderr
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(work / "dup.txt"))
    theirs = kv.most_similar(rows[3].split()[0], topn=5)
    assert [d["word"] for d in json.loads(result.stdout)] == [w for w, _ in theirs]


def test_vectors_sizes_are_checked_against_the_file(work):
    (work / "huge.bin").write_bytes(b"1000000000000 100\nw1 " + b"\0" * 400 + b"\n")
    assert_refused(work, ["similar", "w1", "--vectors", "huge.bin"], "header says")
    assert_refused(work, ["similar", "w1", "--vectors", "/dev/zero"], "/dev/zero: a character device, not a vectors file")


# ---------------------------------------------------------------- options and input

@pytest.mark.parametrize("option, value", [
    ("--seed", "-1"), ("--epochs", str(10**20)), ("--window", str(10**20)),
    ("--dim", str(10**20)), ("--threads", "20000"), ("--threads", str(10**20)),
])
def test_numeric_options_have_ranges(work, option, value):
    assert_refused(work, ["train", "c.txt", "-o", "v.txt", *TRAIN, option, value], option)


def test_any_seed_the_generator_takes(work):
    result = run(work, "train", "c.txt", "-o", "s.txt", *TRAIN, "--seed", str(2**61))
    assert result.returncode == 0, result.stderr


def test_long_runs_are_refused_past_the_first_block(work):
    text = ("a b c " * 300_000) + "x" * 500_000 + " d e\n"  # the run starts after 1.8 MB
    (work / "long.txt").write_text(text)
    line = assert_refused(work, ["train", "long.txt", "-o", "v.txt", *TRAIN], "without whitespace")
    assert f"at byte {text.index('x')}" in line
    short = ("a b c " * 300_000) + "x" * 60_000 + " d e\n"  # under 64 KiB: a word
    (work / "short.txt").write_text(short)
    result = run(work, "vocab", "short.txt", "--min-count", "1", "--quiet")
    assert result.returncode == 0 and ("x" * 60_000 + " 1") in result.stdout


def test_errors_name_what_the_user_gave(work):
    line = assert_refused(work, ["train", "-", "-o", "v.txt", *TRAIN], "invalid UTF-8",
                          input=b"ok words \xff\xfe here\n" * 3)
    assert line.startswith("hsw2v: error: -: invalid UTF-8"), line


def test_a_corpus_changed_between_counting_and_training(work):
    """With --no-spool the text is read again each epoch: a file cut short after it
    was counted stops the run instead of training on part of it."""
    script = (
        "import sys, hsw2v.counting.corpus as c, hsw2v.runs.trainer as t\n"
        "real = c.count_words\n"
        "def count_then_cut(path, **kw):\n"
        "    counts = real(path, **kw)\n"
        "    path = path if isinstance(path, str) else path[0]\n"
        "    data = open(path, 'rb').read()\n"
        "    open(path, 'wb').write(data[:len(data) * 6 // 10])\n"
        "    return counts\n"
        "t.count_words = count_then_cut\n"
        "from hsw2v.cli import main\n"
        "sys.argv = ['hsw2v'] + sys.argv[1:]\n"
        "main()\n")
    before = snapshot(work)
    result = subprocess.run([sys.executable, "-c", script, "train", "c.txt", "-o", "v.txt",
                             "--no-spool", *TRAIN], cwd=work, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "TMPDIR": str(work / "tmp")}, check=False)
    assert "changed since it was counted" in one_line_error(result)
    after = snapshot(work)
    assert after.pop("c.txt") != before.pop("c.txt") and after == before


def test_a_spool_that_cannot_be_kept_is_said_once(work):
    """The spool's file outgrows the file size limit: one warning line, even with
    --quiet, and training reads the text instead, to the same vectors."""
    (work / "big.txt").write_text((work / "c.txt").read_text() * 100)  # 360k tokens, a byte or more each

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    spooled = run(work, "train", "big.txt", "-o", "a.txt", *TRAIN, preexec_fn=limit)
    assert spooled.returncode == 0, spooled.stderr
    warnings = [ln for ln in spooled.stderr.splitlines() if ln.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("hsw2v: warning: the token spool")
    assert "could not be kept" in warnings[0] and "reads the text again" in warnings[0]
    text = run(work, "train", "big.txt", "-o", "b.txt", "--no-spool", *TRAIN)
    assert text.returncode == 0 and text.stderr == ""
    assert (work / "a.txt").read_bytes() == (work / "b.txt").read_bytes()


def test_progress_in_a_log_file_is_plain_lines(work):
    result = run(work, "train", "c.txt", "-o", "v2.txt", "--dim", "8", "--min-count", "1",
                 "--epochs", "2", "--threads", "1")
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr
    lines = result.stderr.splitlines()
    assert any(ln.startswith("train: 100%") for ln in lines), lines
    assert len(lines) <= 8, lines


# ---------------------------------------------------------------- round three

@pytest.mark.parametrize("args, fragment", [
    (["train", "c.txt", "-o", "c.txt"], "-o c.txt is the corpus"),
    (["train", "c.txt", "--save-model", "c.txt"], "--save-model c.txt is the corpus"),
    (["train", "c.txt", "--checkpoint", "c.txt"], "--checkpoint c.txt is the corpus"),
    (["train", "c.txt", "-o", "ALIAS"], "is the corpus"),  # another spelling of the file
    (["train", "c.txt", "--read-vocab", "voc.txt", "-o", "voc.txt"], "is the --read-vocab"),
    (["train", "c.txt", "--init-model", "m.npz", "--save-model", "m.npz"], "is the --init-model"),
    (["train", "c.txt", "--checkpoint", "k.npz", "--save-model", "k.npz"], "name the same file"),
    (["train", "c.txt", "--checkpoint", "k.npz", "-o", "./k.npz"], "name the same file"),
    (["vocab", "c.txt", "-o", "c.txt"], "-o c.txt is the corpus"),
    (["train", "c.txt", "-o", "-"], "-o -: train writes files, not standard output"),  # (round
    (["train", "c.txt", "--save-model", "-"], "--save-model -: train writes files"),  # five, 9)
])
def test_an_output_never_overwrites_an_input_or_another_output(work, args, fragment):
    (work / "voc.txt").write_text("w1 5\nw2 4\n")
    os.symlink("c.txt", work / "alias.txt")
    args = [str(work / "c.txt") if a == "ALIAS" else a for a in args]
    assert_refused(work, [*args, *(TRAIN if args[0] == "train" else ["--quiet"])], fragment)


def test_an_output_in_a_directory_the_system_cannot_reach_is_refused_first(work):
    """``nodir/../m.npz`` normalises to ``m.npz`` but the system cannot open it: it is
    refused before training, and -o's file is untouched."""
    assert_refused(work, ["train", "c.txt", "-o", "v.txt", "--save-model", "nodir/../m2.npz",
                          *TRAIN], "nodir/..")


def test_outputs_are_both_replaced_or_neither_when_a_rename_fails(tmp_path):
    """The second rename fails (its path became a directory meanwhile): the first
    output gets its old bytes back, and no temporary or backup is left."""
    from hsw2v.errors import HSW2VError
    from hsw2v.system.files import replace_together

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")

    def write_b(f):
        f.write(b"new b")
        b.mkdir()
        (b / "x").touch()

    with pytest.raises(HSW2VError, match="b.txt: cannot replace it"):
        replace_together({str(a): lambda f: f.write(b"new a"), str(b): write_b})
    assert a.read_text() == "old a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_directory_corpus_never_reads_the_runs_own_outputs(work):
    """``hsw2v train .`` twice inside the corpus directory: the second run reads the
    corpus only, not the first run's vectors and model, and says how many files."""
    corpus = work / "corpus"
    corpus.mkdir()
    (corpus / "c.txt").write_bytes((work / "c.txt").read_bytes())
    import hsw2v

    sizes = []
    for _ in range(2):
        result = run(corpus, "train", ".", "--dim", "8", "--min-count", "1", "--epochs", "1",
                     "--threads", "1")
        assert result.returncode == 0, result.stderr
        assert "hsw2v: .: reading 1 file\n" in result.stderr
        sizes.append(len(hsw2v.load_model(str(corpus / "model.npz")).vocab))
    assert sizes[0] == sizes[1] == 40


def test_a_directory_corpus_follows_links_once_and_skips_hidden_entries(work):
    d, other = work / "d", work / "other"
    (d / "sub").mkdir(parents=True)
    (d / ".hid").mkdir()
    other.mkdir()
    (d / "a.txt").write_text("alpha alpha\n")
    (d / "sub" / "b.txt").write_text("beta beta\n")
    (d / ".hidden.txt").write_text("hidden hidden\n")
    (d / ".hid" / "c.txt").write_text("inhidden inhidden\n")
    (other / "o.txt").write_text("linked linked\n")
    os.symlink(other, d / "link")  # a symlinked directory: followed
    os.symlink(d, d / "sub" / "loop")  # a loop: each directory once
    result = run(work, "vocab", "d", "--min-count", "1")
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()[::2]) == ["alpha", "beta", "linked"]
    assert "hsw2v: d: reading 3 files" in result.stderr


def test_read_vocab_counts_beyond_64_bits_and_repeated_words(work):
    (work / "big.txt").write_text("w1 99999999999999999999\nw2 1\n")
    assert_refused(work, ["train", "c.txt", "--read-vocab", "big.txt", *TRAIN], "big.txt:1:")
    (work / "twice.txt").write_text("w1 3\nw2 2\nw1 1\n")
    line = assert_refused(work, ["train", "c.txt", "--read-vocab", "twice.txt", *TRAIN],
                          "twice.txt:3:")
    assert "'w1' is already on line 1" in line


def test_nothing_trained_is_an_error_saying_why(work):
    (work / "two.txt").write_text("the cat sat\non the mat\n")
    line = assert_refused(work, ["train", "two.txt", "-o", "t.txt", "--save-model", "t.npz",
                                 *TRAIN], "nothing was trained")
    assert "--sample 0" in line
    (work / "other.txt").write_text("zz 5\nyy 4\n")  # none of these words is in c.txt
    line = assert_refused(work, ["train", "c.txt", "--read-vocab", "other.txt", "-o", "t.txt",
                                 *TRAIN], "nothing was trained")
    assert "no word of the vocabulary occurs" in line


def test_a_byte_order_mark_is_not_part_of_the_first_word(work):
    (work / "bom.txt").write_bytes("\ufeffthe cat\nthe dog\n".encode())
    result = run(work, "vocab", "bom.txt", "--min-count", "1", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "the 2"
    (work / "bomvoc.txt").write_bytes("\ufeffw1 50\nw2 40\nw3 30\n".encode())
    result = run(work, "train", "c.txt", "--read-vocab", "bomvoc.txt", "-o", "b.txt", "--sample",
                 "0", *TRAIN)
    assert result.returncode == 0, result.stderr
    assert (work / "b.txt").read_text().splitlines()[1].split()[0] == "w1"


def test_huge_values_and_queries_that_cancel(work):
    rows = ["3 2", "x 3e38 1e38", "y 3e38 -1e38", "z -3e38 2e38"]
    (work / "huge.txt").write_text("\n".join(rows) + "\n")
    result = run(work, "similar", "x", "--vectors", "huge.txt", "--json")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    got = {r["word"]: r["similarity"] for r in json.loads(result.stdout)}
    ref = np.array([[3e38, 1e38], [3e38, -1e38], [-3e38, 2e38]], np.float64)
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    assert got["y"] == pytest.approx(ref[0] @ ref[1], abs=1e-5)
    assert got["z"] == pytest.approx(ref[0] @ ref[2], abs=1e-5)
    assert_refused(work, ["similar", "x", "--vectors", "huge.txt", "--negative", "x"], "cancel")
    assert_refused(work, ["score", "c.txt", "--model", "m.npz", "--window", "0"], "window")


def test_messages_that_said_the_wrong_thing(work):
    (work / "one.txt").write_text("same same same\n")
    line = assert_refused(work, ["train", "one.txt", *TRAIN], "only one word")
    assert "min-count" not in line
    help_text = run(work, "evaluate", "--help").stdout
    assert "word1<TAB>word2<TAB>score" in " ".join(help_text.split())
    result = run(work, "vocab", "c.txt", "--min-count", "1", "-o", "-", "--quiet")
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 40
    assert not (work / "-").exists()
    result = run(work, "vocab", "c.txt", "-o", "/dev/null", "--quiet")
    assert result.returncode == 0, result.stderr
    assert_refused(work, ["train", "c.txt", "--engine", "dask", "--workers", "1",
                          "--round-words", "1", *TRAIN], "--round-words must be at least")


def test_a_fifo_corpus_is_read_like_stdin_and_a_device_is_named(work):
    """A named pipe (as ``<(zcat a.gz)`` gives) is read once into a temporary copy,
    as stdin is, and trains as the file would; /dev/null is named for what it is."""
    import hsw2v

    os.mkfifo(work / "pipe")

    def feed():
        with open(work / "pipe", "wb") as f:
            f.write((work / "c.txt").read_bytes())

    threading.Thread(target=feed, daemon=True).start()
    result = run(work, "train", "pipe", "-o", "p.txt", "--save-model", "p.npz", *TRAIN)
    assert result.returncode == 0, result.stderr
    assert hsw2v.load_model(str(work / "p.npz")).words == hsw2v.load_model(str(work / "m.npz")).words
    assert list((work / "tmp").iterdir()) == []
    assert_refused(work, ["train", "/dev/null", *TRAIN], "/dev/null: a character device")


FILE_INPUTS = [
    (("predict", "--model", "{x}", "w1"), "a model file"),
    (("tree", "{x}"), "a model file"),
    (("vocab", "--model", "{x}"), "a model file"),
    (("score", "c.txt", "--model", "{x}"), "a model file"),
    (("train", "c.txt", "--init-model", "{x}", "-o", "o.txt"), "a model file"),
    (("train", "c.txt", "--tree-from", "{x}", "-o", "o.txt"), "a model file"),
    (("train", "c.txt", "--resume", "{x}", "-o", "o.txt"), "a model file"),
    (("train", "c.txt", "--read-vocab", "{x}", "-o", "o.txt"), "a vocabulary file"),
    (("similar", "w1", "--vectors", "{x}"), "a vectors file"),
    (("evaluate", "v.txt", "--pairs", "{x}"), "a word-pair file"),
    (("evaluate", "v.txt", "--analogies", "{x}"), "an analogy file"),
]


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
@pytest.mark.parametrize(("args", "what"), FILE_INPUTS, ids=[" ".join(a[:3]) for a, _ in FILE_INPUTS])
def test_an_input_read_whole_must_be_a_regular_file(work, special, args, what):
    """A FIFO would block in open() for ever, /dev/zero fill memory until the
    process is killed: each is refused in one line, at once (round four, 12-13)."""
    if special == "fifo":
        os.mkfifo(work / "f")
        special = str(work / "f")
    kind = "a FIFO" if special.endswith("/f") else "a character device"
    result = run_hsw2v(work, *(a.format(x=special) for a in args))
    assert one_line_error(result) == f"hsw2v: error: {special}: {kind}, not {what}"


def test_score_and_train_refuse_the_same_corpora_alike(work):
    """A character device or a socket as CORPUS: one answer for every command
    (round four, item 22)."""
    import socket

    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(work / "s"))
    try:
        for corpus, kind in (("/dev/null", "a character device"), (str(work / "s"), "a socket")):
            said = {one_line_error(run_hsw2v(work, *args))
                    for args in (("train", corpus, "-o", "o.txt"), ("score", corpus, "--model", "m.npz"))}
            assert said == {f"hsw2v: error: {corpus}: {kind}, not a text file"}
    finally:
        sock.close()


def test_the_vectors_cache_follows_an_edit_in_place_and_mends_a_damaged_entry(work):
    """``similar`` after the vectors file was edited in place at the same size with
    its mtime put back (``touch -r``, ``cp -p``, ``rsync -t``) reads the edit; an entry
    holding NaN is read past and written again (round four, items 4 and 5)."""
    from hsw2v.model.vectors_cache import entry_of

    def neighbours():
        r = run_hsw2v(work, "similar", "w1", "--vectors", "v.txt", "--json")
        assert r.returncode == 0, r.stderr
        return [d["word"] for d in json.loads(r.stdout)]

    before = neighbours()
    path = work / "v.txt"
    st = os.stat(path)
    lines = path.read_bytes().split(b"\n")
    i, j = (next(k for k, line in enumerate(lines) if line.startswith(w + b" ")) for w in (b"w1", b"w2"))
    lines[i], lines[j] = b"w2" + lines[i][2:], b"w1" + lines[j][2:]  # w1 and w2 swap vectors
    path.write_bytes(b"\n".join(lines))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    after = neighbours()
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path))
    assert after == [w for w, _ in kv.most_similar("w1", topn=10)] != before
    entry = entry_of(str(path))
    data = bytearray(entry.read_bytes())
    data[-4:] = np.float32(np.nan).tobytes()  # the last value of the last row
    entry.write_bytes(bytes(data))
    assert neighbours() == after
    assert np.isfinite(np.frombuffer(entry.read_bytes()[-4:], "<f4")).all()  # written again


WRITER_THAT_WAITS = """
import sys
from hsw2v.system.files import atomic_write

with atomic_write(sys.argv[1], "w") as f:
    f.write("first half, ")
    f.flush()
    print("writing", flush=True)
    sys.stdin.readline()  # paused while another run writes beside it
    f.write("second half\\n")
"""


def _paused_writer(path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([sys.executable, "-c", WRITER_THAT_WAITS, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline() == "writing\n"
    return proc


def _resume(proc: subprocess.Popen) -> None:
    proc.stdin.write("go\n")
    proc.stdin.close()
    assert proc.wait(60) == 0


def test_a_temporary_in_use_is_never_judged_stale_by_its_process_id(work):
    """A shared directory: a temporary whose writer lives, though its process id is
    dead here (another machine, container or PID namespace), is kept because its
    writer holds it locked; one nobody holds is removed (round four, item 1)."""
    import fcntl

    from hsw2v.system.files import remove_stale_temporaries

    shared = work / "shared"
    shared.mkdir()
    in_use, left = shared / ".hsw2v-999999999-abc.tmp", shared / ".hsw2v-999999998-abc.tmp"
    in_use.write_text("being written")
    left.write_text("a killed run's")
    with open(in_use) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # its writer, alive
        remove_stale_temporaries(str(shared))
        assert in_use.exists() and not left.exists()
    remove_stale_temporaries(str(shared))
    assert not in_use.exists()  # nobody holds it now
    writer = _paused_writer(shared / "out.txt")  # a real writer, paused mid-write
    assert run_hsw2v(work, "vocab", "c.txt", "-o", "shared/v.txt").returncode == 0
    _resume(writer)
    assert (shared / "out.txt").read_text() == "first half, second half\n"


def test_a_run_in_another_pid_namespace_keeps_a_paused_writers_temporary(work):
    """The report's case: run A is paused while writing into a shared directory,
    and ``unshare --pid --fork --mount-proc hsw2v vocab … -o shared/v.txt`` starts
    and ends; A then finishes and keeps its output."""
    import shutil

    if not shutil.which("unshare") or subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True).returncode:
        pytest.skip("no PID namespaces here (unshare needs root)")
    shared = work / "shared"
    shared.mkdir()
    writer = _paused_writer(shared / "out.txt")
    other = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", *hsw2v_command(), "vocab",
                            "c.txt", "-o", "shared/v.txt"], cwd=work, capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, timeout=120)
    assert other.returncode == 0, other.stderr
    _resume(writer)
    assert (shared / "out.txt").read_text() == "first half, second half\n"
    assert [p.name for p in shared.iterdir() if p.name.startswith(".hsw2v-")] == []


def _memory_cgroup(tmp_name: str, limit: int):
    """A new memory cgroup below this process's, limited to ``limit`` bytes: its
    directory and the file its processes are listed in; None where none can be made
    (not root, no writable memory controller)."""
    try:
        lines = open("/proc/self/cgroup").read().splitlines()
    except OSError:
        return None
    for line in lines:
        number, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "memory" in controllers.split(","):
            parent, limit_file = f"/sys/fs/cgroup/memory{path}", "memory.limit_in_bytes"
        elif number == "0" and controllers == "":
            parent, limit_file = f"/sys/fs/cgroup{path}", "memory.max"
        else:
            continue
        child = os.path.join(parent, tmp_name)
        try:
            os.mkdir(child)
        except OSError:
            continue
        try:
            with open(os.path.join(child, limit_file), "w") as f:
                f.write(str(limit))
            return child, os.path.join(child, "cgroup.procs")
        except OSError:
            os.rmdir(child)
    return None


def test_memory_defaults_follow_a_containers_limit(work):
    """Inside a cgroup limited to 512 MiB (a container), LBL's full position
    matrices may take half of that, not half of the machine's memory (round four,
    extras): a size that fits the machine is refused there, naming the limit."""
    made = _memory_cgroup(f"hsw2v-test-{os.getpid()}", 512 << 20)
    if made is None:
        pytest.skip("no memory cgroup can be made here (needs root)")
    child, procs = made
    try:
        args = ["train", "c.txt", "--arch", "lbl", "--position-weights", "full", "--dim", "4000",
                "--window", "5", "-o", "o.txt"]
        script = f'echo $$ > {procs} && exec "$@"'
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        inside = subprocess.run(["sh", "-c", script, "sh", *hsw2v_command(), *args], cwd=work, env=env,
                                capture_output=True, text=True, timeout=300)
        assert one_line_error(inside).endswith(
            "needs 0.3 GiB of position matrices (N·D² floats), more than half of the memory this "
            "process may use (0.2 GiB): lower --dim or use --position-weights diagonal")
        from hsw2v.settings import TrainSettings  # here, outside the cgroup, it fits
        TrainSettings(arch="lbl", position_weights="full", dim=4000, window=5).resolved()
    finally:
        os.rmdir(child)
