"""hsw2v.model.model in process: predictions and the context against a numpy reference,
log-probabilities, 3CosAdd neighbours, writing vectors (parsed back by hand) and
gensim-style lookups.

Models here are built directly (random vectors over a Huffman tree), so every test
is fast and its expected values come from numpy, never from the package's own
kernels, paths or readers."""
from __future__ import annotations
import io
import os

import numpy as np
import pytest

import hsw2v
from hsw2v.errors import HSW2VError
from hsw2v.model.model import Model
from hsw2v.model.reading import read_vectors
from hsw2v.model.vectors_cache import entry_of

from tests.helpers import make_model
from tests.references.softmax import reference_context, reference_log_probs, reference_top


V, DIM = 20, 6


@pytest.fixture(scope="module", params=["cbow", "cbow-sum", "skipgram"])
def model(request):
    arch = request.param.split("-")[0]
    return make_model(arch, cbow_mean=request.param != "cbow-sum")


CONTEXTS = [["w3"], ["w0", "w7"], ["w19", "w2", "w11"], ["w5", "w5", "w14", "w1"]]


def test_context_matrix_is_the_mean_sum_or_rows(model):
    for context in CONTEXTS:
        H = model.context_matrix(context)
        assert H.dtype == np.float32
        expect = reference_context(model, context)
        assert H.shape == expect.shape == ((1, DIM) if model.arch == "cbow" else (len(context), DIM))
        np.testing.assert_allclose(H, expect, rtol=1e-5, atol=1e-6)
    # a string is one word, not a sequence of characters
    np.testing.assert_allclose(model.context_matrix("w12"), [model.vectors[12]], rtol=1e-6)


def test_unknown_context_words_are_skipped_with_a_warning(model):
    with pytest.warns(UserWarning) as caught:
        H = model.context_matrix(["qq1", "w4", "qq2", "w9"])
    [warning] = caught
    assert "skipping unknown context words: qq1 qq2" in str(warning.message)
    np.testing.assert_allclose(H, reference_context(model, ["w4", "w9"]), rtol=1e-5, atol=1e-6)


def test_the_warning_points_at_the_callers_line(model):
    with pytest.warns(UserWarning) as caught:
        model.predict(["w1", "qq"], 3)
    package = os.path.dirname(os.path.abspath(hsw2v.__file__))
    assert not os.path.abspath(caught[0].filename).startswith(package + os.sep)
    if "MUTANT_UNDER_TEST" not in os.environ:  # mutmut's trampolines add stack frames
        assert caught[0].filename == __file__


def test_no_known_context_word(model):
    with pytest.raises(HSW2VError) as e:
        model.predict(["qq1", "qq2"])
    assert "no known context word (unknown: qq1 qq2)" in str(e.value)
    with pytest.raises(HSW2VError) as e:
        model.predict([])
    assert str(e.value).endswith("no known context word")


def test_predict_is_the_exact_top_n(model):
    for context in CONTEXTS:
        ref = reference_log_probs(model, context)
        top = model.predict(context)  # ten by default
        assert [w for w, _ in top] == reference_top(model, context, 10)
        for w, p in top:
            assert p == pytest.approx(np.exp(ref[model.words.index(w)]), rel=1e-4)
        assert [w for w, _ in model.predict(context, 1)] == reference_top(model, context, 1)
        everything = model.predict(context, V + 5)  # more than the vocabulary: all of it
        assert [w for w, _ in everything] == reference_top(model, context, V)
    assert model.predict("w6", 4) == model.predict(["w6"], 4)


@pytest.mark.parametrize("topn", [0, -3])
def test_topn_must_be_positive(model, topn):
    for call in (lambda: model.predict(["w1"], topn), lambda: model.predict_many([["w1"]], topn)):
        with pytest.raises(HSW2VError, match=f"topn must be positive, got {topn}"):
            call()


def test_predict_many_equals_the_reference_and_predict(model):
    assert model.predict_many([]) == []
    batch = model.predict_many(CONTEXTS)  # contexts of different lengths share a batch
    assert len(batch) == len(CONTEXTS)
    for context, got in zip(CONTEXTS, batch):
        ref = reference_log_probs(model, context)
        assert [w for w, _ in got] == reference_top(model, context, 10)
        for w, p in got:
            assert p == pytest.approx(np.exp(ref[model.words.index(w)]), rel=1e-4)
        single = model.predict(context, 10)
        assert [w for w, _ in got] == [w for w, _ in single]
        np.testing.assert_allclose([p for _, p in got], [p for _, p in single], rtol=1e-12)
    ones = model.predict_many(CONTEXTS, 1)
    assert [[w for w, _ in top] for top in ones] == [reference_top(model, c, 1) for c in CONTEXTS]
    all_of_them = model.predict_many(CONTEXTS[:2], V + 1)
    assert [[w for w, _ in top] for top in all_of_them] == [reference_top(model, c, V)
                                                            for c in CONTEXTS[:2]]


