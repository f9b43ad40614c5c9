"""hsw2v.system.files in real processes: a run never deletes its own temporary
because its lock was busy for an instant, and a run killed between the renames of
its outputs is finished by the next run, which says so and leaves nothing behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np

import hsw2v
from tests.helpers import run_hsw2v

BUSY_ONCE = textwrap.dedent("""
    import fcntl, os, subprocess, sys
    real, calls = fcntl.flock, []
    def flock(fd, op):  # another run's scan holds the lock for an instant
        calls.append(op)
        if len(calls) == 1:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real(fd, op)
    fcntl.flock = flock
    from hsw2v.system import files
    tmp = files.new_temporary(".")
    files.remove_stale_temporaries(".")  # this run's next scan, by a relative path
    other = "from hsw2v.system.files import remove_stale_temporaries as r; r('.')"
    subprocess.run([sys.executable, "-c", other], check=True)  # another run's scan
    print(os.path.exists(tmp), os.path.isabs(tmp))
    files.discard(tmp)
    print(os.path.exists(tmp))
""")


def test_a_busy_lock_is_waited_for_and_the_run_keeps_its_temporary(tmp_path):
    done = subprocess.run([sys.executable, "-c", BUSY_ONCE], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hsw2v-")]


KILLED_AT_THE_MODEL = textwrap.dedent("""
    import os, signal, sys
    real = os.replace
    def replace(src, dst, *args, **kwargs):  # SIGKILL between the vectors and the model
        if str(dst).endswith("model.npz"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst, *args, **kwargs)
    os.replace = replace
    sys.argv = ["hsw2v", *sys.argv[1:]]
    from hsw2v.cli import main
    main()
""")

FAST = ("--dim", "8", "--epochs", "1", "--threads", "1", "--min-count", "1", "--no-cache")


def test_a_kill_between_trains_two_renames_is_finished_by_the_next_run(tmp_path, small_corpus):
    first = run_hsw2v(tmp_path, "train", small_corpus, *FAST, "--seed", "1")
    assert first.returncode == 0, first.stderr
    old_model = (tmp_path / "model.npz").read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_THE_MODEL, "train", small_corpus,
                             *FAST, "--seed", "2", "--quiet"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL
    new_vectors = (tmp_path / "vectors.txt").read_text()
    assert (tmp_path / "model.npz").read_bytes() == old_model  # half done: the pair disagrees
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".hsw2v-"))
    assert any(n.endswith(".journal") for n in left) and any(n.endswith(".tmp") for n in left)

    later = run_hsw2v(tmp_path, "vocab", small_corpus, "-o", "vocab.txt")  # any write here
    assert later.returncode == 0, later.stderr
    said = [ln for ln in later.stderr.splitlines() if ln.startswith("hsw2v: warning:")]
    assert len(said) == 1 and "finished replacing" in said[0], later.stderr
    assert "vectors.txt" in said[0] and "model.npz" in said[0]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hsw2v-")]
    assert (tmp_path / "vectors.txt").read_text() == new_vectors
    model = hsw2v.load_model(str(tmp_path / "model.npz"))  # the killed run's, whole
    rows = new_vectors.splitlines()
    word, values = rows[1].split()[0], np.array(rows[1].split()[1:], dtype=np.float32)
    np.testing.assert_allclose(model[word], values, rtol=1e-6)
    assert model.settings.seed == 2


def test_a_live_runs_backups_and_journal_are_left_alone(tmp_path):
    """Another run's scan, while this one is between its renames, removes none of
    its journal, temporaries or backups (their process lives)."""
    script = textwrap.dedent("""
        import os, subprocess, sys
        from hsw2v.system import files
        for name in ("a.txt", "b.txt"):
            open(name, "w").write("old " + name)
        real = os.replace
        seen = []
        def replace(src, dst, *args, **kwargs):
            if str(dst).endswith("b.txt"):  # between the two renames: another run scans
                other = "from hsw2v.system.files import remove_stale_temporaries as r; r('.')"
                subprocess.run([sys.executable, "-c", other], check=True)
                seen.extend(sorted(n for n in os.listdir(".") if n.startswith(".hsw2v-")))
            return real(src, dst, *args, **kwargs)
        os.replace = replace
        files.replace_together({"a.txt": lambda f: f.write(b"new a"),
                                "b.txt": lambda f: f.write(b"new b")})
        print(" ".join(n.rsplit(".", 1)[-1] for n in seen))
        print(open("a.txt").read(), "/", open("b.txt").read())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    kinds = done.stdout.splitlines()[0].split()
    assert sorted(kinds) == ["journal", "old", "old", "tmp"]  # (the journal, a's and b's
    # backups, b's temporary)
    assert done.stdout.splitlines()[1] == "new a / new b"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hsw2v-")]
    assert os.listdir(tmp_path) and sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


def test_a_killed_replacement_is_not_finished_over_files_changed_since(tmp_path, small_corpus):
    """After the kill, the user replaces model.npz: the next run leaves both files as
    they are (no stale copy over a newer file), removes the killed run's leftovers
    and says so."""
    assert run_hsw2v(tmp_path, "train", small_corpus, *FAST).returncode == 0
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_THE_MODEL, "train", small_corpus,
                             *FAST, "--seed", "2", "--quiet"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL
    (tmp_path / "mine.npz").write_bytes(b"the user's own file")
    os.replace(tmp_path / "mine.npz", tmp_path / "model.npz")
    later = run_hsw2v(tmp_path, "vocab", small_corpus, "-o", "vocab.txt")
    assert later.returncode == 0, later.stderr
    said = [ln for ln in later.stderr.splitlines() if ln.startswith("hsw2v: warning:")]
    assert len(said) == 1 and "as they are" in said[0] and "changed since" in said[0], said
    assert (tmp_path / "model.npz").read_bytes() == b"the user's own file"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hsw2v-")]


def test_a_journal_of_another_user_is_never_acted_on(tmp_path):
    """A journal that another user put in a shared directory (``/tmp``), naming this
    user's files, renames and removes nothing."""
    import json

    victim, decoy = tmp_path / "precious.txt", tmp_path / ".hsw2v-99999-x.tmp"
    victim.write_text("mine")
    decoy.write_text("theirs")
    journal = tmp_path / ".hsw2v-99999-abcdef.journal"
    journal.write_text(json.dumps({"format": "hsw2v-replace", "token": "abcdef", "pairs": [
        {"path": str(victim), "tmp": str(decoy), "old": None, "new": None}]}))
    os.chown(journal, 12345, 12345)
    done = run_hsw2v(tmp_path, "vocab", str(victim), "-o", "vocab.txt")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "mine" and journal.exists()
    assert "warning" not in done.stderr
