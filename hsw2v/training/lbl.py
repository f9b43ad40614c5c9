"""The hierarchical log-bilinear language model (HLBL; Mnih & Hinton 2008): the N
preceding words predict the next one.

Each word w has a representation r_w (the word vectors), positions i = 1..N have
weights C_i, and the prediction for the word at t is

    r̂ = Σ_i C_i r_{w_{t−i}}

with C_i a diagonal (a D-vector c_i, ``c_i ⊙ r``: ``--position-weights
diagonal``) or a full D×D matrix (``full``). P(w | context) is the product over
w's path of σ(±(r̂·q_n + b_n)): every inner node has a bias (node biases are always
on for this kind).

A context is exactly the N words before the target in its line (``--window N``, no
random shrink), oldest first; positions before the line's start take a learned
start-of-line representation s, so every kept token is predicted, the first of a
line included. In the kernels a context is N word ids, −1 standing for s.

The kind's own matrices (:attr:`hsw2v.training.kinds.ModelKind.matrices`):
``positions`` (N, D) for diagonal weights, or (N·D, D) for full ones (C_i in rows
(i−1)·D … i·D−1), and ``start`` (1, D), the row s.

The step is the gradient step of −log P: the inner nodes on the path move as in
word2vec (:func:`hsw2v.softmax.step.target_step`), then with
g = −α ∂(−log P)/∂r̂, each context row r_i += C_iᵀ g and C_i += g r_iᵀ (diagonal:
c_i += g ⊙ r_i), from the values before the step. A row may stand at several
positions (the start row before a line's first words, a repeated word). With full
matrices, every C_i moves first, from the rows as they were, and the rows' steps
are applied after, each position's added: the exact gradient step. With diagonal
weights the positions go in turn (nearest first), each moving its c_i and its row
in one pass, so a row's later positions take their c_i's step from the row as the
earlier ones left it (a difference of α²·c ⊙ g ⊙ g, as word2vec.c's skip-gram moves
the nodes between one context word and the next): two passes over the rows cost
about 15% of an epoch (the kernels' benchmarks page).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..softmax.step import target_step
from ..jit.helpers import KERNEL
from .kinds import POSITION_WEIGHTS


class Config(NamedTuple):
    """What the LBL kernels read; its type selects LBL's steps when numba compiles."""

    window: int  # N, the preceding words
    sync_every: int  # merge the private hot rows every this many words
    full: bool  # full D×D position matrices, else diagonal
    fast_rows: int = 0  # merge the hottest this many of them every 64 words (block.merge_due)


@njit(**KERNEL, inline="always")
def context_words(config, sen, i, m, window, shrink, r, ctx):
    """The ``window`` words before ``sen[i]`` in its sentence, oldest first, −1 for
    the positions before its start (no random shrink). Returns (window, r)."""
    for k in range(window):
        j = i - window + k
        ctx[k] = sen[j] if j >= 0 else -1
    return window, r


@njit(**KERNEL, inline="always")
def _row(syn0, start, words, w):
    """Word ``w``'s input row: the start row for −1, the thread's own copy for the
    most frequent words (``words``: its copies of ``syn0[:K]``), else ``syn0[w]``."""
    if w < 0:
        return start[0]
    return words[w] if w < len(words) else syn0[w]


@njit(**KERNEL, inline="always")
def predicted(config, syn0, extra, words, ctx, n_ctx, h, dim):
    """r̂ into ``h`` from the context ``ctx[:n_ctx]`` (oldest first): its last N words,
    the last nearest; missing positions (and ids −1) take the start row. ``words``:
    private copies of ``syn0[:K]`` (see :func:`_row`)."""
    positions, start = extra
    n = config.window
    for d in range(dim):
        h[d] = 0.0
    for p in range(n):  # position p + 1: the word p + 1 before the target
        j = n_ctx - 1 - p
        r = _row(syn0, start, words, ctx[j] if j >= 0 else -1)
        if config.full:
            C = positions[p * dim:(p + 1) * dim]
            for a in range(dim):
                x = np.float32(0.0)
                for b in range(dim):
                    x += C[a, b] * r[b]
                h[a] += x
        else:
            c = positions[p]
            for d in range(dim):
                h[d] += c[d] * r[d]


@njit(**KERNEL, inline="always")
def centre(t, target, ctx, n_ctx, alpha, dim):
    """LBL step: r̂ from the N context rows predicts ``target`` along its path (see
    the module). ``t``: the block's :class:`~hsw2v.training.block.BlockTraining`.
    Returns (−log P(target | context), 1 example)."""
    syn0 = t.syn0
    positions, start = t.extra
    h, g = t.rows[0, 0], t.rows[1, 0]
    words = t.word_rows
    predicted(t.config, syn0, t.extra, words, ctx, n_ctx, h, dim)
    g[:] = 0.0
    loss = target_step(h, target, alpha, t.syn1, t.hot_slot, t.hot_rows, t.paths, g,
                       t.path[0, 0], dim)
    n = t.config.window
    if not t.config.full:  # each position in turn: c_p += g ⊙ r, r += c_p ⊙ g
        for p in range(n):  # (three arrays a loop: with a fourth, it stops vectorising)
            j = n_ctx - 1 - p
            r = _row(syn0, start, words, ctx[j] if j >= 0 else -1)
            c = positions[p]
            for d in range(dim):
                step_d = c[d] * g[d]
                c[d] += r[d] * g[d]
                r[d] += step_d
        return loss, 1
    for p in range(n):  # full: C_p's step g rᵀ in one pass over C's rows, and r's step
        j = n_ctx - 1 - p  # C_pᵀ g kept in row 1 + p of rows[0]
        r = _row(syn0, start, words, ctx[j] if j >= 0 else -1)
        step = t.rows[0, 1 + p]
        C = positions[p * dim:(p + 1) * dim]
        for b in range(dim):
            step[b] = 0.0
        for a in range(dim):
            ga = g[a]
            row = C[a]
            for b in range(dim):
                step[b] += row[b] * ga
                row[b] += ga * r[b]
    for p in range(n):  # then the rows: a row at several positions takes each step
        j = n_ctx - 1 - p
        r = _row(syn0, start, words, ctx[j] if j >= 0 else -1)
        step = t.rows[0, 1 + p]
        for d in range(dim):
            r[d] += step[d]
    return loss, 1


@njit(**KERNEL, inline="always")
def context(config, syn0, extra, ctx, n_ctx, H, dim):
    """The context as LBL predicts from it: one row of ``H``, r̂ (see
    :func:`predicted`). Returns the number of rows, 1."""
    predicted(config, syn0, extra, syn0[:0], ctx, n_ctx, H[0], dim)
    return 1


def config_of(s) -> Config:
    """The :class:`Config` of settings ``s``."""
    return Config(int(s.window), 0, s.position_weights == POSITION_WEIGHTS[1])
