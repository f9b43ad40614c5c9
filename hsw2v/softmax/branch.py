"""One branch of a path, what the one-code and several-codes updates share: the
loss −log σ(z) of the branch taken and its slope 1 − σ(z), read from tables
(:func:`branch_loss_grad`), and word2vec.c's edge beyond which no step is taken.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import KERNEL

LUT_MAX = 16.0
"""Branch scores beyond ±LUT_MAX are saturated: σ is 1 or 0 to within 1.2e-7."""
_LUT_SIZE = 1 << 13
_LUT_SCALE = _LUT_SIZE / (2 * LUT_MAX)
_LUT_X = np.linspace(-LUT_MAX, LUT_MAX, _LUT_SIZE + 1)
SIGMOID = (1.0 / (1.0 + np.exp(-_LUT_X))).astype(np.float32)
NEG_LOG_SIGMOID = np.logaddexp(0.0, -_LUT_X).astype(np.float32)
EDGE = 6.0
"""word2vec.c's ``MAX_EXP``: it takes no step for a node whose score h·u is beyond ±EDGE
(nor adds one to h's), however wrong the branch; a kind with
:attr:`~hsw2v.training.kinds.ModelKind.edge` does the same."""
EDGE_SIGMOID = np.where(np.abs(_LUT_X) >= EDGE, 1.0, SIGMOID).astype(np.float32)
""":data:`SIGMOID` as the steps of a kind with an edge read it: 1 beyond ±EDGE, so
the slope 1 − σ(z) is 0 there (the loss still comes from :data:`NEG_LOG_SIGMOID`).
EDGE is a grid point of the table: the slope falls to 0 within one entry (0.004)."""


@njit(**KERNEL, inline="always")
def branch_loss_grad(z):
    """(−log σ(z), 1 − σ(z)) by linear interpolation in tables (error < 1e-6), branch-free.

    z is the score of the branch taken: h·u for code 0, −h·u for code 1. Beyond
    −LUT_MAX the loss continues as −z.
    """
    t = min(max((z + LUT_MAX) * _LUT_SCALE, 0.0), _LUT_SIZE - 1e-3)
    i = int(t)
    frac = t - i
    loss = NEG_LOG_SIGMOID[i] + frac * (NEG_LOG_SIGMOID[i + 1] - NEG_LOG_SIGMOID[i])
    sig = SIGMOID[i] + frac * (SIGMOID[i + 1] - SIGMOID[i])
    return loss + max(-z - LUT_MAX, 0.0), np.float32(1.0) - sig
