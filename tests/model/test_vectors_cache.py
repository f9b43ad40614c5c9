"""hsw2v.model.vectors_cache in real processes: the cache prunes only the entries it
wrote, never another file of its directory."""
from __future__ import annotations

import numpy as np

from hsw2v.model.reading import read_vectors
from hsw2v.model.vectors_cache import entry_of

from tests.helpers import run_hsw2v

FAST = ("--dim", "8", "--epochs", "1", "--threads", "1", "--min-count", "1", "--quiet")


def test_pruning_removes_only_the_caches_own_entries(tmp_path, small_corpus):
    """HSW2V_CACHE_DIR pointed at the folder the outputs go to, with a bound that
    forces pruning: the user's older ``first.vectors``, this run's own
    ``-o second.vectors`` and a file of another name all stay; an older entry of
    the cache goes, and the new one is written."""
    import os
    import time

    out = tmp_path / "out"
    out.mkdir()
    first = out / "first.vectors"  # the user's, larger and older than anything there
    first_text = "2 2\na 0.5 0.25\nb 0.125 1\n" + "# padding\n" * 500
    first.write_text(first_text)
    notes = out / "notes.txt"
    notes.write_text("mine\n")
    old = out / ("0" * 40 + ".vectors")  # an entry of the cache's own, used long ago
    old.write_bytes(b"x" * 5500)
    now = time.time()
    os.utime(first, (now - 2 * 86400, now - 2 * 86400))
    os.utime(old, (now - 86400, now - 86400))
    env = {"HSW2V_CACHE_DIR": str(out), "HSW2V_CACHE_SIZE": "6000"}
    done = run_hsw2v(tmp_path, "train", small_corpus, *FAST, "-o", str(out / "second.vectors"),
                     "--save-model", str(out / "m.npz"), env=env)
    assert done.returncode == 0, done.stderr
    assert first.read_text() == first_text and notes.read_text() == "mine\n"
    second = out / "second.vectors"
    rows = second.read_text().splitlines()
    assert len(rows) == int(rows[0].split()[0]) + 1
    assert not old.exists()  # (the bound holds: the cache's own older entry went)
    entry = out / entry_of(str(second)).name
    assert entry.exists() and entry.stat().st_size <= 6000
    kept = read_vectors(str(second))
    np.testing.assert_allclose(kept.matrix[0], np.array(rows[1].split()[1:], dtype=np.float32))


def test_the_cache_size_takes_what_count_memory_takes_and_refuses_the_rest(tmp_path,
                                                                          small_corpus):
    """``HSW2V_CACHE_SIZE=512K`` or ``2GiB`` is a size (the cache is written); a value
    that is no size is one line naming the variable, before any training."""
    for size in ("512K", "2GiB"):
        out = tmp_path / size
        out.mkdir()
        done = run_hsw2v(tmp_path, "train", small_corpus, *FAST, "-o", str(out / "v.txt"),
                         "--save-model", str(out / "m.npz"),
                         env={"HSW2V_CACHE_DIR": str(out / "cache"), "HSW2V_CACHE_SIZE": size})
        assert done.returncode == 0, done.stderr
        assert [p.name for p in (out / "cache").iterdir()] == [entry_of(str(out / "v.txt")).name]
    for command in (("train", small_corpus, *FAST, "-o", "v.txt"), ("similar", "a")):
        done = run_hsw2v(tmp_path, *command, env={"HSW2V_CACHE_SIZE": "lots"})
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines()[-1] == (
            "hsw2v: error: HSW2V_CACHE_SIZE must be a size in bytes, such as 512K, 200M or 1G "
            "(0 turns the cache off); got 'lots'")
    assert not (tmp_path / "v.txt").exists()
