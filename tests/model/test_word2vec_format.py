"""hsw2v.model.word2vec_format and what it writes with: vectors files in word2vec's
text and binary formats (against hand parsing and gensim), the vectors cache
(``vectors_cache``), and model files that round trip or are refused."""
from __future__ import annotations

import errno
import importlib
import io
import json
import os
import struct
import warnings

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.model import word2vec_format as w2v
from hsw2v.model.reading import load_model, read_vectors
from hsw2v.model.vectors_cache import entry_of
from hsw2v.model.word2vec_format import (
    read_word2vec,
    vector_formats,
    write_vectors,
    write_vectors_to,
)
from hsw2v.runs.trainer import train_locally
from hsw2v.system.files import atomic_write

WORDS = ["the", "naïve", "日本", "x"]


@pytest.fixture
def matrix():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(4, 7)).astype(np.float32)
    m[0, 0] = np.float32(1e-30)  # tiny and huge values survive too
    m[1, 1] = np.float32(3.4e38)
    return m


WORD2VEC_FORMATS = sorted(n for n, f in vector_formats.items() if f.write_rows is not None)


@pytest.mark.parametrize("name", WORD2VEC_FORMATS)
def test_vectors_round_trip_exactly(tmp_path, matrix, name):
    path = str(tmp_path / "v.bin")
    write_vectors(path, WORDS, matrix, format=name)
    assert not entry_of(path).exists()  # only when asked
    v = read_vectors(path)
    assert v.words == WORDS
    assert np.array_equal(v.matrix, matrix)


