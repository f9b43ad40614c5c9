"""hsw2v.model.reading: model files written and loaded back (round trips down to two
words and one dimension), and files that are damaged, hostile or too large, each
refused in one line naming the file.

Models here are built directly (random vectors over a Huffman tree), so every test
is fast and its expected values come from numpy, never from the package's own
kernels, paths or readers."""
from __future__ import annotations
import io
import json
import os
import zipfile
from dataclasses import asdict

import numpy as np
import pytest

import hsw2v
import hsw2v.model.reading as reading_module
from hsw2v.errors import HSW2VError
from hsw2v.model.model import Model
from hsw2v.model.reading import load_model
from hsw2v.settings import TrainSettings
from hsw2v.training.kinds import model_kinds

from tests.helpers import REPO, make_model, model_bomb
from tests.references.softmax import reference_top

V, DIM = 20, 6  # make_model's


def npz_arrays(path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return dict(z)


def assert_same_model(a: Model, b: Model):
    assert a.words == b.words
    assert np.array_equal(a.vocab.counts, b.vocab.counts)
    assert np.array_equal(a.tree.children, b.tree.children) and a.tree.kind == b.tree.kind
    for x, y in ((a.vectors, b.vectors), (a.node_vectors, b.node_vectors)):
        assert x.dtype == y.dtype == np.float32 and np.array_equal(x, y)
    assert asdict(a.settings) == asdict(b.settings)
    assert a.epoch_loss == b.epoch_loss and a.seconds == b.seconds


def test_the_file_holds_plain_arrays(tmp_path):
    m = make_model("skipgram", seed=8)
    m.words[0] = "naïve"  # UTF-8 words of several bytes
    m.vocab.index = {w: i for i, w in enumerate(m.words)}
    path = str(tmp_path / "m.npz")
    m.save(path)
    z = npz_arrays(path)
    meta = json.loads(z["meta"].tobytes().decode())
    assert (meta["format"], meta["version"], meta["tree"]) == ("hsw2v-model", 1, "huffman")
    assert meta["settings"]["arch"] == "skipgram" and meta["settings"]["epoch_loss"] == [2.5, 1.25]
    assert meta["settings"]["train_seconds"] == 3.0 and meta["settings"]["tree_seconds"] == 0.5
    assert z["words"].tobytes() == "".join(m.words).encode()
    assert z["word_offsets"].tolist() == [0, *np.cumsum([len(w.encode()) for w in m.words])]
    assert np.array_equal(z["counts"], m.vocab.counts)
    assert np.array_equal(z["children"], m.tree.children)
    assert np.array_equal(z["vectors"], m.vectors)
    assert np.array_equal(z["node_vectors"], m.node_vectors)
    assert_same_model(load_model(path), m)


@pytest.mark.parametrize("v, dim, tree", [(2, 1, "huffman"), (3, 2, "balanced"),
                                         (40, 9, "huffman"), (33, 5, "balanced")])
def test_round_trip_down_to_two_words_and_one_dimension(tmp_path, v, dim, tree):
    m = make_model(v=v, dim=dim, seed=v, tree=tree)
    m.save(str(tmp_path / "m.npz"))
    loaded = load_model(str(tmp_path / "m.npz"))
    assert_same_model(loaded, m)
    assert loaded.tree.kind == tree and loaded.vocab.counts.min() == 1
    assert [w for w, _ in loaded.predict(["w1"], 2)] == reference_top(m, ["w1"], 2)


def test_a_trained_model_round_trips(small_corpus, tmp_path):
    m = hsw2v.train(small_corpus, dim=8, epochs=1, min_count=1, threads=1, progress=False)
    m.save(str(tmp_path / "m.npz"))
    loaded = load_model(str(tmp_path / "m.npz"))
    assert_same_model(loaded, m)
    assert len(loaded.epoch_loss) == 1 and "train" in loaded.seconds
    context = m.words[:3]
    assert loaded.predict(context, 5) == m.predict(context, 5)


@pytest.mark.newest_only
@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_node_biases_round_trip_and_must_match_the_settings(small_corpus, tmp_path, arch):
    """A --node-bias model keeps each node's bias as the column after its vector,
    round-trips, and predicts with it; a bias column that the settings do not
    declare (or a missing one that they do) is refused in one line."""
    m = hsw2v.train(small_corpus, arch=arch, dim=8, epochs=2, min_count=1, threads=1,
                    node_bias=True, progress=False)
    assert m.node_vectors.shape == (len(m.words) - 1, 9) and np.abs(m.node_vectors[:, 8]).max() > 0
    m.save(str(tmp_path / "m.npz"))
    loaded = load_model(str(tmp_path / "m.npz"))
    assert_same_model(loaded, m)
    assert loaded.settings.node_bias and loaded.predict(m.words[:2], 5) == m.predict(m.words[:2], 5)
    z = npz_arrays(tmp_path / "m.npz")
    meta = meta_of(z)
    meta["settings"]["node_bias"] = False
    assert ("always trains node biases" if arch == "lbl"  # (LBL's nodes always have biases)
            else "node_vectors has 9 columns for vectors of 8, node_bias False") in refused(
        tmp_path, with_meta(z, meta))
    plain = npz_arrays(tmp_path / "m.npz")
    plain["node_vectors"] = plain["node_vectors"][:, :8].copy()
    assert "node_vectors has 8 columns for vectors of 8, node_bias True" in refused(tmp_path, plain)
    zeroed = npz_arrays(tmp_path / "m.npz")  # zero biases: the model without them
    zeroed["node_vectors"][:, 8] = 0
    meta["settings"]["node_bias"] = True
    plain_meta = json.loads(json.dumps(meta))
    plain_meta["settings"]["node_bias"] = False
    without = {**zeroed, "node_vectors": zeroed["node_vectors"][:, :8].copy()}
    if arch == "lbl":
        return
    a, b = loads(tmp_path, zeroed), loads(tmp_path, with_meta(without, plain_meta))
    np.testing.assert_allclose(a.all_log_probs(m.words[:3]), b.all_log_probs(m.words[:3]),
                               atol=1e-9)


@pytest.fixture
def saved(tmp_path):
    """(directory, arrays of a good model file m.npz)."""
    make_model(seed=11).save(str(tmp_path / "m.npz"))
    return tmp_path, npz_arrays(tmp_path / "m.npz")


def meta_of(arrays) -> dict:
    return json.loads(arrays["meta"].tobytes())


def with_meta(arrays, meta) -> dict:
    return {**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)}


