"""A copy of word2vec text and binary files in a form that loads in milliseconds, kept
in the user's cache directory (``$XDG_CACHE_HOME/hsw2v/vectors``, else
``~/.cache/hsw2v/vectors``; ``HSW2V_CACHE_DIR`` overrides), never beside the file.

An entry is named by a hash of the file's real path and holds that path, its size,
inode, modification and change times; it is used only while all of them match (a
file edited in place at the same size with its mtime restored, by ``touch -r``,
``cp -p`` or ``rsync -t``, has a new change time), only if its own size is what its
header says, and only if every value is finite (a damaged entry is read past and
rewritten). Its layout: one line of JSON (``{"format": "hsw2v-vectors-cache",
"path", "size", "mtime_ns", "ino", "ctime_ns", "words", "dim", "word_bytes"}``),
then the words' UTF-8 bytes joined by newlines, then the float32 matrix,
little-endian, row by row.

Its entries hold at most ``HSW2V_CACHE_SIZE`` bytes (default 1G; ``0`` turns the
cache off): after each write, the entries used longest ago go first. Only files
named as entries are counted or removed, whatever else the directory holds. Writing and
reading are best effort: a cache that cannot be used is simply not there.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import HSW2VError
from ..system.files import atomic_write

FORMAT = "hsw2v-vectors-cache"
DEFAULT_SIZE = "1G"
_MAX_HEADER = 4096


def cache_dir() -> Path:
    """The directory of the vectors cache."""
    if os.environ.get("HSW2V_CACHE_DIR"):
        return Path(os.environ["HSW2V_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hsw2v" / "vectors"


def cache_limit() -> int:
    """The most bytes the cache may hold (``HSW2V_CACHE_SIZE``: bytes, or K, M, G or T
    as ``--count-memory`` takes them; 0: no cache). A value that is no size is an
    HSW2VError (the commands that use the cache check it first)."""
    from ..system.memory import parse_size

    text = os.environ.get("HSW2V_CACHE_SIZE") or DEFAULT_SIZE
    try:
        return parse_size(text, "HSW2V_CACHE_SIZE", least=0)
    except HSW2VError:
        raise HSW2VError(f"HSW2V_CACHE_SIZE must be a size in bytes, such as 512K, 200M or 1G "
                         f"(0 turns the cache off); got {text!r}") from None


def entry_of(path: str) -> Path:
    """The cache entry of the vectors file ``path``."""
    real = os.path.realpath(path)
    return cache_dir() / (hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:40]
                          + ".vectors")


def write_cache(path: str, words: Sequence[str], matrix: np.ndarray) -> None:
    """Keep a copy of ``path``'s ``words`` and ``matrix`` in the cache."""
    try:
        limit = cache_limit()
        st = os.stat(path)
        blob = "\n".join(words).encode("utf-8")  # words never contain whitespace
        header = json.dumps({"format": FORMAT, "path": os.path.realpath(path),
                             "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino,
                             "ctime_ns": st.st_ctime_ns, "words": len(words),
                             "dim": int(matrix.shape[1]), "word_bytes": len(blob)}).encode()
        total = len(header) + 1 + len(blob) + 4 * matrix.size
        if total > limit or len(header) >= _MAX_HEADER:
            return
        entry = entry_of(path)
        entry.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(str(entry), "wb") as f:
            f.write(header + b"\n" + blob)
            matrix.astype("<f4", copy=False).tofile(f)
        _prune(entry.parent, limit, keep=entry)
    except (OSError, HSW2VError, UnicodeEncodeError):
        pass


def read_cache(path: str) -> tuple[list[str], np.ndarray] | None:
    """Words and matrix of ``path`` from a valid cache entry, else None."""
    try:
        if cache_limit() == 0:
            return None
    except HSW2VError:
        return None
    entry = entry_of(path)
    try:
        st = os.stat(path)
        with open(entry, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            line = f.readline(_MAX_HEADER)
            header = json.loads(line)
            n, dim, word_bytes = int(header["words"]), int(header["dim"]), int(header["word_bytes"])
            if (header.get("format") != FORMAT or header.get("path") != os.path.realpath(path)
                    or [header["size"], header["mtime_ns"], header["ino"], header["ctime_ns"]]
                    != [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
                    or min(n, dim, word_bytes) < 0
                    or size != len(line) + word_bytes + 4 * n * dim):
                return None
            words = f.read(word_bytes).decode("utf-8").split("\n") if n else []
            matrix = np.fromfile(f, dtype="<f4", count=n * dim)
        if len(words) != n or matrix.size != n * dim or not np.isfinite(matrix).all():
            return None  # (damaged: the file is read, and its entry written again)
        os.utime(entry)  # used now: pruned last
        return words, matrix.reshape(n, dim).astype(np.float32, copy=False)
    except (OSError, KeyError, TypeError, ValueError, UnicodeDecodeError, AttributeError):
        return None


ENTRY_NAME = re.compile(r"^[0-9a-f]{40}\.vectors$")
"""The name of an entry (:func:`entry_of`): the only files the cache counts and prunes,
so that no other file in its directory is ever removed (``HSW2V_CACHE_DIR`` may be
a folder of the user's own)."""


def _prune(directory: Path, limit: int, keep: Path) -> None:
    """Remove the entries used longest ago until they hold at most ``limit`` bytes."""
    entries = []
    for p in directory.iterdir():
        if not ENTRY_NAME.match(p.name):
            continue
        try:
            st = p.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            entries.append((st.st_mtime_ns, st.st_size, p))
    total = sum(size for _, size, _ in entries)
    for _, size, p in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        if p != keep:
            try:
                p.unlink()
                total -= size
            except OSError:
                pass