@pytest.mark.parametrize("name", WORD2VEC_FORMATS)
def test_gensim_loads_identical_vectors(tmp_path, matrix, name):
    gensim = importlib.import_module("gensim")
    path = str(tmp_path / "v.txt")
    write_vectors(path, WORDS, matrix, format=name)
    kv = gensim.models.KeyedVectors.load_word2vec_format(path, binary=name == "binary")
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
    write_vectors(str(path), WORDS, matrix, format="binary")
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
    model = train_locally(small_corpus, min_count=1, dim=8, epochs=1, threads=1, progress=False)
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
    model = train_locally(small_corpus, min_count=1, dim=8, epochs=1, threads=1, progress=False)
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
    cache = entry_of(str(path))
    assert cache.exists() and not (tmp_path / "v.txt.cache").exists()
    assert np.array_equal(read_vectors(str(path)).matrix, matrix)
    # replace the text file by hand: the stale cache must be ignored
    other = matrix + 1
    lines = [f"{len(WORDS)} {matrix.shape[1]}"] + [
        w + " " + " ".join(f"{x:.9g}" for x in row) for w, row in zip(WORDS, other)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert np.array_equal(read_vectors(str(path)).matrix, other)
    cache.write_bytes(b"junk")  # a corrupt cache is ignored too
    assert np.array_equal(read_vectors(str(path)).matrix, other)


def test_model_settings_are_typed_and_checked(tmp_path, small_corpus):
    """Settings load as TrainSettings; a wrong type names the field; files of the
    earlier layout (tree kind in the settings) still load."""
    import json

    model = train_locally(small_corpus, min_count=1, dim=8, epochs=1, threads=1, progress=False)
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
    assert isinstance(back.settings.window, int) and back.settings.dim == 8
    for bad, field in [({**meta["settings"], "window": "x"}, "window"),
                       ({**meta["settings"], "cbow_mean": 1}, "cbow_mean"),
                       ({**meta["settings"], "arch": "lstm"}, "arch must be one of"),
                       ({**meta["settings"], "epoch_loss": "low"}, "epoch_loss"),
                       (["not", "a", "dict"], "JSON object")]:
        with pytest.raises(HSW2VError, match=field):
            load_model(with_settings(bad, "bad.npz"))


# ---------------------------------------------------------------------------
# word2vec_format in depth: every check below compares with an independent
# reference (struct/bytes parsing written here, Python's '%.9g', gensim, or the
# cache layout documented in hsw2v.model.vectors_cache), never with hsw2v's own helpers.

CW = ["the", "naïve", "a\xa0b", "日本"]  # U+00A0 is whitespace to str.split(), not to the format
CM = np.array([[0.25, -1.5, 2.0], [3.0, -0.125, 1e-3], [7.0, 8.5, -9.0], [1e20, -2e-7, 4.0]],
              dtype=np.float32)


def ref_text(data: bytes):
    """word2vec text by hand: 'V D' line, then 'word v1 … vD' rows split on b'\\n' and b' '."""
    lines = data.split(b"\n")
    n, dim = (int(x) for x in lines[0].split(b" "))
    rows = [ln.rstrip(b" \r").split(b" ") for ln in lines[1:] if ln.strip(b" \r")]
    assert len(rows) == n and all(len(r) == dim + 1 for r in rows)
    return ([r[0].decode("utf-8") for r in rows],
            np.array([[float(x) for x in r[1:]] for r in rows], dtype=np.float32).reshape(n, dim))


def ref_binary(data: bytes):
    """word2vec binary by hand: 'V D\\n', then per row: word, b' ', D '<f' floats, b'\\n'."""
    nl = data.index(b"\n")
    n, dim = (int(x) for x in data[:nl].split(b" "))
    pos, words, rows = nl + 1, [], []
    for _ in range(n):
        space = data.index(b" ", pos)
        words.append(data[pos:space].decode("utf-8"))
        rows.append(struct.unpack(f"<{dim}f", data[space + 1:space + 1 + 4 * dim]))
        pos = space + 1 + 4 * dim
        if data[pos:pos + 1] == b"\n":
            pos += 1
    assert pos == len(data)
    return words, np.array(rows, dtype=np.float32).reshape(n, dim)


def binary_file(words, matrix, sep=b"\n", header=None):
    """A word2vec binary file assembled with struct."""
    n, dim = np.shape(matrix)
    head = header if header is not None else f"{n} {dim}\n".encode()
    return head + b"".join(w.encode("utf-8") + b" " + struct.pack(f"<{dim}f", *row) + sep
                           for w, row in zip(words, np.asarray(matrix, dtype=np.float64)))


def text_file(words, matrix, eol="\n", trailing=""):
    n, dim = np.shape(matrix)
    return (f"{n} {dim}{eol}" + "".join(
        w + " " + " ".join(f"{float(x):.9g}" for x in row) + trailing + eol
        for w, row in zip(words, np.asarray(matrix, dtype=np.float32)))).encode("utf-8")


def same(v, words, matrix):
    return v.words == list(words) and v.matrix.dtype == np.float32 and np.array_equal(v.matrix, matrix)


def keep_stat(path, data: bytes):
    """Rewrite ``path`` with ``data`` of the same size and put its mtime back."""
    st = os.stat(path)
    assert len(data) == st.st_size
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(path).st_size, os.stat(path).st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def cache_bytes(path, word_list, matrix, *, drop=(), blob=None, tail=b"", **fields):
    """A cache entry built by hand from the layout documented in hsw2v.model.vectors_cache."""
    st = os.stat(path)
    blob = "\n".join(word_list).encode("utf-8") if blob is None else blob
    header = {"format": "hsw2v-vectors-cache", "path": os.path.realpath(path),
              "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino,
              "ctime_ns": st.st_ctime_ns,
              "words": len(word_list), "dim": int(np.shape(matrix)[1]), "word_bytes": len(blob)}
    header.update(fields)
    for k in drop:
        del header[k]
    return json.dumps(header).encode() + b"\n" + blob + np.asarray(matrix, "<f4").tobytes() + tail


# --- writing ---------------------------------------------------------------

def test_write_vectors_to_is_text_by_default_and_prints_float32_as_printf():
    """A float64 matrix is written as its float32 values, each as C's '%.9g'."""
    m64 = np.array([[0.1, -2.0 / 3.0], [1e-40, 123456.789]])  # float64: differs from float32
    buf = io.BytesIO()
    write_vectors_to(buf, ["a", "b"], m64)
    lines = buf.getvalue().decode("ascii").split("\n")
    assert lines[0] == "2 2" and lines[-1] == ""
    for line, w, row in zip(lines[1:3], ["a", "b"], m64.astype(np.float32)):
        assert line == w + " " + " ".join(f"{float(x):.9g}" for x in row)


def test_binary_rows_are_word_space_float32_newline():
    buf = io.BytesIO()
    write_vectors_to(buf, CW, CM.astype(np.float64), format="binary")
    assert buf.getvalue() == binary_file(CW, CM)


def test_text_rows_of_the_longest_values_are_complete():
    """dim 1 with 15-character values ('-1.17549435e-38'): the widest rows still fit."""
    m = np.array([[-1.1754944e-38], [-1.4e-45], [-3.4028235e38], [-1.2345679e-10]] * 50,
                 dtype=np.float32)
    words = [f"w{i}" for i in range(len(m))]
    buf = io.BytesIO()
    write_vectors_to(buf, words, m)
    assert buf.getvalue() == text_file(words, m)


def test_text_chunks_keep_order_and_bound_the_work_in_flight(monkeypatch):
    """Chunks come out in order; the pool has one thread per core and formats at most
    2·cores+1 chunks ahead of the consumer."""
    import concurrent.futures

    made, submitted = [], []
    real = concurrent.futures.ThreadPoolExecutor

    class Counting(real):
        def __init__(self, max_workers=None, *a, **k):
            made.append(max_workers)
            super().__init__(max_workers, *a, **k)

        def submit(self, *a, **k):
            submitted.append(a)
            return super().submit(*a, **k)

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", Counting)
    monkeypatch.setattr(w2v, "available_cores", lambda: 2)
    rng = np.random.default_rng(3)
    m = rng.normal(size=(13, 3)).astype(np.float32)
    words = [f"w{i}" for i in range(13)]
    chunks = w2v._text_chunks(words, m, rows=1)
    first = bytes(next(chunks))
    assert made == [2] and len(submitted) == 5
    out = first + b"".join(bytes(c) for c in chunks)
    assert out == text_file(words, m).split(b"\n", 1)[1]


def test_warm_up_compiles_the_writers_kernel(monkeypatch):
    """warm_up_writer(dim) calls the formatting kernel with the argument types that
    writing float32 vectors of that width uses, so no compilation is left for later."""
    import numba

    from hsw2v.model import text_rows

    real = text_rows.format_text_rows
    seen = []

    def spy(*args):
        seen.append(tuple(numba.typeof(a) for a in args))
        return real(*args)

    monkeypatch.setattr(text_rows, "format_text_rows", spy)
    w2v.warm_up_writer(5)
    warm = set(seen)
    seen.clear()
    write_vectors_to(io.BytesIO(), ["naïve", "b"], np.ones((2, 5), np.float32))
    assert warm and warm == set(seen)


# --- reading: formats and their variants -----------------------------------

@pytest.mark.parametrize("binary", [False, True])
def test_read_matches_hand_parsing_and_gensim(tmp_path, binary):
    path = tmp_path / "v"
    write_vectors(str(path), CW, CM, format="binary" if binary else "text")
    words, m = (ref_binary if binary else ref_text)(path.read_bytes())
    assert words == CW and np.array_equal(m, CM)
    assert same(read_word2vec(str(path)), CW, CM)
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path), binary=binary)
    assert same(read_word2vec(str(path)), kv.index_to_key, kv.vectors)


