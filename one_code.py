"""Hierarchical softmax: training along a word's path, and exact prediction by
best-first search over the tree, side by side (fastText's loss.cc).

P(w | h) is the product of the branch probabilities σ(±h·u_n) along w's path
(code 0 at inner node n: σ(h·u_n); code 1: σ(−h·u_n)). Every factor is ≤ 1, so a
path's log-probability only falls as the path grows: expanding the most probable
open node first (A* with a zero heuristic) pops leaves in exact order of
probability, and the search stops after ``topn`` leaves.

The context is a matrix ``H`` of C rows. For CBOW it is one row, the mean (or sum)
of the context vectors (:func:`context_mean`), as in training. For skip-gram each
context word is a row and a word's score is Σ_c log P(w | c): every term still
only falls along the path, so the search stays exact; the score is the log of a
product of per-context probabilities, not a normalised distribution.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import JIT, KERNEL, specialised


@njit(**KERNEL, inline="always")
def gather_context(words, lo, hi, i, ctx):
    """Copy the context of ``words[i]``, ``words[lo:hi]`` without it, into ``ctx``;
    return its length."""
    n = 0
    for j in range(lo, hi):
        if j != i:
            ctx[n] = words[j]
            n += 1
    return n


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


NODE_BIAS: bool
"""Whether the node vectors hold a bias column (``--node-bias``): a compile-time
constant of each copy of the steps that read it (:func:`step_copy`), so that
numba drops the other case before typing it (a tenth of a first run's compile).
Not defined here: a step compiled without a copy's constant fails to compile."""


def step_copy(fn, bias: bool, edge: bool = False):
    """A copy of the ``inline="always"`` numba function ``fn`` for node vectors with
    a bias column or without (``bias``; see :data:`NODE_BIAS`), and of the inlined
    functions it calls that read it; with ``edge``, they read :data:`EDGE_SIGMOID` as
    :data:`SIGMOID` (word2vec.c's edge). Its name says which (numba caches it apart)."""
    copy = specialised(fn, NODE_BIAS=bias, **({"SIGMOID": EDGE_SIGMOID} if edge else {}))
    copy.py_func.__qualname__ += "_with_node_bias" if bias else "_without_node_bias"
    copy.py_func.__qualname__ += "_edge" if edge else ""
    return copy


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
    With :data:`NODE_BIAS` (a copy's constant, see :func:`step_copy`), ``syn1``'s
    column after ``dim`` holds each node's bias α, added to the score and trained
    with it (∂score/∂α = 1). For a target with one code only (see
    :func:`hsw2v.softmax.several_codes.target_step`).
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


_step_with_bias = step_copy(one_code_step, True)
_step_without_bias = step_copy(one_code_step, False)


@njit(**KERNEL, inline="always")
def hs_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """:func:`one_code_step` for node vectors with a bias column or without, as
    ``syn1`` has them (decided as it runs; a kernel takes the copy it needs)."""
    if syn1.shape[1] > dim:
        return _step_with_bias(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h,
                               scratch, dim)
    return _step_without_bias(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h,
                              scratch, dim)


@njit(**KERNEL)
def log_sigmoid(x):
    """log σ(x), stable for large |x|."""
    if x >= 0:
        return -np.log1p(np.exp(-x))
    return x - np.log1p(np.exp(x))


@njit(**KERNEL)
def node_log_probs(H, u):
    """(Σ_c log σ(α + h_c·u), Σ_c log σ(−α − h_c·u)): the two branches'
    log-probabilities; α is u's entry after the vector if it has one (a node bias), else 0."""
    left = 0.0
    right = 0.0
    dim = H.shape[1]
    for c in range(H.shape[0]):
        x = u[dim] if u.shape[0] > dim else np.float32(0.0)
        for d in range(dim):
            x += H[c, d] * u[d]
        ls = log_sigmoid(np.float64(x))
        left += ls
        right += ls - x  # log σ(−x) = log σ(x) − x
    return left, right


@njit(**JIT)
def heap_push(keys, items, size, key, item):
    """Push onto a max-heap stored in ``keys``/``items``; returns the new size."""
    i = size
    keys[i] = key
    items[i] = item
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] >= keys[i]:
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        items[parent], items[i] = items[i], items[parent]
        i = parent
    return size + 1


@njit(**JIT)
def heap_pop(keys, items, size):
    """Pop the largest key; returns (key, item, new size)."""
    key, item = keys[0], items[0]
    size -= 1
    keys[0], items[0] = keys[size], items[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        best = left
        if left + 1 < size and keys[left + 1] > keys[left]:
            best = left + 1
        if keys[i] >= keys[best]:
            break
        keys[i], keys[best] = keys[best], keys[i]
        items[i], items[best] = items[best], items[i]
        i = best
    return key, item, size


@njit(**JIT)
def best_first(H, syn1, children, root, topn, out_words, out_logp, keys, items):
    """Exact top-``topn`` words for context rows ``H`` by best-first search.

    The open node with the highest log-probability is always expanded next; its
    likelier child is followed directly when it beats the best node on the heap,
    which saves a push and a pop. ``keys``/``items`` are heap scratch of length
    ≥ V + 1. Fills ``out_*`` and returns (words found, inner nodes expanded).
    """
    n_words = children.shape[0] + 1
    size = 0
    found = 0
    expanded = 0
    node = n_words + root
    logp = 0.0
    while True:
        if node < n_words:
            out_words[found] = node
            out_logp[found] = logp
            found += 1
            if found == topn or size == 0:
                break
            logp, node, size = heap_pop(keys, items, size)
            continue
        inner = node - n_words
        left, right = node_log_probs(H, syn1[inner])
        expanded += 1
        if left >= right:
            best, best_node, other, other_node = logp + left, children[inner, 0], logp + right, children[inner, 1]
        else:
            best, best_node, other, other_node = logp + right, children[inner, 1], logp + left, children[inner, 0]
        size = heap_push(keys, items, size, other, other_node)
        if keys[0] > best:
            size = heap_push(keys, items, size, best, best_node)
            logp, node, size = heap_pop(keys, items, size)
        else:
            logp, node = best, best_node
    return found, expanded


@njit(**JIT)
def all_log_probs(H, syn1, children, order, out):
    """Score of every leaf (the word, when each word has one code) by visiting every
    inner node top-down (the brute force).

    ``order`` lists the inner nodes parents first; ``out`` has length L.
    """
    n_words = children.shape[0] + 1
    node_logp = np.zeros(n_words - 1)
    for k in range(len(order)):
        inner = order[k]
        left, right = node_log_probs(H, syn1[inner])
        for side in range(2):
            child = children[inner, side]
            value = node_logp[inner] + (left if side == 0 else right)
            if child < n_words:
                out[child] = value
            else:
                node_logp[child - n_words] = value


@njit(**JIT)
def subtree_totals(children, order, leaf_values, out):
    """``out[a]``: the sum of ``leaf_values`` over the words below inner node ``a``
    (with word counts: the tokens whose path visits ``a``), children before parents
    along ``order`` reversed; O(V) time and no memory beyond ``out``."""
    n_words = children.shape[0] + 1
    for k in range(len(order) - 1, -1, -1):
        inner = order[k]
        total = 0.0
        for side in range(2):
            child = children[inner, side]
            total += leaf_values[child] if child < n_words else out[child - n_words]
        out[inner] = total


@njit(**KERNEL)
def code_log_prob(H, leaf, syn1, paths):
    """Σ_c log P(code | h_c) along leaf ``leaf``'s path."""
    total = 0.0
    for p in range(paths.offsets[leaf], paths.offsets[leaf + 1]):
        left, right = node_log_probs(H, syn1[paths.nodes[p]])
        total += left if paths.codes[p] == 0 else right
    return total