def test_log_prob_and_all_log_probs_equal_the_reference(model):
    for context in CONTEXTS:
        ref = reference_log_probs(model, context)
        got = model.all_log_probs(context)
        assert got.dtype == np.float64 and got.shape == (V,)
        np.testing.assert_allclose(got, ref, atol=1e-5)
        for w in (0, 7, V - 1):
            assert model.log_prob(f"w{w}", context) == pytest.approx(ref[w], abs=1e-5)
    if model.arch != "skipgram":  # one context row: a normalised distribution
        assert np.exp(model.all_log_probs(["w2", "w8"])).sum() == pytest.approx(1.0, abs=1e-6)


def test_log_prob_of_an_unknown_word_names_it(model):
    with pytest.raises(HSW2VError) as e:
        model.log_prob("w1x", ["w2"])
    message = str(e.value)
    assert "'w1x'" in message and "did you mean" in message and "w1" in message.split("mean")[1]


def reference_most_similar(m: Model, positive, negative, n):
    unit = m.vectors / np.linalg.norm(m.vectors, axis=1, keepdims=True)
    query = sum(unit[m.words.index(w)] for w in positive) - sum(
        (unit[m.words.index(w)] for w in negative), np.zeros(m.dim))
    sims = unit @ (query / np.linalg.norm(query))
    order = [i for i in np.argsort(-sims) if m.words[i] not in (*positive, *negative)]
    return [(m.words[i], sims[i]) for i in order[:n]]


@pytest.mark.parametrize("positive, negative, n", [
    (["w3"], [], None), (["w3", "w8"], ["w1"], 3), (["w0"], ["w17", "w4"], 5)])
def test_most_similar_is_3cosadd(positive, negative, n):
    m = make_model(seed=3)
    got = m.most_similar(positive, negative) if n is None else m.most_similar(positive, negative, n)
    expect = reference_most_similar(m, positive, negative, 10 if n is None else n)
    assert [w for w, _ in got] == [w for w, _ in expect]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expect], atol=1e-5)


def parse_text(data: bytes):
    lines = data.decode("utf-8").splitlines()
    n, d = map(int, lines[0].split())
    rows = [line.split(" ") for line in lines[1:]]
    assert len(rows) == n and all(len(r) == d + 1 for r in rows)
    return [r[0] for r in rows], np.array([[float(x) for x in r[1:]] for r in rows], np.float32)


def parse_binary(data: bytes):
    header, _, rest = data.partition(b"\n")
    n, d = map(int, header.split())
    words, rows, pos = [], [], 0
    for _ in range(n):
        space = rest.index(b" ", pos)
        words.append(rest[pos:space].decode("utf-8"))
        rows.append(np.frombuffer(rest[space + 1:space + 1 + 4 * d], dtype="<f4"))
        pos = space + 1 + 4 * d
        assert rest[pos:pos + 1] == b"\n"
        pos += 1
    assert pos == len(rest)
    return words, np.array(rows)


def test_save_vectors_text_binary_and_cache(tmp_path):
    m = make_model(seed=5)
    text = str(tmp_path / "v.txt")
    m.save_vectors(text)  # text, and no sidecar, unless asked
    words, matrix = parse_text((tmp_path / "v.txt").read_bytes())
    assert words == m.words and np.array_equal(matrix, m.vectors)  # %.9g: float32 exactly
    assert sorted(os.listdir(tmp_path)) == ["v.txt"]
    binary = str(tmp_path / "v.bin")
    m.save_vectors(binary, binary=True, cache=True)
    words, matrix = parse_binary((tmp_path / "v.bin").read_bytes())
    assert words == m.words and np.array_equal(matrix, m.vectors)
    assert entry_of(binary).exists() and sorted(os.listdir(tmp_path)) == ["v.bin", "v.txt"]
    again = read_vectors(binary)
    assert again.words == m.words and np.array_equal(again.matrix, m.vectors)


def test_write_vectors_into_an_open_file():
    m = make_model(seed=6)
    f = io.BytesIO()
    m.write_vectors(f)
    words, matrix = parse_text(f.getvalue())
    assert words == m.words and np.array_equal(matrix, m.vectors)
    f = io.BytesIO()
    m.write_vectors(f, binary=True)
    words, matrix = parse_binary(f.getvalue())
    assert words == m.words and np.array_equal(matrix, m.vectors)


def test_read_vectors_makes_a_cache_only_when_asked(tmp_path):
    m = make_model(seed=7)
    path = tmp_path / "hand.txt"
    path.write_text(f"{V} {DIM}\n" + "".join(
        w + "".join(f" {x!r}" for x in row.tolist()) + "\n" for w, row in zip(m.words, m.vectors)))
    got = read_vectors(str(path))
    assert got.words == m.words and np.array_equal(got.matrix, m.vectors)
    assert os.listdir(tmp_path) == ["hand.txt"]
    read_vectors(str(path), make_cache=True)
    assert os.listdir(tmp_path) == ["hand.txt"] and entry_of(str(path)).exists()
    m.save(str(tmp_path / "m.npz"))
    got = read_vectors(str(tmp_path / "m.npz"))
    assert got.words == m.words and np.array_equal(got.matrix, m.vectors)


