"""A word's character n-grams and their rows, as fastText computes them
(``Dictionary::computeSubwords``): the word is wrapped in ``<`` and ``>``; every
n-gram of ``minn`` to ``maxn`` characters (UTF-8 characters, not bytes), but for
the bare ``<`` and ``>``, is hashed by FNV-1a over its UTF-8 bytes, each byte
taken as a *signed* char (fastText's quirk: bytes of 0x80 and above are
sign-extended), modulo the number of buckets. So a model's n-gram ids are
fastText's, and its files interchange.

Input rows are laid out as fastText's: the V words' own rows first, then the
buckets, n-gram ``h`` at row ``V + h``. A vocabulary word's rows are its own then
its n-grams' (``</s>``, fastText's line end, has only its own); an unseen word's
are its n-grams' alone."""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from ..jit.helpers import JIT

BEGIN, END = "<", ">"
"""What fastText wraps each word in before taking its n-grams."""
LINE_END = "</s>"
"""fastText's line-end word: it has no n-grams."""
FNV32_OFFSET = 2166136261
FNV32_PRIME = 16777619


def fasttext_hash(data: bytes) -> int:
    """fastText's ``Dictionary::hash``: 32-bit FNV-1a over ``data``, each byte taken
    as a signed char (so 0x80..0xFF enter as 0xFFFFFF80..0xFFFFFFFF)."""
    h = FNV32_OFFSET
    for b in data:
        h = ((h ^ (b | 0xFFFFFF00 if b >= 0x80 else b)) * FNV32_PRIME) & 0xFFFFFFFF
    return h


def word_ngrams(word: str, minn: int, maxn: int) -> list[bytes]:
    """The n-grams of ``word`` that fastText hashes, in its order, as UTF-8 bytes."""
    w = (BEGIN + word + END).encode("utf-8")
    out = []
    for i in range(len(w)):
        if w[i] & 0xC0 == 0x80:
            continue
        j, n = i, 1
        while j < len(w) and n <= maxn:
            j += 1
            while j < len(w) and w[j] & 0xC0 == 0x80:
                j += 1
            if n >= minn and not (n == 1 and (i == 0 or j == len(w))):
                out.append(w[i:j])
            n += 1
    return out


class SubwordTable(NamedTuple):
    """Each word's input rows (CSR, int32, as the kernels take them): word ``w``'s
    are ``rows[offsets[w]:offsets[w + 1]]``, its own row ``w`` first."""

    offsets: np.ndarray  # int32 (V+1)
    rows: np.ndarray  # int32


NO_SUBWORDS = SubwordTable(np.zeros(0, np.int32), np.zeros(0, np.int32))
"""The table of a model without subwords (what the kernels take then)."""


@njit(**JIT)
def _fill_rows(data, starts, minn, maxn, buckets, line_end, offsets, rows):
    """:func:`word_ngrams`' rows for every word of ``data`` (each wrapped word's
    UTF-8 bytes, word ``w`` at ``data[starts[w]:starts[w+1]]``): its own row, then
    ``V + hash % buckets`` for each n-gram (none for word ``line_end``). Fills
    ``offsets`` and ``rows``; returns the rows written."""
    n_words = len(starts) - 1
    k = 0
    for w in range(n_words):
        offsets[w] = k
        rows[k] = w
        k += 1
        if w == line_end:
            continue
        lo, hi = starts[w], starts[w + 1]
        for i in range(lo, hi):
            if data[i] & 0xC0 == 0x80:
                continue
            h = np.uint64(FNV32_OFFSET)
            j, n = i, 1
            while j < hi and n <= maxn:
                h = _mix(h, data[j])
                j += 1
                while j < hi and data[j] & 0xC0 == 0x80:
                    h = _mix(h, data[j])
                    j += 1
                if n >= minn and not (n == 1 and (i == lo or j == hi)):
                    rows[k] = n_words + np.int64(h % np.uint64(buckets))
                    k += 1
                n += 1
    offsets[n_words] = k
    return k


@njit(**JIT, inline="always")
def _mix(h, byte):
    """One step of fastText's hash, ``byte`` taken as a signed char (in 64 bits,
    kept to 32: numba widens 32-bit products)."""
    b = np.uint64(byte) | np.uint64(0xFFFFFF00) if byte >= 0x80 else np.uint64(byte)
    return ((np.uint64(h) ^ b) * np.uint64(FNV32_PRIME)) & np.uint64(0xFFFFFFFF)


def subword_table(words: Sequence[str], minn: int, maxn: int, buckets: int) -> SubwordTable:
    """Each of ``words``' input rows: its own, then its n-grams' (see the module).

    Parameters
    ----------
    words
        The vocabulary, in index order.
    minn, maxn
        The n-grams' lengths, in characters.
    buckets
        The rows the n-grams hash into.

    Returns
    -------
    SubwordTable
    """
    encoded = [(BEGIN + w + END).encode("utf-8") for w in words]
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=starts[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    spans = max(maxn - minn + 1, 0)
    most = len(words) + int(starts[-1]) * spans  # (at most one n-gram a length a start)
    if most >= 2**31:
        raise ValueError("the vocabulary has more n-grams than an int32 index holds")
    offsets = np.empty(len(words) + 1, dtype=np.int32)
    rows = np.empty(most, dtype=np.int32)
    line_end = next((i for i, w in enumerate(words) if w == LINE_END), -1)
    used = _fill_rows(data, starts, minn, maxn, buckets, line_end, offsets, rows)
    return SubwordTable(offsets, rows[:used].copy())


def unseen_rows(word: str, n_words: int, minn: int, maxn: int, buckets: int) -> np.ndarray:
    """The rows of a word outside a vocabulary of ``n_words``: its n-grams' alone."""
    return np.array([n_words + fasttext_hash(g) % buckets for g in word_ngrams(word, minn, maxn)],
                    dtype=np.int64)
