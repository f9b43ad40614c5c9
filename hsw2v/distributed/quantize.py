"""What travels between a Dask worker and the client: the rows a round changed,
as int8 steps of a per-row scale, and the copying of the rows a slice reaches."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import IEEE, JIT


@njit(**JIT)
def take_rows(keys, offsets, items, src, dst, seen, rows, n):
    """For each key, each row r of ``items[offsets[key]:offsets[key + 1]]`` not yet
    ``seen``: mark it, append it to ``rows`` (after the first ``n``), and copy
    ``src[r]`` to ``dst[r]``. Returns the new number of rows."""
    for key in keys:
        for k in range(offsets[key], offsets[key + 1]):
            r = items[k]
            if not seen[r]:
                seen[r] = True
                rows[n] = r
                n += 1
                for j in range(src.shape[1]):
                    dst[r, j] = src[r, j]
    return n


STEPS = 127
"""A quantized row's largest entry, in steps of its scale."""
STEP_TYPE = np.int8
"""The type of a quantized row's entries."""


@njit(**IEEE)
def quantized_differences(new, old, candidates, rows, steps, scale):
    """For each row r among ``candidates`` where ``new`` and ``old`` differ, in
    order: append r to ``rows``, its largest |new[r] - old[r]| / STEPS to
    ``scale`` and (new[r] - old[r]) / scale, rounded to integers, to ``steps``
    (:data:`STEP_TYPE`). Returns the number of rows."""
    n = 0
    for r in candidates:
        m = np.float32(0.0)
        for j in range(new.shape[1]):
            m = max(m, abs(new[r, j] - old[r, j]))
        if m == 0:
            continue
        inv = np.float32(STEPS) / m
        for j in range(new.shape[1]):
            steps[n, j] = STEP_TYPE(np.rint((new[r, j] - old[r, j]) * inv))
        rows[n] = r
        scale[n] = m / np.float32(STEPS)
        n += 1
    return n


@njit(**IEEE)
def add_quantized_rows(matrix, rows, steps, scale):
    """``matrix[rows[i]] += steps[i] * scale[i]`` for each i, in place (float32)."""
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(matrix.shape[1]):
            matrix[r, j] += np.float32(steps[i, j]) * scale[i]
