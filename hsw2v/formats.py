"""File formats: word2vec text and binary vectors, and the hsw2v model file.

Model file (``.npz``, written with :func:`numpy.savez`, read with
``allow_pickle=False``, so loading never runs code). Its arrays:

=================  ==============  ================================================
``meta``           uint8           UTF-8 JSON: ``{"format": "hsw2v-model",
                                   "version": 1, "tree": kind, "settings": {…}}``
``words``          uint8           the words' UTF-8 bytes, concatenated
``word_offsets``   int64 (V+1)     word ``i`` is ``words[word_offsets[i]:word_offsets[i+1]]``
``counts``         int64 (V)       corpus counts, descending
``children``       int32 (V-1, 2)  the tree (see :mod:`hsw2v.tree`)
``vectors``        float32 (V, D)  input (word) vectors
``node_vectors``   float32 (V-1, D) inner-node vectors
=================  ==============  ================================================
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO

import numpy as np

from .errors import HSW2VError

MODEL_FORMAT = "hsw2v-model"
MODEL_VERSION = 1


def pack_words(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Words as their concatenated UTF-8 bytes and the offsets where each starts (V+1)."""
    encoded = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


@contextmanager
def atomic_write(path: str, mode: str = "wb") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it over ``path`` on success.

    On any error the temporary file is removed and an existing ``path`` is untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    check_writable(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".hsw2v-", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def check_writable(path: str) -> None:
    """Fail early if ``path`` cannot be created: a missing or unwritable directory."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise HSW2VError(f"{path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise HSW2VError(f"{path}: is a directory")
    if not os.access(directory, os.W_OK):
        raise HSW2VError(f"{path}: directory {directory} is not writable")


def write_vectors(path: str, words: Sequence[str], matrix: np.ndarray, binary: bool = False) -> None:
    """Write word2vec format: a ``V D`` header, then one word and its vector per line.

    Text values are written with 9 significant digits, so float32 round-trips exactly.
    Binary rows are ``word``, a space, D little-endian float32 values and a newline.
    A sidecar ``path.cache`` makes reading the file back fast.
    """
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    n, dim = matrix.shape
    with atomic_write(path, "wb") as f:
        f.write(f"{n} {dim}\n".encode())
        if binary:
            raw = matrix.astype("<f4", copy=False)
            for w, row in zip(words, raw):
                f.write(w.encode("utf-8") + b" " + row.tobytes() + b"\n")
        else:
            for chunk in _text_chunks(words, matrix):
                f.write(chunk)
    _write_cache(path, words, matrix)


def _text_chunks(words: Sequence[str], matrix: np.ndarray, rows: int = 2048) -> Iterator[memoryview]:
    """The text lines of ``rows`` rows at a time, in order, formatted by a nogil
    kernel on every core (a few chunks in flight, so memory stays small)."""
    from concurrent.futures import ThreadPoolExecutor

    from .kernels import format_text_rows
    from .trainer import available_cores

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
    :func:`hsw2v.memory.release_compiler_pages`)."""
    for _ in _text_chunks(["a"], np.zeros((1, dim), dtype=np.float32)):
        pass


CACHE_SUFFIX = ".cache"
"""A vectors file ``F`` written by hsw2v gets a sidecar ``F.cache`` that loads in
milliseconds; it is used only while ``F``'s size and modification time match.

Its layout: one line of JSON (``{"format": "hsw2v-vectors-cache", "size", "mtime_ns",
"words", "dim", "word_bytes"}``), then the words' UTF-8 bytes joined by newlines,
then the float32 matrix, little-endian, row by row."""


def _write_cache(path: str, words: Sequence[str], matrix: np.ndarray) -> None:
    """Best effort: a cache that cannot be written is simply not there."""
    try:
        st = os.stat(path)
        blob = "\n".join(words).encode("utf-8")  # words never contain whitespace
        header = {"format": "hsw2v-vectors-cache", "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                  "words": len(words), "dim": int(matrix.shape[1]), "word_bytes": len(blob)}
        with atomic_write(path + CACHE_SUFFIX, "wb") as f:
            f.write(json.dumps(header).encode() + b"\n" + blob)
            matrix.astype("<f4", copy=False).tofile(f)
    except (OSError, HSW2VError):
        pass


def _read_cache(path: str):
    """Words and matrix from a valid sidecar of ``path``, else None."""
    try:
        st = os.stat(path)
        with open(path + CACHE_SUFFIX, "rb") as f:
            header = json.loads(f.readline())
            if (header.get("format") != "hsw2v-vectors-cache"
                    or [header["size"], header["mtime_ns"]] != [st.st_size, st.st_mtime_ns]):
                return None
            n, dim = int(header["words"]), int(header["dim"])
            words = f.read(int(header["word_bytes"])).decode("utf-8").split("\n")
            matrix = np.fromfile(f, dtype="<f4", count=n * dim)
        if len(words) != n or matrix.size != n * dim:
            return None
        return words, matrix.reshape(n, dim).astype(np.float32, copy=False)
    except (OSError, KeyError, TypeError, ValueError, UnicodeDecodeError, AttributeError):
        return None


def read_vectors(path: str):
    """Read a word2vec text or binary file (the format is detected) into :class:`Vectors`.

    An hsw2v model file (``.npz``) gives its word vectors.
    """
    from .vectors import Vectors

    if path.endswith(".npz"):
        return load_model(path).keyed_vectors()
    cached = _read_cache(path)
    if cached is not None:
        return Vectors(*cached)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise HSW2VError(f"{path}: no such file") from None
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
    if _looks_binary(body, dim):
        words, matrix = _parse_binary(path, body, n, dim)
    else:
        words, matrix = _parse_text(path, body, n, dim)
    return Vectors(words, matrix)


def _looks_binary(body: bytes, dim: int) -> bool:
    """True if the first row holds raw float32 bytes rather than printable text.

    ``dim`` random-looking float bytes are essentially never all printable UTF-8.
    """
    nl = body.find(b"\n", 0, 64 + 32 * dim)
    first = body[: nl if nl >= 0 else 64 + 32 * dim]
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return any(ord(ch) < 32 and ch not in "\t\r" for ch in text)


def _parse_text(path: str, body: bytes, n: int, dim: int):
    try:
        lines = body.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise HSW2VError(f"{path}: invalid UTF-8 at byte {e.start} after the header") from None
    lines = [ln for ln in lines if ln.strip()]
    if len(lines) != n:
        raise HSW2VError(f"{path}: the header says {n} words but there are {len(lines)} rows")
    words = []
    values = []
    for i, line in enumerate(lines):
        parts = line.rstrip().split(" ")
        if len(parts) != dim + 1:
            raise HSW2VError(
                f"{path}:{i + 2}: expected a word and {dim} values, got {len(parts) - 1} values"
            )
        words.append(parts[0])
        values.append(parts[1:])
    try:
        matrix = np.array(values, dtype=np.float32)
    except ValueError:
        raise HSW2VError(f"{path}: a vector value is not a number") from None
    return words, matrix.reshape(n, dim)


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


def save_model(path: str, model) -> None:
    """Write ``model`` (a :class:`hsw2v.model.Model`) as a model file; see module docs."""
    word_bytes, offsets = pack_words(model.vocab.words)
    meta = {"format": MODEL_FORMAT, "version": MODEL_VERSION, "tree": model.tree.kind,
            "settings": model.settings}
    with atomic_write(path, "wb") as f:
        np.savez(
            f,
            meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            words=word_bytes,
            word_offsets=offsets,
            counts=model.vocab.counts,
            children=model.tree.children,
            vectors=model.vectors,
            node_vectors=model.node_vectors,
        )


_MODEL_ARRAYS = {
    "meta": np.uint8, "words": np.uint8, "word_offsets": np.int64, "counts": np.int64,
    "children": np.int32, "vectors": np.float32, "node_vectors": np.float32,
}


def load_model(path: str):
    """Read a model file written by :func:`save_model`; never unpickles."""
    from .model import Model
    from .tree import Tree
    from .vocab import Vocab

    try:
        with np.load(path, allow_pickle=False) as z:
            missing = set(_MODEL_ARRAYS) - set(z.files)
            if missing:
                raise HSW2VError(f"{path}: not an hsw2v model (missing {', '.join(sorted(missing))})")
            arrays = {k: z[k] for k in _MODEL_ARRAYS}
    except FileNotFoundError:
        raise HSW2VError(f"{path}: no such file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise HSW2VError(f"{path}: not an hsw2v model file ({e})") from None
    for k, dtype in _MODEL_ARRAYS.items():
        if arrays[k].dtype != dtype:
            raise HSW2VError(f"{path}: corrupt model ({k} has dtype {arrays[k].dtype})")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise HSW2VError(f"{path}: corrupt model (unreadable metadata)") from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise HSW2VError(f"{path}: not an hsw2v model file")
    if meta.get("version") != MODEL_VERSION:
        raise HSW2VError(
            f"{path}: model format version {meta.get('version')}, "
            f"but this hsw2v reads version {MODEL_VERSION}"
        )
    offsets, counts = arrays["word_offsets"], arrays["counts"]
    vectors, node_vectors = arrays["vectors"], arrays["node_vectors"]
    n = len(counts)
    if (
        len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(arrays["words"])
        or np.any(np.diff(offsets) < 0) or vectors.ndim != 2 or vectors.shape[0] != n
        or node_vectors.shape != (n - 1, vectors.shape[1]) or arrays["children"].shape != (n - 1, 2)
    ):
        raise HSW2VError(f"{path}: corrupt model (array shapes disagree)")
    blob = arrays["words"].tobytes()
    try:
        words = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    except UnicodeDecodeError:
        raise HSW2VError(f"{path}: corrupt model (a word is not UTF-8)") from None
    tree = Tree(arrays["children"], meta.get("tree", "huffman"))
    return Model(Vocab(words, counts), tree, vectors, node_vectors, meta.get("settings", {}))
