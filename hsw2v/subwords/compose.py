"""A word's vector from its rows: the mean of its own row and its n-grams' rows
(fastText's ``getWordVector``). The rows are numbered as the training kernels
number them (the V words' own, then the buckets'), but read from the words'
matrix and the buckets' matrix apart: a model read from its file need not join
them (800 MB copied) to answer a query."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import JIT
from .ngrams import SubwordTable


@njit(**JIT)
def _compose(words, ngrams, offsets, rows, out):
    n_words, dim = words.shape
    for w in range(len(offsets) - 1):
        lo, hi = offsets[w], offsets[w + 1]
        acc = out[w]
        acc[:] = 0.0
        for k in range(lo, hi):
            r = rows[k]
            row = words[r] if r < n_words else ngrams[r - n_words]
            for d in range(dim):
                acc[d] += row[d]
        inv = np.float32(1.0) / np.float32(max(hi - lo, 1))
        for d in range(dim):
            acc[d] *= inv


def composed_vectors(words: np.ndarray, ngrams: np.ndarray, table: SubwordTable) -> np.ndarray:
    """Each word's vector: the mean of its rows, row ``r`` of ``words`` (float32
    (V, D)) below V, else row ``r − V`` of ``ngrams``."""
    out = np.empty(words.shape, dtype=np.float32)
    _compose(words, ngrams, table.offsets, table.rows, out)
    return out


def mean_of_rows(words: np.ndarray, ngrams: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The mean of the rows ``rows`` (numbered as in :func:`composed_vectors`), float32."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(words)
    total = words[rows[rows < n]].sum(axis=0, dtype=np.float64) + \
        ngrams[rows[rows >= n] - n].sum(axis=0, dtype=np.float64)
    return (total / len(rows)).astype(np.float32)
