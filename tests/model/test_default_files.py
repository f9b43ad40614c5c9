"""The usage line as a new user types it, in an empty directory, in a real process:
``hsw2v train corpus.txt``, ``hsw2v vocab``, ``hsw2v similar word``."""
from __future__ import annotations

import gzip
import importlib
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import REPO, one_line_error, run_hsw2v


def hsw2v(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_hsw2v(cwd, *args)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An empty directory holding only corpus.txt (the bundled corpus's first 200k
    words, in lines of 1,000), after ``hsw2v train corpus.txt`` ran there."""
    d = tmp_path_factory.mktemp("user")
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
        words = f.read().split()[:200_000]
    (d / "corpus.txt").write_text(
        "\n".join(" ".join(words[i:i + 1000]) for i in range(0, len(words), 1000)) + "\n")
    result = hsw2v(d, "train", "corpus.txt")
    return d, words, result


def test_train_writes_default_files_and_says_where(trained):
    d, _, result = trained
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in d.iterdir()) == ["corpus.txt", "model.npz", "vectors.txt"]
    last = result.stderr.strip().splitlines()[-1]
    assert last == "saved vectors to vectors.txt and model to model.npz"


def test_gensim_loads_the_default_vectors(trained):
    gensim = importlib.import_module("gensim")
    d, words, _ = trained
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(d / "vectors.txt"))
    counts = Counter(words)
    kept = {w for w, c in counts.items() if c >= 5}  # the default --min-count
    assert set(kv.index_to_key) == kept and kv.vector_size == 100
    assert [counts[w] for w in kv.index_to_key] == sorted((counts[w] for w in kept), reverse=True)


def test_similar_reads_the_default_vectors(trained):
    gensim = importlib.import_module("gensim")
    d, _, _ = trained
    result = hsw2v(d, "similar", "three")
    assert result.returncode == 0, result.stderr
    ours = [line.split("\t") for line in result.stdout.splitlines()]
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(d / "vectors.txt"))
    theirs = kv.most_similar("three", topn=10)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([float(s) for _, s in ours], [s for _, s in theirs], atol=1e-4)


def test_vocab_lists_the_default_model(trained):
    d, words, _ = trained
    result = hsw2v(d, "vocab")
    assert result.returncode == 0, result.stderr
    listed = [line.split() for line in result.stdout.splitlines()]
    counts = Counter(words)
    assert {w: int(c) for w, c in listed} == {w: c for w, c in counts.items() if c >= 5}
    assert [int(c) for _, c in listed] == sorted((int(c) for _, c in listed), reverse=True)
    # with a corpus it counts the corpus, as before
    counted = hsw2v(d, "vocab", "corpus.txt", "--quiet")
    assert counted.returncode == 0 and counted.stdout == result.stdout


def same_output(a: str, b: str) -> bool:
    """The same words and numbers, the numbers to 1e-5: a kernel that one process
    compiles and the next loads from numba's cache may round the last digit
    differently under fastmath (seen with numba 0.58)."""
    ta, tb = a.split(), b.split()
    if len(ta) != len(tb):
        return False
    for x, y in zip(ta, tb):
        try:
            if x != y and float(x) != pytest.approx(float(y), rel=1e-5, abs=1e-9):
                return False
        except ValueError:
            return False
    return True


def test_model_commands_find_the_default_model(trained):
    d, _, _ = trained
    for args in (["tree"], ["predict", "the", "united"], ["score", "corpus.txt"]):
        found = hsw2v(d, *args).stdout
        named = hsw2v(d, *args[:1], *(["model.npz"] if args[0] == "tree" else ["--model", "model.npz"]),
                      *args[1:]).stdout
        assert found and same_output(found, named), (found, named)
    result = hsw2v(d, "tree", "--json")
    assert result.returncode == 0 and '"kind": "semantic-adaptive"' in result.stdout  # (the default)


def test_nothing_trained_yet_says_what_to_run(tmp_path):
    for args in (["similar", "king"], ["vocab"], ["predict", "king"], ["tree"],
                 ["evaluate", "--pairs", "p.tsv"]):
        line = one_line_error(hsw2v(tmp_path, *args))
        assert "hsw2v train CORPUS" in line, line
    assert list(tmp_path.iterdir()) == []


def test_default_outputs_never_replace_a_foreign_file(tmp_path):
    (tmp_path / "c.txt").write_text("a b c d\n" * 20)
    (tmp_path / "vectors.txt").write_text("my shopping list\n")
    line = one_line_error(hsw2v(tmp_path, "train", "c.txt", "--dim", "8", "--min-count", "1"))
    assert "vectors.txt exists and is not an hsw2v vectors file" in line
    assert (tmp_path / "vectors.txt").read_text() == "my shopping list\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "vectors.txt"]
    # hsw2v's own earlier output is replaced; -o alone writes only where it was asked
    (tmp_path / "vectors.txt").unlink()
    for _ in range(2):
        result = hsw2v(tmp_path, "train", "c.txt", "--dim", "8", "--min-count", "1", "--quiet")
        assert result.returncode == 0, result.stderr
    result = hsw2v(tmp_path, "train", "c.txt", "--dim", "8", "--min-count", "1", "-o", "v2.txt")
    assert result.returncode == 0 and result.stderr.strip().endswith("saved vectors to v2.txt")
    assert not (tmp_path / "model.npz.tmp").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "c.txt", "model.npz", "v2.txt", "vectors.txt"]
