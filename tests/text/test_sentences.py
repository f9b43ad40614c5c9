"""Sentences from Python (``hsw2v.train(sentences)``), gensim's KeyedVectors out,
and the typed signature of ``hsw2v.train``."""
from __future__ import annotations

import gzip
import inspect
import os
import subprocess
import sys
import tempfile
from dataclasses import fields

import numpy as np
import pytest

import hsw2v
from hsw2v.errors import HSW2VError
from hsw2v.settings import TrainSettings
from hsw2v.training.kinds import model_kinds

from tests.helpers import REPO

SLICE = REPO / "data" / "enwiki-1m.txt.gz"


@pytest.fixture(scope="module")
def sentences():
    """The first 60,000 words of the bundled slice as sentences of 1 to 40 words."""
    with gzip.open(SLICE, "rt", encoding="utf-8") as f:
        words = f.read(600_000).split()[:60_000]
    rng = np.random.default_rng(0)
    out, at = [], 0
    while at < len(words):
        n = int(rng.integers(1, 41))
        out.append(words[at:at + n])
        at += n
    return out


def same(a, b) -> bool:
    return (a.words == b.words and list(a.vocab.counts) == list(b.vocab.counts)
            and np.array_equal(a.vectors, b.vectors) and np.array_equal(a.node_vectors, b.node_vectors))


SETTINGS = {"dim": 16, "epochs": 2, "threads": 1, "seed": 7, "progress": False}


@pytest.mark.parametrize("arch", list(model_kinds))
def test_the_same_sentences_as_lists_strings_a_generator_or_a_file_give_the_same_bits(
        sentences, tmp_path, arch):
    path = tmp_path / "c.txt"
    path.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    from_file = hsw2v.train(str(path), arch=arch, **SETTINGS)
    assert len(from_file.words) > 1000
    forms = {
        "lists": sentences,
        "tuples": [tuple(s) for s in sentences],
        "numpy arrays": [np.array(s) for s in sentences],
        "a generator of lists": (list(s) for s in sentences),
        "a generator of strings": ("  ".join(s) + " \t" for s in sentences),
    }
    for name, form in forms.items():
        assert same(hsw2v.train(form, arch=arch, **SETTINGS), from_file), name
    strings = [" ".join(s) for s in sentences]
    assert same(hsw2v.train(sentences=strings, arch=arch, **SETTINGS), from_file)


def test_a_generator_trains_every_epoch(sentences, tmp_path):
    """A one-shot generator is read once; each of the epochs trains on all of it."""
    reads = []

    def gen():
        reads.append(1)
        yield from sentences

    m = hsw2v.train(gen(), dim=8, epochs=3, threads=1, progress=False)
    listed = hsw2v.train(sentences, dim=8, epochs=3, threads=1, progress=False)
    assert reads == [1] and len(m.epoch_loss) == 3 and same(m, listed)


