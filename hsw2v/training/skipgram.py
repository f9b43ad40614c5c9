"""Skip-gram: each context word's vector predicts the centre word, the context words
taking turns as in word2vec.c.

Every step is inlined into the block kernel (see :mod:`hsw2v.training.kinds` for why
none may be called); each kind has a kernel of its own, so skip-gram's big steps
cost CBOW nothing.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..softmax.branch import branch_loss_grad
from ..softmax.step import codes_of, target_step
from ..jit.helpers import KERNEL
from .ring import add_to_rows, sum_rows


NODE_BIAS: bool  # a copy's constant (see hsw2v.softmax.step.NODE_BIAS and block.centre_of)


class Config(NamedTuple):
    """What skip-gram's kernels read; its type selects skip-gram's steps when numba compiles."""

    window: int
    sync_every: int  # merge the private hot rows every this many words
    fast_rows: int = 0  # merge the hottest this many of them every 64 words (block.merge_due)


@njit(**KERNEL, inline="always")
def distinct_run(ctx, start, n):
    """The end of the longest run ``ctx[start:end]`` of distinct words (end ≤ n)."""
    for end in range(start + 1, n):
        for k in range(start, end):
            if ctx[k] == ctx[end]:
                return end
    return n


@njit(**KERNEL, inline="always")
def skipgram_in_turn(target, ctx, n_ctx, alpha, syn0, syn1, hot_slot, hot_rows, paths, rows,
                     pairs, path, dim):
    """:func:`skipgram_distinct` for a target with several codes: the context words
    take turns, as in word2vec.c, each with one :func:`hsw2v.softmax.step.target_step`.
    Returns Σ_c −log P(target | c)."""
    grad, scratch = rows[1], path[0, 0]
    loss = 0.0
    for c in range(n_ctx):
        row = syn0[ctx[c]]
        g = grad[c]
        g[:] = 0.0
        loss += target_step(row, target, alpha, syn1, hot_slot, hot_rows, paths, g, scratch,
                            dim)
        for d in range(dim):
            row[d] += g[d]
    return loss


@njit(**KERNEL, inline="always")
def skipgram_distinct(target, ctx, n_ctx, alpha, syn0, syn1, hot_slot, hot_rows, paths, rows,
                    pairs, path, dim):
    """Skip-gram steps for ``target`` and its context words ``ctx[:n_ctx]``, each of
    whose vectors predicts it.

    The context words must be distinct (:func:`train_block` cuts the window into
    runs of distinct words). Gives word2vec.c's result, where the context words take
    turns and each sees the vectors as the previous ones left them, but reads each
    node vector once:
    context c's score on node u is h_c·u + Σ_{c'<c} g_c' (h_c·h_c'), from the Gram
    matrix of the contexts, and the gradient it sends to h_c picks up the matching
    Σ_{c'<c} (Σ_n g_cn g_c'n) h_c' at the end. The path's nodes are distinct, so
    the scores X (contexts × path) are three small matrix products and a loop over
    the path per context. Inner nodes with ``hot_slot[n] >= 0`` live in the
    thread's ``hot_rows`` (see :func:`hsw2v.softmax.one_code.one_code_step`).
    ``rows``, ``pairs``, ``path``: a :class:`State`'s scratch. Returns Σ_c −log P(target | c).

    With a node bias (``syn1`` a column wider than ``dim``), each earlier context's
    step also moved the bias by g, so the Gram entries gain 1 and the bias takes
    the sum of the contexts' steps.

    Contexts go four at a time, then two: one load of u[d] serves four, and u takes
    their four steps in one store; each context's gradient takes the path's nodes
    four at a time, in one store. The row selection is written out at each use on
    purpose: a helper returning either row was slower. (Figures: the kernels'
    benchmarks page.)
    """
    H, grad, gram, cross, X, G = rows[0], rows[1], pairs[0], pairs[1], path[0], path[1]
    bias = NODE_BIAS
    one = np.float32(1.0) if bias else np.float32(0.0)
    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes
    p0 = offsets[target]
    n = offsets[target + 1] - p0
    for c in range(n_ctx):
        row = syn0[ctx[c]]
        for d in range(dim):
            H[c, d] = row[d]
            grad[c, d] = 0.0
        for c2 in range(c):
            s = np.float32(0.0)
            for d in range(dim):
                s += H[c, d] * H[c2, d]
            gram[c, c2] = s + one
    for p in range(n):
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        alpha_p = u[dim] if bias else np.float32(0.0)
        c = 0
        while c + 4 <= n_ctx:  # four contexts a pass: each load of u serves four
            x0 = x1 = x2 = x3 = alpha_p
            for d in range(dim):
                ud = u[d]
                x0 += H[c, d] * ud
                x1 += H[c + 1, d] * ud
                x2 += H[c + 2, d] * ud
                x3 += H[c + 3, d] * ud
            X[c, p], X[c + 1, p], X[c + 2, p], X[c + 3, p] = x0, x1, x2, x3
            c += 4
        if c + 2 <= n_ctx:
            x0 = x1 = alpha_p
            for d in range(dim):
                ud = u[d]
                x0 += H[c, d] * ud
                x1 += H[c + 1, d] * ud
            X[c, p], X[c + 1, p] = x0, x1
            c += 2
        while c < n_ctx:
            x = alpha_p
            for d in range(dim):
                x += H[c, d] * u[d]
            X[c, p] = x
            c += 1
    loss = 0.0
    for c in range(n_ctx):
        for c2 in range(c):
            m = gram[c, c2]
            for p in range(n):
                X[c, p] += G[c2, p] * m
        for p in range(n):
            sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p0 + p])
            branch_loss, slope = branch_loss_grad(sign * X[c, p])
            loss += branch_loss
            G[c, p] = sign * slope * alpha
        for c2 in range(c):
            s = np.float32(0.0)
            for p in range(n):
                s += G[c, p] * G[c2, p]
            cross[c, c2] = s
    p = 0
    # The four rows are picked as in one_code_step, written out: a shared helper was slower there.
    while p + 4 <= n:  # each context's gradient takes four nodes' steps in one store
        n0, n1, n2, n3 = nodes[p0 + p], nodes[p0 + p + 1], nodes[p0 + p + 2], nodes[p0 + p + 3]
        s0, s1, s2, s3 = hot_slot[n0], hot_slot[n1], hot_slot[n2], hot_slot[n3]
        u0 = hot_rows[s0] if s0 >= 0 else syn1[n0]
        u1 = hot_rows[s1] if s1 >= 0 else syn1[n1]
        u2 = hot_rows[s2] if s2 >= 0 else syn1[n2]
        u3 = hot_rows[s3] if s3 >= 0 else syn1[n3]
        for c in range(n_ctx):
            g0, g1, g2, g3 = G[c, p], G[c, p + 1], G[c, p + 2], G[c, p + 3]
            for d in range(dim):
                grad[c, d] += g0 * u0[d] + g1 * u1[d] + g2 * u2[d] + g3 * u3[d]
        p += 4
    while p < n:
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        for c in range(n_ctx):
            gc = G[c, p]
            for d in range(dim):
                grad[c, d] += gc * u[d]
        p += 1
    for p in range(n):
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        c = 0
        while c + 4 <= n_ctx:  # u's new value after the four contexts, in one store
            g0, g1, g2, g3 = G[c, p], G[c + 1, p], G[c + 2, p], G[c + 3, p]
            for d in range(dim):
                u[d] += g0 * H[c, d] + g1 * H[c + 1, d] + g2 * H[c + 2, d] + g3 * H[c + 3, d]
            if bias:
                u[dim] += g0 + g1 + g2 + g3
            c += 4
        if c + 2 <= n_ctx:
            g0, g1 = G[c, p], G[c + 1, p]
            for d in range(dim):
                u[d] += g0 * H[c, d] + g1 * H[c + 1, d]
            if bias:
                u[dim] += g0 + g1
            c += 2
        while c < n_ctx:
            gc = G[c, p]
            for d in range(dim):
                u[d] += gc * H[c, d]
            if bias:
                u[dim] += gc
            c += 1
    for c in range(n_ctx):
        for c2 in range(c):
            m = cross[c, c2]
            for d in range(dim):
                grad[c, d] += m * H[c2, d]
        row = syn0[ctx[c]]
        for d in range(dim):
            row[d] += grad[c, d]
    return loss


@njit(**KERNEL, inline="always")
def centre(t, target, ctx, n_ctx, alpha, dim):
    """Skip-gram steps for ``target`` and its context ``ctx[:n_ctx]``: the context is
    cut into runs of distinct words (a word that comes again must see its own
    earlier update), each trained by :func:`skipgram_distinct`, or by
    :func:`skipgram_in_turn` for a target with several codes. ``t``: the block's
    :class:`~hsw2v.training.block.BlockTraining`. Returns (Σ_c −log P(target | c),
    n_ctx examples)."""
    syn0, syn1, hot_slot, hot_rows, paths = t.syn0, t.syn1, t.hot_slot, t.hot_rows, t.paths
    rows, pairs, path = t.rows, t.pairs, t.path
    loss = 0.0
    c = 0
    while c < n_ctx:
        end = distinct_run(ctx, c, n_ctx)
        if codes_of(paths, target) > 1:
            loss += skipgram_in_turn(target, ctx[c:end], end - c, alpha, syn0, syn1, hot_slot,
                                     hot_rows, paths, rows, pairs, path, dim)
        else:
            loss += skipgram_distinct(target, ctx[c:end], end - c, alpha, syn0, syn1, hot_slot,
                                      hot_rows, paths, rows, pairs, path, dim)
        c = end
    return loss, n_ctx


@njit(**KERNEL, inline="always")
def centre_subwords(t, target, ctx, n_ctx, alpha, dim):
    """Skip-gram steps with subwords, as fastText orders them: the centre word's
    vector h (the mean of its own row and its n-grams' rows, ``t.sub_rows``)
    predicts each context word in turn. Each step moves every one of those rows by
    its gradient g, so h moves by g too: h is composed once, moved by each step, and
    the steps' sum added to the rows at the end, which gives fastText's result
    (where each step recomposes h) at one read and one write of the rows a centre
    word. Returns (Σ_c −log P(c | h), n_ctx examples)."""
    syn0, offsets, sub_rows = t.syn0, t.sub_offsets, t.sub_rows
    h, total, g = t.rows[0, 0], t.rows[1, 0], t.rows[1, 1]
    lo, hi = offsets[target], offsets[target + 1]
    sum_rows(syn0, sub_rows, lo, hi, h, dim)
    inv = np.float32(1.0) / np.float32(hi - lo)
    for d in range(dim):
        h[d] *= inv
    total[:] = 0.0
    loss = 0.0
    for k in range(n_ctx):
        g[:] = 0.0
        loss += target_step(h, ctx[k], alpha, t.syn1, t.hot_slot, t.hot_rows, t.paths, g,
                            t.path[0, 0], dim)
        for d in range(dim):
            h[d] += g[d]
            total[d] += g[d]
    add_to_rows(syn0, sub_rows, lo, hi, total, dim)
    return loss, n_ctx


@njit(**KERNEL, inline="always")
def context(config, syn0, extra, ctx, n_ctx, H, dim):
    """The context as skip-gram predicts from it: each context word's vector, a row
    of ``H``. Returns the number of rows, ``n_ctx``."""
    for k in range(n_ctx):
        row = syn0[ctx[k]]
        for d in range(dim):
            H[k, d] = row[d]
    return n_ctx


def config_of(s) -> Config:
    """The :class:`Config` of settings ``s``."""
    return Config(int(s.window), 0)
