"""The SGD step for a target with several codes (Mnih & Hinton's ADAPTIVE(ε)
trees; see :mod:`hsw2v.trees.tree`): P(w | h) is the sum over w's codes of each
path's product, and the step follows the gradient of its log. −log σ and its slope
come from :mod:`hsw2v.softmax.branch`'s tables, as for one code
(:mod:`hsw2v.softmax.one_code`); a kernel takes it through
:func:`hsw2v.softmax.step.target_step`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import KERNEL
from .branch import branch_loss_grad

NODE_BIAS: bool  # a copy's constant (see hsw2v.softmax.step.NODE_BIAS and step_copy)


@njit(**KERNEL, inline="always")
def multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """:func:`~hsw2v.softmax.one_code.one_code_step` for a target with several
    codes: P(target | h) = Σ_k p_k, the sum of its codes' path products, and the
    step follows the exact gradient of log Σ_k p_k: each code's path gets its own
    gradient scaled by its posterior share r_k = p_k / Σ_j p_j.

    Codes share the nodes above where they part (and the node where they part is on
    two paths, with both branches), so every score is taken first, then every
    gradient step for h, and only then are the nodes moved: the step is the
    gradient at the weights before it. ``scratch`` needs the codes' path lengths
    summed plus the number of codes. Returns −log P(target | h) before the update.
    """
    bias = NODE_BIAS
    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes
    k0, k1 = paths.leaf_offsets[target], paths.leaf_offsets[target + 1]
    total = 0
    for k in range(k0, k1):
        leaf = paths.leaves[k]
        for p in range(offsets[leaf], offsets[leaf + 1]):
            node = nodes[p]  # (a kernel without reference counts returns no views)
            u = hot_rows[hot_slot[node]] if hot_slot[node] >= 0 else syn1[node]
            x = np.float32(0.0)
            for d in range(dim):
                x += h[d] * u[d]
            scratch[total] = x + u[dim] if bias else x
            total += 1
    logp = scratch[total:total + k1 - k0]  # each code's log p_k
    q = 0
    for k in range(k0, k1):
        leaf = paths.leaves[k]
        lp = 0.0
        for p in range(offsets[leaf], offsets[leaf + 1]):
            sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p])
            branch_loss, _ = branch_loss_grad(sign * scratch[q])
            lp -= branch_loss
            q += 1
        logp[k - k0] = lp
    top = logp[0]
    for k in range(1, k1 - k0):  # (a kernel without reference counts allocates nothing)
        top = max(top, logp[k])
    spread = 0.0
    for k in range(k1 - k0):
        spread += np.exp(logp[k] - top)
    log_total = top + np.log(spread)
    q = 0
    for k in range(k0, k1):
        leaf = paths.leaves[k]
        share = np.float32(np.exp(logp[k - k0] - log_total))
        for p in range(offsets[leaf], offsets[leaf + 1]):
            sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p])
            _, slope = branch_loss_grad(sign * scratch[q])
            scratch[q] = share * sign * slope * alpha
            q += 1
    for step in range(2):  # first every step for h, then the nodes' steps
        q = 0
        for k in range(k0, k1):
            leaf = paths.leaves[k]
            for p in range(offsets[leaf], offsets[leaf + 1]):
                node = nodes[p]
                u = hot_rows[hot_slot[node]] if hot_slot[node] >= 0 else syn1[node]
                g = scratch[q]
                q += 1
                if step == 0:
                    for d in range(dim):
                        grad_h[d] += g * u[d]
                else:
                    for d in range(dim):
                        u[d] += g * h[d]
                    if bias:
                        u[dim] += g
    return -log_total
