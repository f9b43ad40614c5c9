import os

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.files import atomic_write
from hsw2v.model import load_model, read_vectors
from hsw2v.trainer import train
from hsw2v.word2vec_format import write_vectors

WORDS = ["the", "naïve", "日本", "x"]


@pytest.fixture
def matrix():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(4, 7)).astype(np.float32)
    m[0, 0] = np.float32(1e-30)  # tiny and huge values survive too
    m[1, 1] = np.float32(3.4e38)
    return m


@pytest.mark.parametrize("binary", [False, True])
def test_vectors_round_trip_exactly(tmp_path, matrix, binary):
    path = str(tmp_path / "v.bin")
    write_vectors(path, WORDS, matrix, binary=binary)
    assert not os.path.exists(path + ".cache")  # only when asked
    v = read_vectors(path)
    assert v.words == WORDS
    assert np.array_equal(v.matrix, matrix)


@pytest.mark.parametrize("binary", [False, True])
def test_gensim_loads_identical_vectors(tmp_path, matrix, binary):
    gensim = pytest.importorskip("gensim")
    path = str(tmp_path / "v.txt")
    write_vectors(path, WORDS, matrix, binary=binary)
    kv = gensim.models.KeyedVectors.load_word2vec_format(path, binary=binary)
    assert list(kv.index_to_key) == WORDS
    assert np.array_equal(kv.vectors, matrix)


def test_text_header_is_word2vec(tmp_path, matrix):
    path = tmp_path / "v.txt"
    write_vectors(str(path), WORDS, matrix)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "4 7"
    assert lines[1].split(" ")[0] == "the" and len(lines[1].split(" ")) == 8