@pytest.mark.parametrize("words", [
    ["a\u2028b", "c\x85d", "e\xa0f"],  # rows end at b"\n" only, as for gensim
    ["a\x1cb", "c", "d"],  # words split on ASCII whitespace only: a first word may hold \x1c
])
def test_text_words_may_hold_separators_and_control_bytes(tmp_path, words):
    """Words that Python's splitlines() would break, or that look like binary
    bytes, are written and read back (by hsw2v and by gensim) unchanged."""
    m = np.random.default_rng(5).normal(size=(len(words), 4)).astype(np.float32)
    path = tmp_path / "v.txt"
    write_vectors(str(path), words, m)
    assert same(read_word2vec(str(path)), words, m)
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path))
    assert list(kv.index_to_key) == words and np.array_equal(kv.vectors, m)


@pytest.mark.parametrize("eol, trailing", [("\r\n", ""), ("\n", " "), ("\r\n", " ")])
def test_text_with_crlf_or_word2vec_c_trailing_spaces(tmp_path, eol, trailing):
    path = tmp_path / "v.txt"
    path.write_bytes(text_file(CW, CM, eol=eol, trailing=trailing))
    assert same(read_word2vec(str(path)), CW, CM)


def test_text_with_blank_lines(tmp_path):
    path = tmp_path / "v.txt"
    body = text_file(CW, CM).split(b"\n", 1)[1]
    path.write_bytes(b"4 3\n\n" + body.replace(b"\n", b"\n\n", 1) + b"\n")
    assert same(read_word2vec(str(path)), CW, CM)


