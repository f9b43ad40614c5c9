"""Property-based tests (hypothesis): the tokenizer against Python's bytes.split(),
the %.9g writer's round trip, and model loading under random corruption."""
from __future__ import annotations

import os
import tempfile
import zipfile
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsw2v.counting.corpus import count_words
from hsw2v.errors import HSW2VError
from hsw2v.model.reading import load_model
from hsw2v.model.text_rows import format_g9

PIECES = [b" ", b"\n", b"\t", b"\r", b"\x0b", b"\x0c", b"a", b"b", b"ab", "é".encode(),
          "€".encode(), "\u00a0".encode(), "\u2028".encode(), b"\x1c", b"\xff", b"\x80",
          b"\xe2\x82", b"\x00", b"\xef\xbb\xbf"]
"""Whitespace, words, multi-byte characters (some that str.split() would split on),
bytes that make the text invalid (a stray continuation byte, a cut character,
NUL), and a byte-order mark (dropped at the start of a file, a character elsewhere)."""

texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join),
                  st.binary(max_size=80))


def write(data: bytes) -> str:
    fd, path = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from([3, 8, 1 << 20]))
def test_tokenizer_agrees_with_split_or_rejects(data, block_bytes):
    """Valid UTF-8 without NUL: the words and counts of bytes.split() (ASCII
    whitespace, as word2vec.c) of the text after a leading byte-order mark, whatever
    the block size. Anything else: HSW2VError."""
    path = write(data)
    try:
        try:
            data.decode("utf-8")
            valid = b"\0" not in data
        except UnicodeDecodeError:
            valid = False
        if not valid:
            with pytest.raises(HSW2VError):
                count_words(path, block_bytes=block_bytes)
            return
        counts = count_words(path, block_bytes=block_bytes)
        expect = Counter(w.decode("utf-8") for w in data.removeprefix(b"\xef\xbb\xbf").split())
        assert counts.as_dict() == dict(expect) and counts.tokens == sum(expect.values())
    finally:
        os.unlink(path)


@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_g9_round_trips_every_float32(bits):
    x = np.array([bits], dtype=np.uint32).view(np.float32)[0]
    out = np.empty(32, dtype=np.uint8)
    text = out[:format_g9(np.float64(x), out, 0)].tobytes().decode()
    back = np.float32(float(text))
    assert (np.isnan(x) and np.isnan(back)) or (back == x and np.signbit(back) == np.signbit(x))


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    import hsw2v

    d = tmp_path_factory.mktemp("model")
    (d / "c.txt").write_text("a b c d e f a b c a b a\n" * 20)
    model = hsw2v.train(str(d / "c.txt"), min_count=1, dim=8, epochs=1, threads=1,
                        progress=False)
    model.save(str(d / "m.npz"))
    with zipfile.ZipFile(d / "m.npz") as z:  # byte positions of the local and central headers
        headers = [i for info in z.infolist() for i in range(
            info.header_offset, info.header_offset + 30 + len(info.filename))]
        headers += list(range(z.start_dir, (d / "m.npz").stat().st_size))
    return (d / "m.npz").read_bytes(), load_model(str(d / "m.npz")), headers


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_corrupt_model_files_give_one_error_or_the_model(model_file, data):
    raw, original, headers = model_file
    blob = bytearray(raw)
    anywhere = st.integers(0, len(blob) - 1)
    position = st.one_of(anywhere, st.sampled_from(headers))  # half in the zip's own headers
    for _ in range(data.draw(st.integers(0, 4))):
        blob[data.draw(position)] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    path = write(bytes(blob))
    try:
        model = load_model(path)
    except HSW2VError as e:
        assert "\n" not in str(e)
        return
    finally:
        os.unlink(path)
    assert model.words == original.words and model.settings == original.settings
    for a, b in [(model.vocab.counts, original.vocab.counts), (model.vectors, original.vectors),
                 (model.node_vectors, original.node_vectors),
                 (model.tree.children, original.tree.children)]:
        assert np.array_equal(a, b)
