"""Counting tables: a growing hash table of words with their counts and first
occurrences, one per counting thread, merged exactly at the end.

A word's first occurrence is a key, ``block << KEY_SHIFT | token``: its block's
index in the corpus and its index among the block's tokens. Merged tables keep
the smaller key, so sorting by it gives the order of first occurrence in the
corpus, whichever thread counted which block.
"""
from __future__ import annotations

import numpy as np

from .tokens import build_table, count_block, gather_words, merge_types

KEY_SHIFT = 24
"""A block holds fewer than 2**24 tokens (blocks are about 1 MiB, at most 16 MiB)."""


def grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` copied into an array of at least ``size`` elements (doubling)."""
    out = np.zeros(max(size, 2 * len(a)), dtype=a.dtype)
    out[:len(a)] = a
    return out


class CountTable:
    """Distinct words (bytes in ``arena``, word i at ``offsets[i]:offsets[i+1]``) in
    the order this table first saw them, with ``counts`` and ``first`` keys, and the
    open-addressing hash table that finds them."""

    def __init__(self):
        self.table = np.full(1 << 16, -1, dtype=np.int32)
        self.arena = np.empty(1 << 20, dtype=np.uint8)
        self.offsets = np.zeros((1 << 15) + 1, dtype=np.int64)
        self.counts = np.zeros(1 << 15, dtype=np.int64)
        self.first = np.zeros(1 << 15, dtype=np.int64)
        self.n_types = 0
        self.used = 0

    @property
    def nbytes(self) -> int:
        """Memory the table holds."""
        return sum(a.nbytes for a in (self.table, self.arena, self.offsets, self.counts, self.first))

    def reserve(self, n_bytes: int, n_types: int) -> None:
        """Room for ``n_bytes`` more word bytes and ``n_types`` more types, with the
        hash table at most half full."""
        need = self.n_types + n_types
        if len(self.arena) - self.used < n_bytes:
            self.arena = grown(self.arena, self.used + n_bytes)
        if len(self.counts) < need:
            self.counts, self.first = grown(self.counts, need), grown(self.first, need)
            self.offsets = grown(self.offsets, need + 1)
        if 2 * need > len(self.table):
            self.table = np.full(1 << (2 * need).bit_length(), -1, dtype=np.int32)
            build_table(self.arena, self.offsets[:self.n_types + 1], self.table)

    def count(self, buf: np.ndarray, block: int, codes: np.ndarray) -> tuple[int, int]:
        """Count the words of block number ``block``; with a non-empty ``codes``
        (room for ``4 * len(buf) + 8`` bytes), also write its spool codes there.
        Returns (tokens, spool bytes)."""
        self.reserve(len(buf), len(buf) // 2 + 1)
        self.n_types, self.used, tokens, k = count_block(
            buf, self.table, self.arena, self.offsets, self.counts, self.first,
            block << KEY_SHIFT, self.n_types, self.used, codes)
        return tokens, k

    def merge(self, other: CountTable) -> np.ndarray:
        """Add ``other``'s words and counts to this table; returns each of its
        types' id here."""
        self.reserve(other.used, other.n_types)
        ids = np.empty(other.n_types, dtype=np.int32)
        self.n_types, self.used = merge_types(
            other.arena, other.offsets, other.counts, other.first, other.n_types, self.table,
            self.arena, self.offsets, self.counts, self.first, self.n_types, self.used, ids)
        return ids

    def in_first_order(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(word bytes, offsets, counts, rank): the words sorted by first occurrence,
        and each type's index in that order."""
        n = self.n_types
        first = self.first[:n]
        if n < 2 or np.all(first[1:] > first[:-1]):  # one table: already in order
            return (self.arena[:self.used].copy(), self.offsets[:n + 1].copy(),
                    self.counts[:n].copy(), np.arange(n, dtype=np.int32))
        order = np.argsort(first)
        rank = np.empty(n, dtype=np.int32)
        rank[order] = np.arange(n, dtype=np.int32)
        word_bytes = np.empty(self.used, dtype=np.uint8)
        offsets = np.empty(n + 1, dtype=np.int64)
        gather_words(self.arena, self.offsets, order, word_bytes, offsets)
        return word_bytes, offsets, self.counts[order], rank