@pytest.mark.parametrize("first", ["x" * 300, "x" + "é" * 60, "é" * 47 + "日本" * 20],
                         ids=["ascii", "cut-in-2-byte-char", "cut-in-3-byte-char"])
def test_text_whose_first_line_is_long_is_still_text(tmp_path, first):
    """A first row longer than the format sniffer's window, even cut inside a UTF-8
    character, is read as text (and gives the values written, not float bytes)."""
    m = np.array([[0.5], [2.5]], np.float32)
    path = tmp_path / "v.txt"
    path.write_bytes(text_file([first, "c"], m))
    assert same(read_word2vec(str(path)), [first, "c"], m)


def test_text_dimension_one(tmp_path):
    path = tmp_path / "v.txt"
    path.write_bytes(b"2 1\na 1.5\nb -2\n")
    assert same(read_word2vec(str(path)), ["a", "b"], np.array([[1.5], [-2]], np.float32))


@pytest.mark.parametrize("first_row", [np.zeros(3), np.array([1.0, 0.0, 0.0])])
def test_binary_whose_first_row_is_valid_utf8(tmp_path, first_row):
    """Zero floats are NUL bytes: valid UTF-8, yet still binary."""
    m = np.vstack([first_row, CM[:3]]).astype(np.float32)
    path = tmp_path / "v.bin"
    path.write_bytes(binary_file(CW, m))
    assert same(read_word2vec(str(path)), CW, m)


@pytest.mark.parametrize("sep, end", [(b"", b""), (b"\n", b""), (b"", b"\n")])
def test_binary_without_row_newlines(tmp_path, sep, end):
    """Rows may follow each other with no newline, and the last may lack one (as
    word2vec.c and gensim read them); words starting with X keep their X."""
    words = ["Xa", "XXb", "c", "X"]
    data = binary_file(words, CM, sep=sep)
    if sep == b"\n" and not end:
        data = data[:-1]
    path = tmp_path / "v.bin"
    path.write_bytes(data + end)
    assert same(read_word2vec(str(path)), words, CM)
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path), binary=True)
    assert list(kv.index_to_key) == words and np.array_equal(kv.vectors, CM)


