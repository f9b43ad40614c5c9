"""word2vec's vector files: text (a ``V D`` header, then ``word v1 … vD`` lines) and
binary (``word``, a space, D little-endian float32 values), both read and written;
text values are formatted by a nogil kernel as C's ``%.9g``, so float32 round-trips.
"""
from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, NamedTuple

import numpy as np

from ..counting.vocab import pack_words
from ..errors import HSW2VError, param
from ..settings import available_cores
from ..system.files import atomic_write, check_regular_file
from .fasttext_format import write_fasttext
from .vectors import Vectors
from .vectors_cache import read_cache, write_cache


class VectorFormat(NamedTuple):
    """A format of word vector files that hsw2v writes: its name (``--format``), the
    file ``train`` writes it to when none is named, a line for the help, and the
    function writing the rows after the ``V D`` header into an open binary file;
    or, for a format of whole models that hsw2v does not read back (fastText's),
    ``write_model(f, model)`` instead."""

    name: str
    default_file: str
    help: str
    write_rows: Callable[[IO[bytes], Sequence[str], np.ndarray], None] | None
    write_model: Callable[[IO[bytes], Any], None] | None = None


def _text_rows(f: IO[bytes], words: Sequence[str], matrix: np.ndarray) -> None:
    for chunk in _text_chunks(words, matrix):
        f.write(chunk)


def _binary_rows(f: IO[bytes], words: Sequence[str], matrix: np.ndarray) -> None:
    raw = matrix.astype("<f4", copy=False)
    for w, row in zip(words, raw):
        f.write(w.encode("utf-8") + b" " + row.tobytes() + b"\n")


vector_formats: dict[str, VectorFormat] = {f.name: f for f in (
    VectorFormat("text", "vectors.txt", "word2vec text: a word and its values (9 significant "
                 "digits, so float32 round-trips) a line", _text_rows),
    VectorFormat("binary", "vectors.bin", "word2vec binary: a word, a space, its little-endian "
                 "float32 values and a newline", _binary_rows),
    VectorFormat("fasttext", "model.bin", "fastText's model file, which fasttext.load_model and "
                 "gensim's load_facebook_vectors read, with --subwords its n-grams for unseen "
                 "words", None, write_fasttext),
)}
"""The vector formats, by name: where a new one joins (reading detects them,
:func:`read_word2vec`)."""


def vector_format(name: str) -> VectorFormat:
    """The format ``name`` of :data:`vector_formats`, or an error naming them."""
    if name not in vector_formats:
        raise HSW2VError(f"{param('format')} must be one of {', '.join(vector_formats)}, "
                         f"got {name!r}")
    return vector_formats[name]


def write_vectors(path: str, words: Sequence[str], matrix: np.ndarray, format: str = "text",
                  cache: bool = False) -> None:
    """Write word vectors in word2vec's format: a ``V D`` header, then one word and its
    vector per row.

    Parameters
    ----------
    path
        The file to write, atomically.
    words
        The words, in the file's order.
    matrix
        Their vectors, one row each (float32).
    format
        A name of :data:`vector_formats`: ``"text"`` or ``"binary"``.
    cache
        Also keep a copy that makes reading the file back fast, in the user's cache
        directory (see :mod:`hsw2v.model.vectors_cache`).
    """
    chosen = vector_format(format)
    with atomic_write(path, "wb") as f:
        write_vectors_to(f, words, matrix, chosen.name)
    if cache:
        write_cache(path, words, matrix)


def write_vectors_to(f: IO[bytes], words: Sequence[str], matrix: np.ndarray,
                     format: str = "text") -> None:
    """:func:`write_vectors` into an open binary file."""
    chosen = vector_format(format)
    if chosen.write_rows is None:
        raise HSW2VError(f"{param('format', format)} holds a whole model: write it from the "
                         "model (Model.save_vectors)")
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    n, dim = matrix.shape
    f.write(f"{n} {dim}\n".encode())
    chosen.write_rows(f, words, matrix)


def _text_chunks(words: Sequence[str], matrix: np.ndarray, rows: int = 2048) -> Iterator[memoryview]:
    """The text lines of ``rows`` rows at a time, in order, formatted by a nogil
    kernel on every core (a few chunks in flight, so memory stays small)."""
    from concurrent.futures import ThreadPoolExecutor

    from .text_rows import (
        format_text_rows,  # (numba loads only when vectors are written)
    )

    word_bytes, offsets = pack_words(words)
    n, dim = matrix.shape

    def format_chunk(start: int) -> memoryview:
        end = min(n, start + rows)
        out = np.empty(offsets[end] - offsets[start] + (end - start) * (17 * dim + 1), np.uint8)
        return out[:format_text_rows(word_bytes, offsets, matrix, start, end, out)].data

    workers = available_cores()
    with ThreadPoolExecutor(workers) as pool:
        pending = []
        for start in range(0, n, rows):
            pending.append(pool.submit(format_chunk, start))
            if len(pending) > 2 * workers:
                yield pending.pop(0).result()
        for job in pending:
            yield job.result()


def warm_up_writer(dim: int) -> None:
    """Load the text-formatting kernel for ``dim``-wide rows now (see
    :func:`hsw2v.system.memory.release_compiler_pages`)."""
    for _ in _text_chunks(["a"], np.zeros((1, dim), dtype=np.float32)):
        pass