@pytest.mark.parametrize("kind", ["model", "vectors"])
def test_lookups_as_gensim_users_write_them(kind):
    """``m["word"]`` is the word's row, ``"word" in m`` says whether it has one, and an
    unknown word raises a KeyError (as gensim's KeyedVectors do) that is also one of
    ours, naming close spellings."""
    m = make_model()
    target = m if kind == "model" else m.keyed_vectors()
    for i in (0, 7, V - 1):
        assert np.array_equal(target[f"w{i}"], m.vectors[i])
    assert "w3" in target and "w99" not in target and 5 not in target
    assert len(target) == V
    with pytest.raises(KeyError) as caught:
        target["w3x"]
    assert isinstance(caught.value, HSW2VError)
    assert "'w3x'" in str(caught.value) and "w3" in str(caught.value)


def test_repr_is_a_summary_as_gensims():
    """A notebook cell showing a model prints its size and kind, not every vector."""
    model = make_model(v=300, dim=50)
    shown = repr(model)
    assert len(shown) < 200 and "\n" not in shown
    assert shown.startswith("Model<") and f"vocab={model.vectors.shape[0]}," in shown
    assert f"vector_size={model.vectors.shape[1]}," in shown and "arch=cbow" in shown
    assert "tree=huffman" in shown and "epochs=2" in shown
    assert f"{model.vectors[0, 0]:.4f}"[:5] not in shown
    for part in (model.vocab, model.tree, model.keyed_vectors()):
        assert len(repr(part)) < 100 and "300" in repr(part)


WRONG_TYPED = '''
import sys, hsw2v
from tests.helpers import make_model
m = make_model(v=30, dim=6)
lm_words = [f"w{i}" for i in range(10)]
lm = hsw2v.train(sentences=[lm_words[i:] + lm_words[:i] for i in range(10)] * 3, arch="lbl",
                 tree="huffman", dim=8, window=2, epochs=1, min_count=1, threads=1, progress=False)
cases = [lambda: m.predict(3), lambda: m.predict(["w1"], topn="5"), lambda: m.predict(["w1"], topn=2.5),
         lambda: m.most_similar(3), lambda: m.most_similar("w1", topn="x"),
         lambda: m.most_similar(["w1"], negative=5), lambda: m.predict_many([[1]]),
         lambda: lm.predict(b"w1"), lambda: lm.predict([1, 2]), lambda: lm.predict([None]),
         lambda: lm.log_prob("w1", [b"w2"]), lambda: lm.log_prob(b"w1", ["w2"]),
         lambda: lm.log_prob([1]), lambda: hsw2v.score(3, "x.txt"),
         lambda: hsw2v.score(lm, "x.txt", threads=-2), lambda: hsw2v.score(lm, "x.txt", window="2")]
for case in cases:
    try:
        case()
        print("no error")
    except hsw2v.HSW2VError as e:
        print("HSW2VError", str(e).split(" ")[0])
'''


def test_wrong_typed_calls_raise_one_error_naming_the_parameter(tmp_path):
    """Hostile round five, items 7 and 12: words that are not ``str`` (bytes, numbers,
    None) and counts that are not whole numbers are refused, never taken as
    ``<unk>`` or let through to a bare TypeError; the error names the parameter."""
    import subprocess
    import sys

    from tests.helpers import REPO

    (tmp_path / "x.txt").write_text("w1 w2 w3\n")
    done = subprocess.run([sys.executable, "-c", WRONG_TYPED], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:-1] == [f"HSW2VError {name}" for name in (
        "context", "topn", "topn", "positive", "topn", "negative", "context", "context", "context",
        "context", "context", "words", "words", "model", "threads", "window")]


@pytest.mark.parametrize("array", [
    np.random.default_rng(0).random((300_000, 7), dtype=np.float32),  # several 1 MB chunks
    np.arange(12, dtype=np.int32).reshape(3, 4), np.zeros((0, 5), np.float32),
    np.frombuffer(b"{\"a\": 1}", dtype=np.uint8), np.arange(10.0)[::2]])  # (not contiguous)
def test_model_members_are_numpys_npy_bytes(array):
    """The model file's members are the bytes numpy's own writer gives, and
    np.load reads them back, whether written a chunk at a time or by numpy."""
    from hsw2v.model.model import write_npy

    ours, numpys = io.BytesIO(), io.BytesIO()
    write_npy(ours, array)
    np.save(numpys, array, allow_pickle=False)
    assert ours.getvalue() == numpys.getvalue()
    ours.seek(0)
    np.testing.assert_array_equal(np.load(ours), array)