def test_repeated_words_keep_the_first_vector_with_a_warning(tmp_path):
    words = ["a", "b", "a", "c", "b", "d"]
    m = np.arange(12, dtype=np.float32).reshape(6, 2)
    path = tmp_path / "v.txt"
    path.write_bytes(text_file(words, m))
    first = {}
    for w, row in zip(words, m):
        first.setdefault(w, row)
    with pytest.warns(UserWarning) as record:
        v = read_word2vec(str(path))
    assert same(v, list(first), np.array(list(first.values())))
    (message,) = [str(r.message) for r in record]
    assert message == (f"{path}: 2 repeated words; kept the first vector of each, "
                       "as gensim does")


def test_no_warning_without_repeated_words(tmp_path):
    path = tmp_path / "v.txt"
    path.write_bytes(text_file(CW, CM))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same(read_word2vec(str(path)), CW, CM)


# --- reading: files that must be refused with one line ---------------------

def refused(path, match):
    with pytest.raises(HSW2VError) as info:
        read_word2vec(str(path))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}:"), message
    assert match in message, message
    return message


@pytest.mark.parametrize("content, match", [
    (b"", "not a word2vec file"),
    (b"4 5", "not a word2vec file"),
    (b"4 5x", "not a word2vec file"),   # no newline at all: no header
    (b"4 5\n", "holds only 0 bytes"),
    (b"\n2 2\na 1 2\nb 3 4\n", "not a word2vec file"),
    (b"2 2 2\na 1 2\n", "not a word2vec file"),
    (b"-1 2\na 1 2\n", "not a word2vec file"),
    (b"2 0\na\nb\n", "dimension must be positive, got 0"),
    (b"3 2\na 1 2\n", "the header says 3 words of 2 values, but the file holds only 6 bytes"),
    (b"1000000 300\na 1 2\n", "the header says 1000000 words of 300 values"),
    (b"1 2\na 1 2\nb 3 4\n", "the header says 1 words but there are 2 rows"),
    (b"2 2\na 1 2\n\nb 3\n", ":4: expected a word and 2 values, got 1 values"),
    (b"2 2\n\na 1 2\nb 3\n", ":4: expected a word and 2 values, got 1 values"),
    (b"2 3\n" + b"x" * 300 + b" 1 2 3\n" + b"y" * 40 + b" 1 2\n",
     ":3: expected a word and 3 values, got 2 values"),
    (b"2 2\na 1 2\nb  3 4\n", ":3: expected a word and 2 values, got 3 values"),
    (b"2 2\na 1 2\nb 3 four\n", "a vector value is not a number"),
    (b"2 2\na 1 2\nb nan 1\n", "the vector of 'b' (row 2) holds NaN or infinity"),
])
def test_bad_text_files_are_refused(tmp_path, content, match):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    refused(path, match)


def test_text_with_invalid_utf8_names_the_byte(tmp_path):
    path = tmp_path / "bad.txt"
    body = b"a 1 2\nb\xff 3 4\n"
    path.write_bytes(b"2 2\n" + body)
    at = body.index(b"\xff")
    refused(path, f"invalid UTF-8 at byte {at} after the header")


def binary_cases():
    good = binary_file(["aa", "bb", "cc"], CM[:3])
    assert len(good) == 4 + 3 * 16  # header, then rows of 2 + 1 + 12 + 1 bytes
    yield "last row cut by 1", good[:-2], "binary file ends early, at row 3 of 3"
    yield "last row cut by 2", good[:-3], "binary file ends early, at row 3 of 3"
    yield "last word without its vector", good[:-14], "binary file ends early, at row 3 of 3"
    yield "a row missing", good[:-16], "binary file ends early, at row 3 of 3"
    yield "two rows missing", b"3 3\n" + good[4:-32] + b"\n\n", "ends early, at row 2 of 3"
    yield ("word not UTF-8", good.replace(b"bb ", b"b\xff "),
           "row 2: the word is not UTF-8")
    yield "data after the rows", good + b"dd 1234", "data after the last of 3 rows"
    yield ("header count too small", good.replace(b"3 3\n", b"2 3\n", 1),
           "data after the last of 2 rows; wrong dimension in the header?")
    yield ("infinity", binary_file(["aa", "bb"], [[1, 2], [np.inf, 0]]),
           "the vector of 'bb' (row 2) holds NaN or infinity")


