"""hsw2v.model.vectors: word vectors, their unit rows and 3CosAdd neighbours against
brute force in float64 numpy, and the checks of what they are given."""
from __future__ import annotations

import numpy as np
import pytest

from hsw2v.errors import HSW2VError, UnknownWordError
from hsw2v.model.vectors import Vectors, positive_count, unknown_word_message, word_list

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture(scope="module")
def vectors() -> Vectors:
    rng = np.random.default_rng(11)
    return Vectors(WORDS, rng.normal(size=(len(WORDS), 9)).astype(np.float32))


def unit_reference(matrix: np.ndarray) -> np.ndarray:
    m = matrix.astype(np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def brute_force(v: Vectors, positive, negative, topn, restrict=None):
    """3CosAdd over every candidate row in float64, the query words left out."""
    unit = unit_reference(v.matrix)
    query = sum((unit[WORDS.index(w)] for w in positive), np.zeros(v.dim)) - sum(
        (unit[WORDS.index(w)] for w in negative), np.zeros(v.dim))
    query /= np.linalg.norm(query)
    n = len(WORDS) if restrict is None else restrict
    scored = [(WORDS[i], float(unit[i] @ query)) for i in range(n)
              if WORDS[i] not in (*positive, *negative)]
    return sorted(scored, key=lambda ws: -ws[1])[:topn]


def test_unit_rows_are_the_rows_over_their_norms():
    """Unit rows equal numpy's in float64, zero rows stay zero, and rows near float32's
    largest value (whose squares overflow float32) are still unit length."""
    rng = np.random.default_rng(2)
    matrix = rng.normal(size=(6, 5)).astype(np.float32)
    matrix[2] = 0.0
    matrix[4] = [3.0e38, -2.5e38, 1.0e38, 3.3e38, 0.0]
    v = Vectors([f"u{i}" for i in range(6)], matrix)
    assert v.unit.dtype == np.float32 and np.isfinite(v.unit).all()
    np.testing.assert_allclose(v.unit, unit_reference(matrix), rtol=0, atol=1e-6)
    assert not v.unit[2].any()
    assert v.unit is v.unit  # computed once


@pytest.mark.parametrize(("positive", "negative", "topn", "restrict"), [
    (["w3"], [], 10, None), ("w3", (), 5, None), (["w1", "w7"], ["w30"], 8, None),
    ([], ["w5"], 4, None), (["w2"], ["w9"], 6, 15), (["w20"], [], 3, 10), (["w4"], [], 100, None)])
def test_most_similar_is_brute_force_3cosadd(vectors, positive, negative, topn, restrict):
    """The nearest rows to the mean of unit positive minus unit negative vectors, in
    order, without the query's words, among the first ``restrict`` rows when given;
    a ``topn`` past the candidates gives them all."""
    got = vectors.most_similar(positive, negative, topn=topn, restrict=restrict)
    positive = [positive] if isinstance(positive, str) else list(positive)
    want = brute_force(vectors, positive, list(negative), topn, restrict)
    assert [w for w, _ in got] == [w for w, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert all(isinstance(s, float) for _, s in got)


def test_lookups_and_sizes(vectors):
    for i in (0, 17, len(WORDS) - 1):
        assert vectors.index_of(f"w{i}") == i
        assert np.array_equal(vectors[f"w{i}"], vectors.matrix[i])
    assert len(vectors) == len(WORDS) and vectors.dim == 9
    assert "w5" in vectors and "w50" not in vectors and 5 not in vectors
    assert repr(vectors) == f"Vectors<vocab={len(WORDS)}, vector_size=9>"


def test_the_matrix_is_float32_rows_one_a_word():
    """Any array of the right shape becomes C-ordered float32 of the same values; a
    wrong shape, and a row holding NaN or infinity (named by word and 1-based row),
    are refused."""
    m64 = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4) / 8)
    v = Vectors(["a", "b", "c"], m64)
    assert v.matrix.dtype == np.float32 and v.matrix.flags.c_contiguous
    assert np.array_equal(v.matrix, m64)
    for bad in (np.ones((2, 4)), np.ones(3), np.ones((3, 4, 1))):
        with pytest.raises(HSW2VError, match="3 words but a matrix of shape"):
            Vectors(["a", "b", "c"], bad)
    for value, row in ((np.nan, 1), (np.inf, 2), (-np.inf, 0)):
        m = np.ones((3, 4), np.float32)
        m[row, 2] = value
        word = "abc"[row]
        with pytest.raises(HSW2VError) as e:
            Vectors(list("abc"), m)
        assert str(e.value) == f"the vector of {word!r} (row {row + 1}) holds NaN or infinity"


def test_queries_that_cannot_be_answered_are_one_error(vectors):
    """No words, words that cancel out, an unknown word (a KeyError too, with a close
    spelling), and counts that are not positive whole numbers."""
    with pytest.raises(HSW2VError, match="at least one word"):
        vectors.most_similar([], [])
    with pytest.raises(HSW2VError, match="cancel out"):
        vectors.most_similar(["w3"], ["w3"])
    with pytest.raises(UnknownWordError) as e:
        vectors.most_similar(["w3x"])
    assert isinstance(e.value, KeyError) and "'w3x'" in str(e.value) and "w3" in str(e.value)
    for topn in (0, -1, 2.0, "3", True, None):
        with pytest.raises(HSW2VError, match="topn"):
            vectors.most_similar("w1", topn=topn)
    with pytest.raises(HSW2VError, match="restrict"):
        vectors.most_similar("w1", restrict=0)
    assert len(vectors.most_similar("w1", topn=np.int64(3))) == 3


def test_word_lists_and_counts():
    """A word is a list of one; any iterable of ``str`` is a list; bytes, numbers and
    None are refused, naming the parameter. Counts are positive whole numbers, as int."""
    assert word_list("king", "positive") == ["king"]
    assert word_list(("a", "b"), "positive") == ["a", "b"]
    assert word_list((w for w in "xyz"), "positive") == ["x", "y", "z"]
    assert word_list([], "negative") == []
    for bad in (b"king", bytearray(b"k"), 3, None, ["a", b"b"], ["a", None], [1]):
        with pytest.raises(HSW2VError, match="^positive must"):
            word_list(bad, "positive")
    for good in (1, 7, np.int32(4), np.uint64(2)):
        got = positive_count(good, "topn")
        assert got == int(good) and type(got) is int
    for bad in (0, -2, 1.0, "1", True, np.bool_(True), None):
        with pytest.raises(HSW2VError, match="^topn must"):
            positive_count(bad, "topn")


def test_unknown_word_messages_name_close_spellings_only():
    """A one-letter slip is named; a word of other letters is not, nor one three letters
    longer however alike; at most ``limit`` names; no hint when nothing is close."""
    vocabulary = ["queen", "king", "kings", "castle", "kin", "ring"]
    message = unknown_word_message("kingz", vocabulary, limit=10)
    assert message.startswith("unknown word 'kingz'; did you mean ")
    named = message.split("did you mean ")[1].removesuffix("?").split(", ")
    assert {"king", "kings"} <= set(named) and not {"queen", "castle"} & set(named)
    assert len(unknown_word_message("kingz", vocabulary, limit=2).split(", ")) == 2
    assert unknown_word_message("king", ["kingdom", "kings"]).endswith("did you mean kings?")
    assert unknown_word_message("zzzzzz", vocabulary) == "unknown word 'zzzzzz'"
