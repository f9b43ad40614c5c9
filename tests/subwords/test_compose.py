"""hsw2v.subwords.compose: a subword model's word vectors as means of their rows
(against numpy, hashing the n-grams here), unseen words' vectors and neighbours,
the model file that keeps the rows, a grown vocabulary, and scoring every pair."""
from pathlib import Path
import zipfile

import numpy as np
import pytest

import hsw2v
from hsw2v.counting.corpus import count_words
from hsw2v.errors import HSW2VError
from hsw2v.evaluation.evaluate import evaluate_word_pairs
from hsw2v.model.vectors import Vectors
from hsw2v.runs.grow import grown_model
from hsw2v.subwords.ngrams import fasttext_hash, word_ngrams

from tests.helpers import bundled_slice, make_model


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return Path(bundled_slice(tmp_path_factory.mktemp("corpus") / "c.txt", 50_000))


@pytest.fixture(scope="module")
def model(corpus):
    return hsw2v.train(str(corpus), subwords=True, buckets=5000, dim=16, epochs=1, threads=1,
                       tree="huffman", progress=False)


def ngram_mean(model, word, own=None):
    """numpy: the mean of the word's n-gram rows (hashed here), and its own row."""
    s = model.settings
    rows = [model.ngram_vectors[fasttext_hash(g) % s.buckets] for g in word_ngrams(word, 3, 6)]
    if own is not None:
        rows.append(model.vectors[own])
    return np.mean(np.array(rows, dtype=np.float64), axis=0)


def test_a_words_vector_is_the_mean_of_its_rows(model):
    for word in ("the", "history", model.words[-1]):
        i = model.vocab.index[word]
        np.testing.assert_allclose(model[word], ngram_mean(model, word, i), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(model.word_vectors[i], model[word], rtol=1e-5, atol=1e-7)
    assert "historyz" not in model
    np.testing.assert_allclose(model["historyz"], ngram_mean(model, "historyz"), rtol=1e-5,
                               atol=1e-6)
    kv = model.to_gensim()
    np.testing.assert_allclose(kv["history"], model["history"], rtol=1e-6)


def test_unseen_words_are_neighbours_and_queries(model):
    """``most_similar`` takes an unseen word, by the vector built for it, and
    excludes only the vocabulary's query words."""
    near = dict(model.most_similar("historyz", topn=5))
    unit = model.word_vectors / np.linalg.norm(model.word_vectors, axis=1, keepdims=True)
    query = model["historyz"] / np.linalg.norm(model["historyz"])
    best = np.argsort(-(unit @ query))[:5]
    assert list(near) == [model.words[i] for i in best]
    assert "history" in near


def test_the_model_file_keeps_the_ngram_rows(model, tmp_path):
    path = str(tmp_path / "m.npz")
    model.save(path)
    back = hsw2v.load_model(path)
    assert np.array_equal(back.ngram_vectors, model.ngram_vectors)
    assert np.array_equal(back.word_vectors, model.word_vectors)
    assert np.array_equal(back["historyz"], model["historyz"])
    assert repr(back).endswith("subwords=3-6>")


@pytest.mark.parametrize("change", ["shape", "without", "nan"])
def test_a_damaged_ngram_member_is_one_line(model, tmp_path, change):
    """n-gram rows of another shape than the settings say, rows in a model without
    subwords, or rows holding NaN: refused in one line, before use."""
    source = make_model(dim=16) if change == "without" else model
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    source.save(str(good))
    rows = model.ngram_vectors.copy()
    if change == "shape":
        rows = rows[:-1]
    elif change == "nan":
        rows[3, 2] = np.nan
    with zipfile.ZipFile(good) as z, zipfile.ZipFile(bad, "w") as out:
        for name in z.namelist():
            if name != "ngram_vectors.npy":
                out.writestr(name, z.read(name))
        with out.open("ngram_vectors.npy", "w") as member:
            np.lib.format.write_array(member, rows)
    with pytest.raises(HSW2VError, match="corrupt model .*ngram_vectors"):
        hsw2v.load_model(str(bad))


def test_a_grown_word_starts_from_its_ngrams(model, corpus, tmp_path):
    """A word that joins the vocabulary starts where its vector stood while unseen;
    the n-gram rows and the old words' vectors stay."""
    more = tmp_path / "more.txt"
    more.write_text("historyz historyz historyz historyz historyz the history\n" * 2)
    counts = count_words(str(more), threads=1, min_count=1)
    before = model["historyz"]
    grown = grown_model(model, counts, 5, None, 1)
    assert "historyz" in grown.vocab.index and len(grown.vocab) == len(model.vocab) + 1
    np.testing.assert_allclose(grown["historyz"], before, rtol=1e-5, atol=1e-7)
    assert np.array_equal(grown.ngram_vectors, model.ngram_vectors)
    np.testing.assert_allclose(grown["history"], model["history"], rtol=1e-6)


def test_every_pair_is_scored_with_the_vectors_built_for_unseen_words(model, tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("history\thistoryz\t9\nthe\tqqqqzz\t1\nhistory\tthe\t3\nwar\tthe\t2\n")
    with_built = evaluate_word_pairs(model.keyed_vectors(), str(pairs))
    without = evaluate_word_pairs(Vectors(model.words, model.word_vectors), str(pairs))
    assert (with_built["pairs"], with_built["oov"], with_built["built"]) == (4, 0, 2)
    assert (without["pairs"], without["oov"], without["built"]) == (2, 2, 0)