@pytest.mark.parametrize("name, content, match", list(binary_cases()),
                         ids=[c[0] for c in binary_cases()])
def test_bad_binary_files_are_refused(tmp_path, name, content, match):
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    refused(path, match)


def test_unreadable_paths_are_refused(tmp_path):
    refused(tmp_path / "absent.txt", "no such file")
    assert str(pytest.raises(HSW2VError, read_word2vec, str(tmp_path)).value) == \
        f"{tmp_path}: is a directory"
    if os.path.exists("/dev/null"):
        assert str(pytest.raises(HSW2VError, read_word2vec, "/dev/null").value) == \
            "/dev/null: a character device, not a vectors file"
    plain = tmp_path / "plain"
    plain.write_bytes(b"x")
    inside = str(plain / "v.txt")
    assert str(pytest.raises(HSW2VError, read_word2vec, inside).value) == \
        f"{inside}: cannot read: {os.strerror(errno.ENOTDIR)}"


# --- the vectors cache (in the user's cache directory) -------------------------

def test_write_cache_follows_the_documented_layout(tmp_path):
    path = tmp_path / "v.txt"
    write_vectors(str(path), CW, CM, cache=True)
    data = entry_of(str(path)).read_bytes()
    line, rest = data.split(b"\n", 1)
    st = os.stat(path)
    assert json.loads(line) == {"format": "hsw2v-vectors-cache", "path": str(path.resolve()),
                                "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                "ino": st.st_ino, "ctime_ns": st.st_ctime_ns, "words": 4, "dim": 3,
                                "word_bytes": len("\n".join(CW).encode("utf-8"))}
    blob = "\n".join(CW).encode("utf-8")
    assert rest == blob + CM.astype("<f4").tobytes()


@pytest.mark.parametrize("binary", [False, True])
def test_cache_is_read_while_size_and_mtime_match(tmp_path, binary):
    """Same size, mtime, inode and change time: the entry's vectors are returned
    (proof: an entry of other vectors, planted with the file's stat, is what comes
    back); a new mtime or size makes the file win, and so does an edit in place at
    the same size with the mtime put back (``touch -r``: a new change time)."""
    path = tmp_path / "v"
    write_vectors(str(path), CW, CM, format="binary" if binary else "text", cache=True)
    original = path.read_bytes()
    entry = entry_of(str(path))
    entry.write_bytes(cache_bytes(path, CW, CM * 2))
    assert same(read_word2vec(str(path)), CW, CM * 2)      # the planted entry
    entry.write_bytes(cache_bytes(path, CW, CM))
    edited = CM.copy()
    edited[0, 0] = 0.75
    if binary:
        old, new = struct.pack("<f", 0.25), struct.pack("<f", 0.75)
    else:
        old, new = b" 0.25 ", b" 0.75 "
    assert original.count(old) == 1
    keep_stat(path, original.replace(old, new))
    assert (ref_binary if binary else ref_text)(path.read_bytes())[1][0, 0] == 0.75
    assert same(read_word2vec(str(path)), CW, edited)      # edited in place: the file
    entry.write_bytes(cache_bytes(path, CW, CM))            # (an entry of the file's new stat)
    assert same(read_word2vec(str(path)), CW, CM)          # from the cache

    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert same(read_word2vec(str(path)), CW, edited)      # newer mtime: the file
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert same(read_word2vec(str(path)), CW, edited)      # mtime back: a new change time
    entry.write_bytes(cache_bytes(path, CW, CM))
    assert same(read_word2vec(str(path)), CW, CM)          # an entry of that stat is used

    path.write_bytes(path.read_bytes() + b"\n")             # one more byte, same mtime
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert same(read_word2vec(str(path)), CW, edited)