@pytest.mark.parametrize(("bad", "message"), [
    ([["a", "b c"]], r"^sentences: token 1 of sentence 0 \('b c'\) holds whitespace"),
    ([["a"], ["x", "tab\there"]], r"token 1 of sentence 1 \('tab\\there'\) holds whitespace"),
    ([["a", ""]], r"token 1 of sentence 0 \(''\) is empty"),
    ([[""]], r"token 0 of sentence 0 \(''\) is empty"),
    ([["ok"], ["a", 3]], r"token 1 of sentence 1 is of type int \(3\), not str"),
    ([["a", None]], r"token 1 of sentence 0 is of type NoneType"),
    ([b"bytes here"], r"sentence 0 is bytes; decode it"),
    ([["a"], 5], r"sentence 1 is of type int, not a list of tokens or a string"),
    ([["a", "\ud800"]], r"sentence 0 holds '\\ud800', which is not valid in UTF-8"),
])
def test_bad_tokens_are_named_by_sentence_and_token(bad, message, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(HSW2VError, match=message):
        hsw2v.train(bad, progress=False)
    assert os.listdir(tmp_path) == []  # (the temporary is gone)


def test_an_empty_iterable_is_an_empty_corpus(tmp_path, monkeypatch):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(HSW2VError) as from_file:
        hsw2v.train(str(empty), progress=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    for nothing in ([], iter(()), [[], []]):
        with pytest.raises(HSW2VError) as from_python:
            hsw2v.train(nothing, progress=False)
        assert str(from_python.value) == str(from_file.value).replace(str(empty), "sentences")
    assert os.listdir(tmp_path / "t") == []


def test_sentence_strings_in_a_list_are_paths_and_the_message_says_so():
    with pytest.raises(HSW2VError, match=r"a list of strings is a list of paths.*sentences=\["):
        hsw2v.train(["the cat sat", "a dog ran"], progress=False)
    with pytest.raises(HSW2VError, match="corpus or sentences, not both"):
        hsw2v.train([["a"]], sentences=[["a"]], progress=False)
    with pytest.raises(HSW2VError, match="not of type str"):
        hsw2v.train(sentences="the cat sat", progress=False)


def test_checkpoints_and_dask_work_from_sentences(sentences, tmp_path):
    ck = tmp_path / "ck.npz"
    m = hsw2v.train(sentences, dim=8, epochs=2, threads=1, checkpoint=str(ck), progress=False)
    assert ck.exists() and hsw2v.load_model(str(ck)).words == m.words
    d = hsw2v.train(iter(sentences), dim=8, epochs=1, threads=1, engine="dask", workers=1,
                    progress=False)
    assert d.words == m.words and np.isfinite(d.vectors).all() and d.epoch_loss[0] > 0


def test_to_gensim_gives_the_same_words_counts_vectors_and_neighbours(sentences):
    m = hsw2v.train(sentences, dim=16, epochs=1, threads=1, progress=False)
    kv = m.to_gensim()
    assert kv.index_to_key == m.words
    assert [kv.get_vecattr(w, "count") for w in m.words] == m.vocab.counts.tolist()
    assert np.array_equal(kv.vectors, m.vectors) and kv.vectors.dtype == np.float32
    for word in ("three", "city", "war"):
        ours, theirs = m.most_similar(word, topn=10), kv.most_similar(word, topn=10)
        assert [w for w, _ in ours] == [w for w, _ in theirs]
        assert np.allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)


def test_to_gensim_without_gensim_says_how_to_get_it(tmp_path):
    code = ("import sys; sys.modules['gensim'] = None\n"
            "import hsw2v\n"
            "m = hsw2v.train([['a', 'b', 'a']] * 20, min_count=1, dim=8, epochs=1, sample=0,\n"
            "                progress=False)\n"
            "try:\n    m.to_gensim()\nexcept hsw2v.HSW2VError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         check=True)
    assert out.stdout.strip().startswith("to_gensim needs gensim: pip install gensim")


def test_train_lists_every_setting_with_its_default_and_documents_it():
    params = inspect.signature(hsw2v.train).parameters
    defaults = TrainSettings()
    doc = hsw2v.train.__doc__
    for f in fields(TrainSettings):
        if f.name == "extra":  # (the settings of kinds registered later: **declared)
            assert params["declared"].kind is inspect.Parameter.VAR_KEYWORD
            continue
        assert f.name in params, f.name
        assert params[f.name].kind is inspect.Parameter.KEYWORD_ONLY
        if f.name != "tree":  # (None: Huffman, or semantic with tree_from)
            assert params[f.name].default == getattr(defaults, f.name), f.name
        assert params[f.name].annotation != inspect.Parameter.empty
    for name, p in params.items():
        name = f"**{name}" if p.kind is inspect.Parameter.VAR_KEYWORD else name
        assert f"\n    {name}" in doc or f", {name}" in doc, f"{name} is not documented"


def test_the_progress_bar_is_tqdm_auto_in_a_jupyter_kernel(tmp_path):
    """A process whose IPython shell runs a kernel app gets tqdm.auto's bar (or, with
    an older tqdm and no ipywidgets, a plain one), redrawn in place; elsewhere, with
    stderr not a terminal, a line a minute."""
    code = ("import sys, types\n"
            "from hsw2v.system.progress import LOG_INTERVAL, progress_bar\n"
            "plain = progress_bar(True, total=3)\n"
            "shell = types.SimpleNamespace(config={'IPKernelApp': {}})\n"
            "sys.modules['IPython'] = types.SimpleNamespace(get_ipython=lambda: shell)\n"
            "import tqdm.auto, tqdm.std\n"
            "bar = progress_bar(True, total=3)\n"
            "print(isinstance(bar, tqdm.std.tqdm), bar.mininterval < LOG_INTERVAL,\n"
            "      plain.mininterval == LOG_INTERVAL)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         check=True)
    assert out.stdout.split() == ["True", "True", "True"], out.stderr


@pytest.mark.parametrize(("sentences", "message"), [
    ([["a", "b"], ["c", "d\x00e"]], r"^sentences: token 1 of sentence 1 \('d\\x00e'\) holds a NUL character"),
    ({"sentences": ["a b", "c d\x00e f"]}, r"^sentences: token 1 of sentence 1 \('d\\x00e'\) holds a NUL"),
    ([["a"], ["b", "x" * 70_000]], r"^sentences: token 1 of sentence 1 \('xxx.*\.\.\.\) has 65536 bytes or more"),
    ([["a", "é" * 40_000]], r"^sentences: token 1 of sentence 0 \('ééé.*\.\.\.\) has 65536 bytes or more"),
])
def test_a_token_the_reader_cannot_read_is_named(sentences, message):
    """A NUL or a token of 64 KiB or more is named by sentence and token, not by a
    byte offset in the hidden temporary file (hostile round four, item 19)."""
    given = sentences if isinstance(sentences, dict) else {"corpus": sentences}
    with pytest.raises(hsw2v.HSW2VError, match=message):
        hsw2v.train(**given, min_count=1, epochs=1, dim=8, progress=False)


def test_an_endless_generator_ends_at_a_bound_the_user_sets(monkeypatch, tmp_path, capsys):
    """Spooling sentences shows sentences, words and bytes, and stops with one
    error at HSW2V_SENTENCES_LIMIT, leaving nothing in $TMPDIR (round four, extras)."""
    monkeypatch.setenv("HSW2V_SENTENCES_LIMIT", "3M")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (read $TMPDIR again)

    def endless():
        while True:
            yield ["the", "cat", "sat", "on", "the", "mat"]

    with pytest.raises(hsw2v.HSW2VError, match=r"^sentences: more than 3,145,728 bytes written to "
                       r".* \(HSW2V_SENTENCES_LIMIT bounds it\); is the iterable endless\?$"):
        hsw2v.train(endless(), progress=True)
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert "sentences" in err and "words=" in err and "MB" in err


REFUSED_LIMIT = '''
import os, hsw2v
before = len(os.listdir("/proc/self/fd"))
for _ in range(3):
    try:
        hsw2v.train(sentences=[["a", "b"]] * 10, min_count=1, progress=False)
    except hsw2v.HSW2VError as e:
        message = str(e)
print(len(os.listdir("/proc/self/fd")) - before, os.listdir(os.environ["TMPDIR"]), message)
'''


def test_a_refused_sentences_limit_leaves_no_file_or_descriptor(tmp_path):
    """Hostile round five, item 16, in a real process: a bad HSW2V_SENTENCES_LIMIT is
    refused before the temporary is made: nothing in $TMPDIR, no descriptor kept."""
    import os
    import subprocess
    import sys

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "HSW2V_SENTENCES_LIMIT": "lots"}
    done = subprocess.run([sys.executable, "-c", REFUSED_LIMIT], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    grown, left, message = done.stdout.split(" ", 2)
    assert grown == "0" and left == "[]"
    assert "HSW2V_SENTENCES_LIMIT must be a size" in message