def read_word2vec(path: str, make_cache: bool = False) -> Vectors:
    """Read a word2vec text or binary file (the format is detected) into :class:`Vectors`;
    with ``make_cache``, keep a copy in the user's cache directory if there was none
    to use (:mod:`hsw2v.model.vectors_cache`)."""
    check_regular_file(path, "a vectors file")
    cached = read_cache(path)
    if cached is not None:
        return Vectors(*cached)
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise HSW2VError(f"{path}: not a regular file")
            data = f.read()
    except FileNotFoundError:
        raise HSW2VError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HSW2VError(f"{path}: is a directory") from None
    except OSError as e:
        raise HSW2VError(f"{path}: cannot read: {e.strerror or e}") from None
    nl = data.find(b"\n")
    header = data[:nl].split() if nl >= 0 else []
    if len(header) != 2 or not all(h.isdigit() for h in header):
        raise HSW2VError(f"{path}: not a word2vec file (the first line must be 'V D')")
    n, dim = int(header[0]), int(header[1])
    if dim <= 0:
        raise HSW2VError(f"{path}: dimension must be positive, got {dim}")
    body = data[nl + 1:]
    if n * (dim + 1) > len(body):  # a row takes at least a byte per value and the word
        raise HSW2VError(f"{path}: the header says {n} words of {dim} values, but the file "
                         f"holds only {len(body)} bytes after it")
    words, matrix = _parse_body(path, body, n, dim)
    try:
        vectors = Vectors(*_first_of_each(words, matrix, path))
    except HSW2VError as e:  # NaN or infinity: name the file
        raise HSW2VError(f"{path}: {e}") from None
    if make_cache:
        write_cache(path, vectors.words, vectors.matrix)
    return vectors


def _first_of_each(words: list[str], matrix: np.ndarray, path: str):
    """The rows of words seen for the first time, as gensim keeps them, with a warning
    when a word comes again."""
    if len(set(words)) == len(words):
        return words, matrix
    seen: set[str] = set()
    keep = [i for i, w in enumerate(words) if not (w in seen or seen.add(w))]
    warnings.warn(f"{path}: {len(words) - len(keep)} repeated words; kept the first vector "
                  "of each, as gensim does", stacklevel=3)
    return [words[i] for i in keep], matrix[keep]


def _parse_body(path: str, body: bytes, n: int, dim: int):
    """Rows parsed as the format :func:`_looks_binary` sees; if that fails, as the other
    one (it sees only the first row: float bytes with an early 0x0A can pass for a short
    text line, and a text word may hold a control byte). The first error is reported."""
    first, second = ((_parse_binary, _parse_text) if _looks_binary(body, dim)
                     else (_parse_text, _parse_binary))
    try:
        return first(path, body, n, dim)
    except HSW2VError as e:
        try:
            return second(path, body, n, dim)
        except HSW2VError:
            raise e from None


def _looks_binary(body: bytes, dim: int) -> bool:
    """True if the first row holds raw float32 bytes rather than printable text.

    ``dim`` random-looking float bytes are essentially never all printable UTF-8.
    """
    nl = body.find(b"\n", 0, 64 + 32 * dim)
    first = body[: nl if nl >= 0 else 64 + 32 * dim]
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError as e:
        if nl >= 0 or e.reason != "unexpected end of data":
            return True
        text = first[:e.start].decode("utf-8")  # a character cut by the window
    return any(ord(ch) < 32 and ch not in "\t\r" for ch in text)


def _parse_text(path: str, body: bytes, n: int, dim: int):
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HSW2VError(f"{path}: invalid UTF-8 at byte {e.start} after the header") from None
    # split on "\n" only, as gensim and word2vec.c do: a word may hold U+2028 or U+0085
    lines = [(i, ln) for i, ln in enumerate(text.split("\n"), 2) if ln.strip()]
    if len(lines) != n:
        raise HSW2VError(f"{path}: the header says {n} words but there are {len(lines)} rows")
    words = []
    rows = []
    for lineno, line in lines:
        word, _, row = line.rstrip().partition(" ")
        if row.count(" ") != dim - 1 or not row:
            given = row.count(" ") + 1 if row else 0
            raise HSW2VError(f"{path}:{lineno}: expected a word and {dim} values, got {given} values")
        words.append(word)
        rows.append(row)
    with warnings.catch_warnings():  # a value that is not a number ends the parse early
        warnings.simplefilter("ignore", DeprecationWarning)  # (numpy < 2.3), or raises
        try:
            values = np.fromstring(" ".join(rows), dtype=np.float64, sep=" ")  # as float() does
        except ValueError:
            values = np.empty(0)
    if values.size != n * dim:
        raise HSW2VError(f"{path}: a vector value is not a number")
    return words, values.astype(np.float32).reshape(n, dim)


def _parse_binary(path: str, body: bytes, n: int, dim: int):
    words = []
    matrix = np.empty((n, dim), dtype=np.float32)
    pos = 0
    width = 4 * dim
    for i in range(n):
        while pos < len(body) and body[pos] in b"\n ":
            pos += 1
        space = body.find(b" ", pos)
        if space < 0 or space + 1 + width > len(body):
            raise HSW2VError(f"{path}: binary file ends early, at row {i + 1} of {n}")
        try:
            words.append(body[pos:space].decode("utf-8"))
        except UnicodeDecodeError:
            raise HSW2VError(f"{path}: row {i + 1}: the word is not UTF-8") from None
        matrix[i] = np.frombuffer(body, dtype="<f4", count=dim, offset=space + 1)
        pos = space + 1 + width
    if body[pos:].strip():
        raise HSW2VError(f"{path}: data after the last of {n} rows; wrong dimension in the header?")
    return words, matrix