def refused(directory, arrays, **savez) -> str:
    """Save ``arrays`` as bad.npz; load_model must refuse it with one line naming it."""
    path = str(directory / "bad.npz")
    np.savez(path, **arrays, **savez)
    with pytest.raises(HSW2VError) as e:
        load_model(path)
    message = str(e.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    return message


def loads(directory, arrays) -> Model:
    path = str(directory / "good.npz")
    np.savez(path, **arrays)
    return load_model(path)


def test_missing_arrays_are_named(saved):
    d, z = saved
    del z["vectors"], z["counts"]
    assert "not an hsw2v model (missing counts, vectors)" in refused(d, z)
    assert "(missing meta)" in refused(d, {k: v for k, v in npz_arrays(d / "m.npz").items()
                                           if k != "meta"})


def test_not_a_file_or_not_a_zip(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"\x00junk" * 50)
    for name, reason in [("absent.npz", "no such file"), ("", "is a directory"),
                         ("junk.npz", "not an hsw2v model file (File is not a zip file)")]:
        path = str(tmp_path / name)
        with pytest.raises(HSW2VError) as e:
            load_model(path)
        assert str(e.value) == f"{path}: {reason}"


@pytest.mark.parametrize("key, change, fragment", [
    ("counts", lambda a: a.astype(np.int32), "counts is int32, not C-order int64"),
    ("vectors", lambda a: a.astype(np.float64), "vectors is float64, not C-order float32"),
    ("vectors", lambda a: a.astype(">f4"), "vectors is >f4, not C-order float32"),
    ("words", lambda a: a.astype(np.int8), "words is int8, not C-order uint8"),
    ("meta", lambda a: np.array([json.loads(a.tobytes())], dtype=object), "meta is object"),
    ("counts", lambda a: np.array(5), "counts has shape ()"),
    ("counts", lambda a: a[:1], "counts has shape (1,)"),
    ("counts", lambda a: np.repeat(a[:, None], 2, axis=1), f"counts has shape ({V}, 2)"),
    ("vectors", lambda a: a[:, 0].copy(), f"vectors has shape ({V},)"),
    ("vectors", lambda a: a[:, :0], f"vectors has shape ({V}, 0)"),
    ("vectors", lambda a: a[:-1], f"vectors has shape ({V - 1}, {DIM})"),
    ("node_vectors", lambda a: a[:, :-1], f"node_vectors has shape ({V - 1}, {DIM - 1})"),
    ("children", lambda a: a[:-1], f"children has shape ({V - 2}, 2)"),
    ("word_offsets", lambda a: a[:-1], f"word_offsets has shape ({V},)"),
    ("meta", lambda a: a.reshape(-1, 1), "meta has shape ("),
    ("words", lambda a: a.reshape(-1, 1), "words has shape ("),
])
def test_declared_types_and_shapes_are_checked(saved, key, change, fragment):
    d, z = saved
    z[key] = change(z[key])
    message = refused(d, z, allow_pickle=True) if key == "meta" else refused(d, z)
    assert f"corrupt model ({fragment}" in message


def test_fortran_order_is_refused_and_said(saved):
    d, z = saved
    path = d / "fortran.npz"
    with zipfile.ZipFile(path, "w") as f:
        for k, a in z.items():
            with f.open(k + ".npy", "w") as member:
                np.lib.format.write_array(member, np.asfortranarray(a) if k == "vectors" else a)
    with pytest.raises(HSW2VError, match=r"corrupt model \(vectors is float32 in Fortran order, not C-order float32\)"):
        load_model(str(path))


def write_zip(path, arrays, compression=zipfile.ZIP_STORED, version=None):
    with zipfile.ZipFile(path, "w", compression) as f:
        for k, a in arrays.items():
            with f.open(k + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, a, version=version)
    return str(path)


def test_npy_format_2_members_load(saved):
    d, z = saved
    path = write_zip(d / "v2.npz", z, version=(2, 0))
    assert_same_model(load_model(path), load_model(str(d / "m.npz")))


def test_compressed_models_load(saved):
    """np.savez_compressed of a real model (zero vectors deflate a thousandfold, and
    a stored member may be larger than a mebibyte)."""
    d, z = saved
    m = make_model(v=30, dim=1000, seed=1)
    m.vectors[:] = 0
    m.save(str(d / "big.npz"))  # stored: vectors 120 kB, node_vectors 116 kB
    z = npz_arrays(d / "big.npz")
    np.savez_compressed(d / "deflated.npz", **z)
    with zipfile.ZipFile(d / "deflated.npz") as f:
        info = f.getinfo("vectors.npy")
        assert info.file_size > 500 * info.compress_size
    assert_same_model(load_model(str(d / "deflated.npz")), m)
    m = make_model(v=40, dim=8192, seed=2)  # 1.25 MiB of vectors, stored
    m.save(str(d / "large.npz"))
    assert_same_model(load_model(str(d / "large.npz")), m)


def test_inflation_limit(saved):
    """A member may inflate to 1 MiB whatever its ratio, beyond that at most 100-fold."""
    d, _ = saved
    probe = io.BytesIO()
    np.lib.format.write_array(probe, np.zeros(1000, np.uint8))
    header = len(probe.getvalue()) - 1000  # the .npy header of a 1-D uint8 array
    # words whose last is long enough to make the words member exactly 1 MiB
    m = make_model(seed=12)
    z = npz_arrays(d / "m.npz")
    long_word = "x" * ((1 << 20) - header - sum(len(w) for w in m.words[:-1]))
    words = [*m.words[:-1], long_word]
    blob = "".join(words).encode()
    z["words"] = np.frombuffer(blob, np.uint8)
    z["word_offsets"] = np.array([0, *np.cumsum([len(w) for w in words])], np.int64)
    path = write_zip(d / "mib.npz", z, zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(path) as f:
        info = f.getinfo("words.npy")
        assert info.file_size == 1 << 20 and info.file_size > 100 * info.compress_size
    assert load_model(path).words[-1] == long_word
    # one byte more is refused, named, before anything is inflated
    z["words"] = np.frombuffer(blob + b"y", np.uint8)
    z["word_offsets"][-1] += 1
    path = write_zip(d / "over.npz", z, zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(path) as f:
        info = f.getinfo("words.npy")
    with pytest.raises(HSW2VError) as e:
        load_model(path)
    assert str(e.value).startswith(f"{path}: words would inflate {info.compress_size} bytes to "
                                   f"{(1 << 20) + 1}")
    # 1.5 MiB of zero vectors in a few kilobytes
    m = make_model(v=48, dim=8192, seed=13)
    m.vectors[:] = 0
    m.save(str(d / "zeros.npz"))
    path = write_zip(d / "zeros-deflated.npz", npz_arrays(d / "zeros.npz"), zipfile.ZIP_DEFLATED)
    with pytest.raises(HSW2VError, match="vectors would inflate"):
        load_model(path)


def test_a_model_larger_than_memory_is_refused_unread(tmp_path, monkeypatch):
    v, d = 10_000_000, 100_000  # 4 TB: more than any machine, and than the fallback
    path = model_bomb(tmp_path / "bomb.npz", v, d)
    assert os.path.getsize(path) < 100_000
    with pytest.raises(HSW2VError, match="GiB of memory available"):
        load_model(path)
    v, d = 1_000_000, 1400
    total = 2 + v + 8 * (v + 1) + 8 * v + 4 * 2 * (v - 1) + 4 * v * d + 4 * (v - 1) * d
    available = int(3.3 * 2**30)
    monkeypatch.setattr(reading_module, "available_memory", lambda: available)
    path = model_bomb(tmp_path / "bomb2.npz", v, d)
    with pytest.raises(HSW2VError) as e:
        load_model(path)
    assert str(e.value) == (f"{path}: the model would take {total / 2**30:.1f} GiB, more than the "
                            f"{available / 2**30:.1f} GiB of memory available")


def test_a_model_exactly_the_size_of_memory_loads(saved, monkeypatch):
    d, z = saved
    total = sum(a.nbytes for a in z.values())
    monkeypatch.setattr(reading_module, "available_memory", lambda: total)
    load_model(str(d / "m.npz"))
    monkeypatch.setattr(reading_module, "available_memory", lambda: total - 1)
    with pytest.raises(HSW2VError, match="more than the"):
        load_model(str(d / "m.npz"))


def fake_meminfo(monkeypatch, text):
    """Make available_memory read ``text`` as /proc/meminfo (None: unreadable)."""
    real_open = open

    def fake_open(path, *args, **kwargs):
        if path != "/proc/meminfo":
            return real_open(path, *args, **kwargs)
        if text is None:
            raise PermissionError(13, "Permission denied", path)
        return io.StringIO(text)

    import hsw2v.system.memory as memory_module  # (where available_memory reads it)

    monkeypatch.setattr(memory_module, "open", fake_open, raising=False)


def test_unknown_memory_refuses_no_model(saved, monkeypatch):
    d, _ = saved
    fake_meminfo(monkeypatch, None)
    assert reading_module.available_memory() >= 2**40  # unknown: no practical limit
    assert load_model(str(d / "m.npz")).words[0] == "w0"
    fake_meminfo(monkeypatch, "MemTotal: 8000 kB\n")  # no MemAvailable line (old kernels)
    assert load_model(str(d / "m.npz")).words[0] == "w0"


def test_a_damaged_member_is_named(tmp_path):
    """The headers are fine, the data fails its CRC: found when the arrays are read
    (vectors of 40 kB, so that reading the header does not reach the CRC)."""
    d = tmp_path
    make_model(v=100, dim=100).save(str(d / "m.npz"))
    z = npz_arrays(d / "m.npz")
    z["vectors"][-1, -1] = np.float32(1234.5678)
    np.savez(d / "crc.npz", **z)
    data = bytearray((d / "crc.npz").read_bytes())
    at = data.index(np.float32(1234.5678).tobytes())
    data[at] ^= 1
    (d / "crc.npz").write_bytes(bytes(data))
    with pytest.raises(HSW2VError) as e:
        load_model(str(d / "crc.npz"))
    assert str(e.value).startswith(f"{d / 'crc.npz'}: not an hsw2v model file (")
    assert "CRC" in str(e.value) and "vectors.npy" in str(e.value)


def test_one_line_reason():
    assert reading_module._one_line(ValueError("bad\n   thing\there ")) == "bad thing here"
    assert reading_module._one_line(KeyError()) == "KeyError"


def bad_words(z, blob: bytes, offsets) -> dict:
    return {**z, "words": np.frombuffer(blob, np.uint8), "word_offsets": np.array(offsets, np.int64)}


def test_metadata_is_checked(saved):
    d, z = saved
    meta = meta_of(z)
    assert "corrupt model (unreadable metadata)" in refused(
        d, {**z, "meta": np.frombuffer(b"\xff\xfe{", np.uint8)})
    assert "corrupt model (unreadable metadata)" in refused(
        d, {**z, "meta": np.frombuffer(b'{"format": ', np.uint8)})
    for other in ([meta], {**meta, "format": "other"}, {"version": 1}):
        assert refused(d, with_meta(z, other)).endswith(": not an hsw2v model file")
    message = refused(d, with_meta(z, {**meta, "version": 3}))
    assert "model format version 3, but this hsw2v reads versions 1 to 2" in message
    assert "corrupt model (the tree kind is not a string)" in refused(
        d, with_meta(z, {**meta, "tree": 5}))
    message = refused(d, with_meta(z, {**meta, "settings": {**meta["settings"], "window": "x"}}))
    assert "corrupt model (model settings: window must be int" in message


def test_words_and_counts_are_checked(saved):
    d, z = saved
    words = [f"w{i}" for i in range(V)]
    blob = "".join(words).encode()
    offsets = [0, *np.cumsum([len(w) for w in words])]
    for b, o in [(blob + b"!", offsets),  # a byte that no word covers
                 (blob, [1, *offsets[1:]]),  # the first word does not start at 0
                 (blob, [0, 3, 2, *offsets[3:]]),  # a word that ends before it starts
                 (blob[2:], [0, 0, *(np.array(offsets[2:]) - 2)])]:  # an empty word
        assert "corrupt model (word_offsets do not index the words)" in refused(
            d, bad_words(z, b, o))
    assert "corrupt model (a word is not UTF-8)" in refused(
        d, bad_words(z, b"\xff" + blob[1:], offsets))
    assert "corrupt model (vocab: a word appears twice)" in refused(
        d, bad_words(z, b"w1" + blob[2:], offsets))
    counts = z["counts"]
    for bad in (np.where(counts == counts.min(), 0, counts),  # not positive
                np.array([*counts[:5], counts[6], counts[5], *counts[7:]])):  # a rise
        assert "corrupt model (counts must be positive and in descending order)" in refused(
            d, {**z, "counts": bad.astype(np.int64)})


@pytest.mark.parametrize("key", ["vectors", "node_vectors"])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_vectors_are_refused(saved, key, value):
    d, z = saved
    z[key][2, 1] = value
    assert f"corrupt model ({key} hold NaN or infinity)" in refused(d, z)


def test_settings_losses_and_timings(saved):
    d, z = saved
    meta = meta_of(z)
    bare = {k: v for k, v in meta.items() if k not in ("tree", "settings")}
    m = loads(d, with_meta(z, bare))  # older files: no tree kind, no settings
    assert m.tree.kind == "huffman"
    assert asdict(m.settings) == asdict(TrainSettings().resolved())
    assert m.epoch_loss == [] and m.seconds == {}
    settings = {k: v for k, v in meta["settings"].items() if k != "epoch_loss"}
    m = loads(d, with_meta(z, {**meta, "settings": settings}))
    assert m.epoch_loss == [] and m.seconds == {"tree": 0.5, "train": 3.0}
    assert m.arch == "cbow" and m.settings.dim == DIM
    for bad in ({"epoch_loss": 5}, {"epoch_loss": {}}, {"epoch_loss": ["1.5"]},
                {"epoch_loss": [True]}, {"train_seconds": "3"}, {"train_seconds": None}):
        message = refused(d, with_meta(z, {**meta, "settings": {**meta["settings"], **bad}}))
        assert "corrupt model (epoch_loss and timings must be numbers)" in message


def test_settings_whose_dim_is_not_the_vectors_width_are_refused(small_corpus, tmp_path):
    """A file whose settings say dim 50 over vectors 8 wide is refused, by load_model
    and so by --init-model, which would carry the wrong setting forward (hostile
    round four, extras)."""
    from tests.helpers import one_line_error, run_hsw2v

    m = hsw2v.train(small_corpus, dim=8, epochs=1, min_count=1, threads=1, progress=False)
    m.save(str(tmp_path / "m.npz"))
    z = npz_arrays(tmp_path / "m.npz")
    meta = meta_of(z)
    meta["settings"]["dim"] = 50
    assert "corrupt model (its settings say dim 50, its vectors are 8 wide)" in refused(
        tmp_path, with_meta(z, meta))
    line = one_line_error(run_hsw2v(tmp_path, "train", small_corpus, "--init-model", "bad.npz",
                                    "-o", "o.txt"))
    assert line.endswith("bad.npz: corrupt model (its settings say dim 50, its vectors are 8 wide)")


# Files written by hsw2v before the package was split into subpackages (model files
# and checkpoints, in tests/data/before-subpackages, made by that version from
# tiny.txt) still load and predict; checkpoints resume (tests/runs/test_checkpoint.py).
OLD = REPO / "tests" / "data" / "before-subpackages"


@pytest.mark.parametrize("name", ["cbow-model", "skipgram-model", "adaptive-model"])
def test_an_old_model_file_loads_with_its_arrays(name):
    path = OLD / f"{name}.npz"
    model = hsw2v.load_model(str(path))
    with np.load(path) as raw:
        assert np.array_equal(model.vectors, raw["vectors"])
        assert np.array_equal(model.node_vectors, raw["node_vectors"])
        assert np.array_equal(model.tree.children, raw["children"])
    assert model.arch in model_kinds
    probs = np.exp(model.all_log_probs(model.words[:1]))  # (one word: a distribution for every kind)
    assert probs.sum() == pytest.approx(1.0, abs=1e-4)
    top = model.predict(model.words[:1], 3)
    assert top[0][0] == model.words[int(np.argmax(probs))]


MARKERLESS = REPO / "tests" / "data" / "before-sentence-markers"


"""An LBL model saved before a language model's vocabulary held <unk> and </s>
(``lbl-model.npz``: ``--arch lbl --window 3 --dim 8 --min-count 3 --epochs 2`` on
``tiny.txt``, by the version before them)."""


def test_an_lbl_model_from_before_the_sentence_markers_loads_predicts_and_scores(tmp_path):
    model = hsw2v.load_model(str(MARKERLESS / "lbl-model.npz"))
    assert model.arch == "lbl" and not model.vocab.markers
    assert "<unk>" not in model and "</s>" not in model
    probs = np.exp(model.all_log_probs(["w1", "w2"]))
    assert probs.sum() == pytest.approx(1.0, abs=1e-4)
    assert model.predict(["w1", "w2"], 1)[0][0] == model.words[int(np.argmax(probs))]
    held = tmp_path / "held.txt"
    held.write_text("w1 qqzzx w0 w1\nzzqqx\n")
    got = hsw2v.score(model, str(held))  # its own conventions: unknown words dropped, no </s>
    known = [w for w in "w1 qqzzx w0 w1".split() if w in model]
    assert got["examples"] == len(known) and got["dropped"] == 2 and "oov" not in got
    want = -sum(model.log_prob(w, known[:i]) for i, w in enumerate(known)) / len(known)
    assert got["loss"] == pytest.approx(want, rel=1e-5)
    further = hsw2v.train(str(OLD / "tiny.txt"), init_model=model, epochs=1, progress=False)
    assert further.words == model.words and not further.vocab.markers