def test_make_cache_keeps_a_copy_only_when_asked(tmp_path):
    path = tmp_path / "v.txt"
    write_vectors(str(path), CW, CM)
    assert same(read_word2vec(str(path)), CW, CM)
    assert not entry_of(str(path)).exists()
    assert same(read_word2vec(str(path), make_cache=True), CW, CM)
    assert entry_of(str(path)).exists() and os.listdir(tmp_path) == ["v.txt"]
    assert entry_of(str(path)).read_bytes() == cache_bytes(path, CW, CM)  # a valid entry
    keep_stat(path, path.read_bytes().replace(b" 0.25 ", b" 0.75 "))
    edited = CM.copy()
    edited[0, 0] = 0.75
    assert same(read_word2vec(str(path)), CW, edited)  # edited in place (touch -r): the file


def _bad_caches():
    n, dim = CM.shape
    short_blob = "\n".join(CW[:-1]).encode()
    return {
        "format": {"format": "hsw2v-vectors-cache-2"},
        "format missing": {"drop": ["format"]},
        "size": {"size": -1},
        "mtime": {"mtime_ns": 1},
        "size missing": {"drop": ["size"]},
        "mtime missing": {"drop": ["mtime_ns"]},
        "more words": {"words": n + 1},
        "fewer words": {"words": n - 1},
        "a word short": {"blob": short_blob, "words": n - 1},     # 3 words, 4 rows of floats
        "a word short, count kept": {"blob": short_blob},            # words: 4, blob of 3
        "smaller dim": {"dim": dim - 1},                          # 12 floats read as 4 x 2
        "larger dim": {"dim": dim + 1},
        "matrix cut": {"tail": b"", "matrix": CM.ravel()[:-1]},
        "bytes after the matrix": {"tail": b"\0\0\0\0"},
        "word_bytes short": {"word_bytes": len("\n".join(CW).encode()) - 1},
        "word_bytes long": {"word_bytes": len("\n".join(CW).encode()) + 1},
        "word_bytes missing": {"drop": ["word_bytes"]},
        "words null": {"words": None},
        "words text": {"words": "many"},
        "word not UTF-8": {"blob": "\n".join(CW).encode().replace(b"the", b"th\xff")},
        "not JSON": "raw:not json\n",
        "JSON list": "raw:[1, 2]\n",
        "empty": "raw:",
    }


@pytest.mark.parametrize("case", list(_bad_caches()))
def test_a_cache_that_does_not_match_is_ignored(tmp_path, case):
    """The file holds EDITED; a sidecar of CM that is valid but for one field must
    never be trusted: the file is read instead."""
    edited = CM + 1
    path = tmp_path / "v.txt"
    write_vectors(str(path), CW, edited)
    cache = entry_of(str(path))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(cache_bytes(path, CW, CM))
    assert same(read_word2vec(str(path)), CW, CM)   # the hand-made sidecar is valid as such
    spec = _bad_caches()[case]
    if isinstance(spec, str):
        cache.write_bytes(spec[len("raw:"):].encode())
    else:
        spec = dict(spec)
        matrix = spec.pop("matrix", CM)
        matrix = np.reshape(matrix, (1, -1)) if matrix.ndim == 1 else matrix
        cache.write_bytes(cache_bytes(path, CW, matrix, **spec))
    assert same(read_word2vec(str(path)), CW, edited)