@pytest.mark.parametrize(
    "content, message",
    [
        ("2 3\na 1 2 3\nb 1 2\n", "expected a word and 3 values, got 2"),
        ("3 2\na 1 2\nb 1 2\n", "header says 3 words"),
        ("hello world\n", "not a word2vec file"),
        ("1 2\na 1 zz\n", "not a number"),
    ],
)
def test_bad_vectors_files(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(HSW2VError, match=message):
        read_vectors(str(path))


def test_binary_with_wrong_dimension(tmp_path, matrix):
    path = tmp_path / "v.bin"
    write_vectors(str(path), WORDS, matrix, binary=True)
    data = path.read_bytes().replace(b"4 7\n", b"4 6\n", 1)
    path.write_bytes(data)
    os.utime(path, ns=(0, 0))  # the cache no longer matches
    with pytest.raises(HSW2VError):
        read_vectors(str(path))


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("precious")
    with pytest.raises(RuntimeError), atomic_write(str(path), "w") as f:
        f.write("half")
        raise RuntimeError("boom")
    assert path.read_text() == "precious"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_missing_directory(tmp_path, matrix):
    with pytest.raises(HSW2VError, match="does not exist"):
        write_vectors(str(tmp_path / "nope" / "v.txt"), WORDS, matrix)


def test_model_round_trip(tmp_path, small_corpus):
    model = train(small_corpus, min_count=1, dim=8, epochs=1, threads=1, progress=False)
    path = str(tmp_path / "m.npz")
    model.save(path)
    back = load_model(path)
    assert back.words == model.words
    assert np.array_equal(back.vocab.counts, model.vocab.counts)
    assert np.array_equal(back.tree.children, model.tree.children)
    assert np.array_equal(back.vectors, model.vectors)
    assert np.array_equal(back.node_vectors, model.node_vectors)
    assert back.settings == model.settings
    assert back.epoch_loss == model.epoch_loss and back.seconds == model.seconds
    # the model file is plain .npz with no object arrays
    with np.load(path, allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)


def test_corrupt_and_foreign_models(tmp_path, small_corpus):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(HSW2VError):
        load_model(str(garbage))
    other = tmp_path / "other.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(HSW2VError, match="not an hsw2v model"):
        load_model(str(other))
    model = train(small_corpus, min_count=1, dim=4, epochs=1, threads=1, progress=False)
    path = str(tmp_path / "m.npz")
    model.save(path)
    with np.load(path) as z:
        arrays = dict(z)
    arrays["meta"] = np.frombuffer(
        arrays["meta"].tobytes().replace(b'"version": 1', b'"version": 99'), dtype=np.uint8)
    np.savez(tmp_path / "v99.npz", **arrays)
    with pytest.raises(HSW2VError, match="version 99"):
        load_model(str(tmp_path / "v99.npz"))
    with pytest.raises(HSW2VError, match="no such file"):
        load_model(str(tmp_path / "absent.npz"))


def test_cache_sidecar_is_used_only_while_fresh(tmp_path, matrix):
    path = tmp_path / "v.txt"
    write_vectors(str(path), WORDS, matrix, cache=True)
    cache = tmp_path / "v.txt.cache"
    assert cache.exists()
    assert np.array_equal(read_vectors(str(path)).matrix, matrix)
    # replace the text file by hand: the stale cache must be ignored
    other = matrix + 1
    lines = [f"{len(WORDS)} {matrix.shape[1]}"] + [
        w + " " + " ".join(f"{x:.9g}" for x in row) for w, row in zip(WORDS, other)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert np.array_equal(read_vectors(str(path)).matrix, other)
    cache.write_bytes(b"junk")  # a corrupt cache is ignored too
    assert np.array_equal(read_vectors(str(path)).matrix, other)


def test_text_values_print_like_printf_and_round_trip():
    """The formatting kernel writes what '%.9g' writes, and every float32 reads back."""
    from hsw2v.word2vec_format import format_g9

    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, 1e-4, 9.99999e-5, 1e8, 1e9, 123456789, 1234567890, 0.1,
               3.4e38, 1e-45, 1.17549435e-38, np.inf, -np.inf, 100.0, 5e-5]
    spread = rng.normal(0, 1, 5000) * 10.0 ** rng.integers(-40, 38, 5000)
    values = np.concatenate([special, rng.normal(0, 0.3, 20000), spread]).astype(np.float32)
    out = np.empty(32, np.uint8)
    for v in values:
        text = out[:format_g9(np.float64(v), out, 0)].tobytes().decode()
        assert text == f"{float(v):.9g}"
        assert np.float32(float(text)) == v or (np.isinf(v) and float(text) == v)
    assert out[:format_g9(np.float64("nan"), out, 0)].tobytes() == b"nan"


def test_model_settings_are_typed_and_checked(tmp_path, small_corpus):
    """Settings load as TrainSettings; a wrong type names the field; files of the
    earlier layout (tree kind in the settings) still load."""
    import json

    model = train(small_corpus, min_count=1, dim=4, epochs=1, threads=1, progress=False)
    path = tmp_path / "m.npz"
    model.save(str(path))
    with np.load(path) as z:
        arrays = dict(z)
    meta = json.loads(arrays["meta"].tobytes())

    def with_settings(settings, name):
        out = tmp_path / name
        np.savez(out, **{**arrays, "meta": np.frombuffer(
            json.dumps({**meta, "settings": settings}).encode(), dtype=np.uint8)})
        return str(out)

    back = load_model(with_settings({**meta["settings"], "tree": "semantic-adaptive",
                                     "window": 3.0}, "old.npz"))
    assert (back.settings.tree, back.settings.split, back.settings.window) == ("semantic", "adaptive", 3)
    assert isinstance(back.settings.window, int) and back.settings.dim == 4
    for bad, field in [({**meta["settings"], "window": "x"}, "window"),
                       ({**meta["settings"], "cbow_mean": 1}, "cbow_mean"),
                       ({**meta["settings"], "arch": "lstm"}, "--arch"),
                       ({**meta["settings"], "epoch_loss": "low"}, "epoch_loss"),
                       (["not", "a", "dict"], "JSON object")]:
        with pytest.raises(HSW2VError, match=field):
            load_model(with_settings(bad, "bad.npz"))
