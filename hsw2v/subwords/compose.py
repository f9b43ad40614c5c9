"""A word's vector from its rows: the mean of its own row and its n-grams' rows
(fastText's ``getWordVector``)."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit.helpers import JIT
from .ngrams import SubwordTable


@njit(**JIT, parallel=True)
def _compose(inputs, offsets, rows, out):
    dim = inputs.shape[1]
    for w in prange(len(offsets) - 1):
        lo, hi = offsets[w], offsets[w + 1]
        acc = np.zeros(dim, dtype=np.float32)
        for k in range(lo, hi):
            r = inputs[rows[k]]
            for d in range(dim):
                acc[d] += r[d]
        inv = np.float32(1.0) / np.float32(max(hi - lo, 1))
        for d in range(dim):
            out[w, d] = acc[d] * inv


def composed_vectors(inputs: np.ndarray, table: SubwordTable) -> np.ndarray:
    """Each word's vector: the mean of its rows of ``inputs`` (float32 (V+B, D))."""
    out = np.empty((len(table.offsets) - 1, inputs.shape[1]), dtype=np.float32)
    _compose(inputs, table.offsets, table.rows, out)
    return out


def mean_of_rows(inputs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The mean of ``inputs[rows]`` (float32), a word outside the vocabulary's vector."""
    return inputs[rows].mean(axis=0, dtype=np.float64).astype(np.float32)