def test_the_cache_holds_at_most_its_size_dropping_the_least_recently_used(tmp_path,
                                                                          monkeypatch):
    """HSW2V_CACHE_SIZE bounds the cache directory: each write removes the entries
    used longest ago until the rest fit; reading an entry counts as using it; 0
    turns the cache off; a corrupt entry is replaced by a good one on the next read."""
    monkeypatch.setenv("HSW2V_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HSW2V_CACHE_SIZE", "1M")
    big = np.ones((1000, 100), np.float32)  # 400 kB an entry: two fit in 1M, three do not
    paths = [tmp_path / f"v{i}.txt" for i in range(4)]
    for p in paths[:2]:
        write_vectors(str(p), [f"w{i}" for i in range(1000)], big, cache=True)
    os.utime(entry_of(str(paths[1])), ns=(1, 1))  # v1 used long ago …
    assert read_word2vec(str(paths[0])).matrix.shape == (1000, 100)  # … v0 just now
    write_vectors(str(paths[2]), [f"w{i}" for i in range(1000)], big, cache=True)
    kept = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert kept == sorted(entry_of(str(p)).name for p in (paths[0], paths[2]))
    assert sum(p.stat().st_size for p in (tmp_path / "cache").iterdir()) <= 1 << 20
    entry_of(str(paths[0])).write_bytes(b"junk")
    assert same(read_word2vec(str(paths[0]), make_cache=True), [f"w{i}" for i in range(1000)], big)
    assert entry_of(str(paths[0])).read_bytes() != b"junk"  # rebuilt
    monkeypatch.setenv("HSW2V_CACHE_SIZE", "0")
    write_vectors(str(paths[3]), ["a"], big[:1], cache=True)
    assert not entry_of(str(paths[3])).exists()


def test_binary_whose_first_floats_hold_an_early_newline_byte(tmp_path):
    """0.54007345 is b'AB\\n?' in float32: the first row then starts like a short text line
    (about 1 binary file in 150 of normal-looking values has such a first row)."""
    x = struct.unpack("<f", b"AB\n?")[0]
    m = np.array([[x, 0.25, -1.0], *CM[1:]], np.float32)
    path = tmp_path / "v.bin"
    path.write_bytes(binary_file(CW, m))
    assert same(read_word2vec(str(path)), CW, m)
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(path), binary=True)
    assert list(kv.index_to_key) == CW and np.array_equal(kv.vectors, m)




@pytest.mark.parametrize("cut", [2, 10])
@pytest.mark.parametrize("first_bytes", [b"\0" * 12, b"A\xc3\n?" * 3], ids=["NUL", "cut-utf8"])
def test_broken_binary_is_reported_as_binary(tmp_path, cut, first_bytes):
    """A first row of NUL bytes, or one whose bytes before the first 0x0A end inside a
    UTF-8 character, marks the file binary: a broken one gets the binary error."""
    first = np.frombuffer(first_bytes, "<f4")
    m = np.vstack([first, CM[:2]]).astype(np.float32)
    path = tmp_path / "v.bin"
    path.write_bytes(binary_file(["a", "b", "c"], m)[:-cut])
    refused(path, "binary file ends early, at row 3 of 3")


def test_a_damaged_entry_is_read_past_and_written_again(tmp_path):
    """An entry holding NaN (its file is fine) is ignored, and reading the file with
    ``make_cache`` replaces it (hostile round four, item 5)."""
    path = tmp_path / "v.txt"
    write_vectors(str(path), CW, CM, cache=True)
    damaged = CM.copy()
    damaged[2, 1] = np.nan
    entry = entry_of(str(path))
    entry.write_bytes(cache_bytes(path, CW, damaged))
    assert same(read_word2vec(str(path), make_cache=True), CW, CM)
    assert entry.read_bytes() == cache_bytes(path, CW, CM)


def test_a_whole_model_format_is_not_written_from_words_and_vectors(tmp_path, matrix):
    """fastText's format holds a whole model: words and vectors alone are refused in
    one line naming the way to write it, and no file is left."""
    whole = [n for n, f in vector_formats.items() if f.write_rows is None]
    assert whole == ["fasttext"]
    with pytest.raises(HSW2VError, match="whole model"):
        write_vectors(str(tmp_path / "v.bin"), WORDS, matrix, format="fasttext")
    assert list(tmp_path.iterdir()) == []
