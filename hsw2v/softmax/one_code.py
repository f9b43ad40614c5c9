"""The SGD step of hierarchical softmax along the path of a target with one code
(every word of most trees), as fastText's loss.cc takes it: −log σ and its slope
for each node from :mod:`hsw2v.softmax.branch`'s tables, then the updates of the
inner-node vectors and the gradient for h. A kernel takes it through
:func:`hsw2v.softmax.step.target_step`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import KERNEL
from .branch import branch_loss_grad

NODE_BIAS: bool  # a copy's constant (see hsw2v.softmax.step.NODE_BIAS and step_copy)


@njit(**KERNEL, inline="always")
def one_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """One SGD step of hierarchical softmax for predicting ``target`` from ``h``.

    Updates the inner-node vectors on the target's path, adds the gradient step
    for ``h`` to ``grad_h`` (the caller applies it), and returns -log P(target | h)
    computed before the update. Inner node n is read from and written to
    ``hot_rows[hot_slot[n]]`` when ``hot_slot[n] >= 0`` (a thread's private copy of
    a node near the root, see :func:`hsw2v.training.block.sync_hot_rows`), else ``syn1[n]``.

    The path's nodes are distinct, so all the scores are taken first (independent
    dot products) and the table lookups run as one loop over ``scratch`` (at least
    the path's length), exactly as node-by-node updates would. Nodes go four at a
    time: one load of h[d] serves four dot products, and grad_h takes the four
    steps in one store (measured on the kernels' benchmarks page). ``dim`` is the
    vector size, a compile-time constant (see :func:`hsw2v.training.block.train_block`).
    With :data:`~hsw2v.softmax.step.NODE_BIAS` (a copy's constant, see
    :func:`~hsw2v.softmax.step.step_copy`), ``syn1``'s column after ``dim`` holds
    each node's bias α, added to the score and trained with it (∂score/∂α = 1).
    For a target with one code only (see :func:`hsw2v.softmax.step.target_step`).
    """
    bias = NODE_BIAS
    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes
    p0 = offsets[target]
    n = offsets[target + 1] - p0
    p = 0
    while p + 4 <= n:  # four nodes a pass: each load of h serves four dot products
        n0, n1, n2, n3 = nodes[p0 + p], nodes[p0 + p + 1], nodes[p0 + p + 2], nodes[p0 + p + 3]
        s0, s1, s2, s3 = hot_slot[n0], hot_slot[n1], hot_slot[n2], hot_slot[n3]
        u0 = hot_rows[s0] if s0 >= 0 else syn1[n0]
        u1 = hot_rows[s1] if s1 >= 0 else syn1[n1]
        u2 = hot_rows[s2] if s2 >= 0 else syn1[n2]
        u3 = hot_rows[s3] if s3 >= 0 else syn1[n3]
        x0 = x1 = x2 = x3 = np.float32(0.0)
        for d in range(dim):
            hd = h[d]
            x0 += hd * u0[d]
            x1 += hd * u1[d]
            x2 += hd * u2[d]
            x3 += hd * u3[d]
        if bias:
            x0, x1, x2, x3 = x0 + u0[dim], x1 + u1[dim], x2 + u2[dim], x3 + u3[dim]
        scratch[p], scratch[p + 1], scratch[p + 2], scratch[p + 3] = x0, x1, x2, x3
        p += 4
    while p < n:
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        x = np.float32(0.0)
        for d in range(dim):
            x += h[d] * u[d]
        scratch[p] = x + u[dim] if bias else x
        p += 1
    loss = 0.0
    for p in range(n):
        sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p0 + p])  # code 0: σ(x)
        branch_loss, slope = branch_loss_grad(sign * scratch[p])
        loss += branch_loss
        scratch[p] = sign * slope * alpha
    p = 0
    # The rows are picked again, written out: one pass of scores, lookups and updates
    # ran slower (all the scores first let the rows load together), and so did an
    # inlined helper returning the four rows (the kernels' benchmarks page).
    while p + 4 <= n:  # grad_h takes the four nodes' steps in one store
        n0, n1, n2, n3 = nodes[p0 + p], nodes[p0 + p + 1], nodes[p0 + p + 2], nodes[p0 + p + 3]
        s0, s1, s2, s3 = hot_slot[n0], hot_slot[n1], hot_slot[n2], hot_slot[n3]
        u0 = hot_rows[s0] if s0 >= 0 else syn1[n0]
        u1 = hot_rows[s1] if s1 >= 0 else syn1[n1]
        u2 = hot_rows[s2] if s2 >= 0 else syn1[n2]
        u3 = hot_rows[s3] if s3 >= 0 else syn1[n3]
        g0, g1, g2, g3 = scratch[p], scratch[p + 1], scratch[p + 2], scratch[p + 3]
        for d in range(dim):
            hd = h[d]
            a0, a1, a2, a3 = u0[d], u1[d], u2[d], u3[d]
            grad_h[d] += g0 * a0 + g1 * a1 + g2 * a2 + g3 * a3
            u0[d] = a0 + g0 * hd
            u1[d] = a1 + g1 * hd
            u2[d] = a2 + g2 * hd
            u3[d] = a3 + g3 * hd
        if bias:
            u0[dim] += g0
            u1[dim] += g1
            u2[dim] += g2
            u3[dim] += g3
        p += 4
    while p < n:
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        g = scratch[p]
        for d in range(dim):
            grad_h[d] += g * u[d]
            u[d] += g * h[d]
        if bias:
            u[dim] += g
        p += 1
    return loss
