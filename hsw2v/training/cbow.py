"""CBOW: the mean (or sum) of the context vectors predicts the centre word."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..softmax.step import target_step
from ..jit.helpers import KERNEL
from .ring import context_positions, slot_of


class Config(NamedTuple):
    """What CBOW's kernels read; its type selects CBOW's steps when numba compiles."""

    window: int
    sync_every: int  # merge the private hot rows every this many words
    cbow_mean: bool
    fast_rows: int = 0  # merge the hottest this many of them every 64 words (block.merge_due)


@njit(**KERNEL, inline="always")
def context_mean(syn0, rows, n, mean, h, dim):
    """h = the sum of ``syn0[rows[:n]]``, divided by n if ``mean`` (CBOW's context vector)."""
    h[:] = 0.0
    for k in range(n):
        c = syn0[rows[k]]
        for d in range(dim):
            h[d] += c[d]
    if mean:
        inv = np.float32(1.0) / np.float32(n)
        for d in range(dim):
            h[d] *= inv


@njit(**KERNEL, inline="always")
def centre(t, target, ctx, n_ctx, alpha, dim):
    """CBOW step: the mean (or sum) h of the context vectors ``ctx[:n_ctx]`` predicts
    ``target``; as in word2vec.c, the whole gradient step for h is added to every
    context vector. ``t``: the block's :class:`~hsw2v.training.block.BlockTraining`
    (weights and the thread's scratch). Returns (−log P(target | h), 1 example)."""
    syn0 = t.syn0
    h, grad_h = t.rows[0, 0], t.rows[1, 0]
    context_mean(syn0, ctx, n_ctx, t.config.cbow_mean, h, dim)
    grad_h[:] = 0.0
    loss = target_step(h, target, alpha, t.syn1, t.hot_slot, t.hot_rows, t.paths, grad_h,
                       t.path[0, 0], dim)
    for k in range(n_ctx):
        c = syn0[ctx[k]]
        for d in range(dim):
            c[d] += grad_h[d]
    return loss, 1


subword_context = context_positions
"""With subwords, CBOW's kernel takes its contexts as positions (see :mod:`hsw2v.training.ring`)."""


@njit(**KERNEL, inline="always")
def centre_subwords(t, target, ctx, n_ctx, alpha, dim):
    """:func:`centre` with subwords, as fastText's CBOW: h is the mean (or sum) of
    every row of the context words (each word's own and its n-grams',
    ``t.sub_rows``), and the whole gradient step for h is added to each of them.
    ``ctx`` holds the context's positions in the sentence; the rows' sums and the
    steps go through the window's ring (:mod:`hsw2v.training.ring`)."""
    offsets = t.sub_offsets
    totals, pending = t.ring[0], t.ring[1]
    h, grad_h = t.rows[0, 0], t.rows[1, 0]
    h[:] = 0.0
    n = 0
    for k in range(n_ctx):
        slot = slot_of(t, ctx[k], dim)
        c = totals[slot]
        for d in range(dim):
            h[d] += c[d]
        word = t.ring_word[slot]
        n += offsets[word + 1] - offsets[word]
    if t.config.cbow_mean:
        inv = np.float32(1.0) / np.float32(n)
        for d in range(dim):
            h[d] *= inv
    grad_h[:] = 0.0
    loss = target_step(h, target, alpha, t.syn1, t.hot_slot, t.hot_rows, t.paths, grad_h,
                       t.path[0, 0], dim)
    for k in range(n_ctx):
        slot = ctx[k] % len(t.ring_pos)
        word = t.ring_word[slot]
        n_rows = np.float32(offsets[word + 1] - offsets[word])
        c, p = totals[slot], pending[slot]
        for d in range(dim):
            c[d] += n_rows * grad_h[d]
            p[d] += grad_h[d]
    return loss, 1


@njit(**KERNEL, inline="always")
def context(config, syn0, extra, ctx, n_ctx, H, dim):
    """The context as CBOW predicts from it: one row of ``H``, the mean (or sum) of
    the context vectors. Returns the number of rows, 1."""
    context_mean(syn0, ctx, n_ctx, config.cbow_mean, H[0], dim)
    return 1


def config_of(s) -> Config:
    """The :class:`Config` of settings ``s``."""
    return Config(int(s.window), 0, bool(s.cbow_mean))

