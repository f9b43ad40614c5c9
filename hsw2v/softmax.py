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

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .utils import JIT


@njit(**JIT)
def gather_context(words, lo, hi, i, ctx):
    """Copy the context of ``words[i]``, ``words[lo:hi]`` without it, into ``ctx``;
    return its length."""
    n = 0
    for j in range(lo, hi):
        if j != i:
            ctx[n] = words[j]
            n += 1
    return n


@njit(**JIT)
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


@njit(**JIT)
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


@njit(**JIT)
def hs_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """One SGD step of hierarchical softmax for predicting ``target`` from ``h``.

    Updates the inner-node vectors on the target's path, adds the gradient step
    for ``h`` to ``grad_h`` (the caller applies it), and returns -log P(target | h)
    computed before the update. Inner node n is read from and written to
    ``hot_rows[hot_slot[n]]`` when ``hot_slot[n] >= 0`` (a thread's private copy of
    a node near the root, see :func:`hsw2v.sgd.sync_hot_rows`), else ``syn1[n]``.

    The path's nodes are distinct, so all the scores are taken first (independent
    dot products) and the table lookups run as one loop over ``scratch`` (at least
    the path's length), exactly as node-by-node updates would. ``dim`` is the
    vector size, a compile-time constant (see :func:`hsw2v.sgd.train_block`). When
    ``syn1`` has a column more than ``dim`` (``--node-bias``), it holds each node's
    bias α, added to the score and trained with it (∂score/∂α = 1). A target with
    several codes takes :func:`multi_code_step`.
    """
    if paths.leaf_offsets[target + 1] - paths.leaf_offsets[target] > 1:
        return multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h,
                               scratch, dim)
    bias = syn1.shape[1] > dim
    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes
    p0 = offsets[target]
    n = offsets[target + 1] - p0
    for p in range(n):
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        x = np.float32(0.0)
        for d in range(dim):
            x += h[d] * u[d]
        scratch[p] = x + u[dim] if bias else x
    loss = 0.0
    for p in range(n):
        sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p0 + p])  # code 0: σ(x)
        branch_loss, slope = branch_loss_grad(sign * scratch[p])
        loss += branch_loss
        scratch[p] = sign * slope * alpha
    for p in range(n):
        node = nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        g = scratch[p]
        for d in range(dim):
            grad_h[d] += g * u[d]
            u[d] += g * h[d]
        if bias:
            u[dim] += g
    return loss


@njit(**JIT)
def _node_row(node, syn1, hot_slot, hot_rows):
    slot = hot_slot[node]
    return hot_rows[slot] if slot >= 0 else syn1[node]


@njit(**JIT)
def multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """:func:`hs_step` for a target with several codes: P(target | h) = Σ_k p_k, the
    sum of its codes' path products, and the step follows the exact gradient of
    log Σ_k p_k: each code's path gets its own gradient scaled by its posterior
    share r_k = p_k / Σ_j p_j.

    Codes share the nodes above where they part (and the node where they part is on
    two paths, with both branches), so every score is taken first, then every
    gradient step for h, and only then are the nodes moved: the step is the
    gradient at the weights before it. ``scratch`` needs the codes' path lengths
    summed plus the number of codes. Returns −log P(target | h) before the update.
    """
    bias = syn1.shape[1] > dim
    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes
    k0, k1 = paths.leaf_offsets[target], paths.leaf_offsets[target + 1]
    total = 0
    for k in range(k0, k1):
        leaf = paths.leaves[k]
        for p in range(offsets[leaf], offsets[leaf + 1]):
            u = _node_row(nodes[p], syn1, hot_slot, hot_rows)
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
    top = logp.max()
    log_total = top + np.log(np.exp(logp - top).sum())
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
                u = _node_row(nodes[p], syn1, hot_slot, hot_rows)
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


@njit(**JIT)
def log_sigmoid(x):
    """log σ(x), stable for large |x|."""
    if x >= 0:
        return -np.log1p(np.exp(-x))
    return x - np.log1p(np.exp(x))


@njit(**JIT)
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
def _heap_push(keys, items, size, key, item):
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
def _heap_pop(keys, items, size):
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
            logp, node, size = _heap_pop(keys, items, size)
            continue
        inner = node - n_words
        left, right = node_log_probs(H, syn1[inner])
        expanded += 1
        if left >= right:
            best, best_node, other, other_node = logp + left, children[inner, 0], logp + right, children[inner, 1]
        else:
            best, best_node, other, other_node = logp + right, children[inner, 1], logp + left, children[inner, 0]
        size = _heap_push(keys, items, size, other, other_node)
        if keys[0] > best:
            size = _heap_push(keys, items, size, best, best_node)
            logp, node, size = _heap_pop(keys, items, size)
        else:
            logp, node = best, best_node
    return found, expanded


@njit(**JIT)
def _insert_top(out_words, out_logp, found, topn, word, value):
    """Insert ``word`` with ``value`` into the descending top list of ``found``
    entries (at most ``topn`` kept); returns the new count."""
    if found == topn and value <= out_logp[found - 1]:
        return found
    i = min(found, topn - 1)
    while i > 0 and out_logp[i - 1] < value:
        out_words[i] = out_words[i - 1]
        out_logp[i] = out_logp[i - 1]
        i -= 1
    out_words[i] = word
    out_logp[i] = value
    return min(found + 1, topn)


class SearchBuffers(NamedTuple):
    """Scratch for :func:`best_first_codes`, for a tree of L leaves and V words and
    contexts of up to C rows: a heap (``keys``, ``items``) and a row of per-context
    log-probabilities (``values``) and the node id (``node_of``) for each node
    pushed, and a per-word ``seen`` mask, all zeros between searches."""

    keys: np.ndarray  # float64 (2L)
    items: np.ndarray  # int64 (2L)
    values: np.ndarray  # float64 (2L, C)
    node_of: np.ndarray  # int64 (2L)
    seen: np.ndarray  # uint8 (V)

    @classmethod
    def make(cls, n_leaves: int, n_words: int, rows: int) -> SearchBuffers:
        return cls(np.empty(2 * n_leaves), np.empty(2 * n_leaves, np.int64),
                   np.empty((2 * n_leaves, rows)), np.empty(2 * n_leaves, np.int64),
                   np.zeros(n_words, np.uint8))


@njit(**JIT)
def best_first_codes(H, syn1, children, root, paths, max_codes, topn, out_words, out_logp, buffers):
    """Exact top-``topn`` words for context rows ``H`` when words have several codes
    (up to ``max_codes``); a word's score is Σ_c log Σ_k P(code k | h_c).

    Leaves (codes) pop in order of Σ_c log P(code | h_c), as in :func:`best_first`.
    When a word's first code pops, its exact score over all its codes is computed
    and it enters the running top list; its other codes are skipped later.

    The stopping rule: a word none of whose codes has popped has every code below
    an open node (one on the heap). A code's probability under context row c is at
    most its open ancestor's (the factors are ≤ 1), hence at most b_c, the largest
    P(node | h_c) over the open nodes, and the word's P(w | h_c) ≤ min(1,
    max_codes · b_c). So no unseen word scores above U = Σ_c log min(1, max_codes ·
    b_c), and once the topn-th best exact score is ≥ U the list is final. b_c needs
    each open node's per-context log-probabilities, kept in ``buffers.values``; the
    scan of the heap for b_c runs only when the heap top's own bound allows
    stopping (b_c is at least the top's value, so U is at least the top's bound).

    ``buffers``: a :class:`SearchBuffers`. Returns (words found, inner nodes expanded).
    """
    keys, items, values, node_of, seen = buffers
    n_leaves = children.shape[0] + 1
    n_ctx, dim = H.shape
    log_codes = np.log(max_codes)
    values[0, :n_ctx] = 0.0
    node_of[0] = n_leaves + root
    used = 1
    size = _heap_push(keys, items, 0, 0.0, 0)
    found = 0
    expanded = 0
    while size > 0:
        logp, item, size = _heap_pop(keys, items, size)
        node = node_of[item]
        if node >= n_leaves:
            inner = node - n_leaves
            u = syn1[inner]
            expanded += 1
            left = right = 0.0
            for c in range(n_ctx):
                x = u[dim] if u.shape[0] > dim else np.float32(0.0)
                for d in range(dim):
                    x += H[c, d] * u[d]
                ls = log_sigmoid(np.float64(x))
                values[used, c] = values[item, c] + ls
                values[used + 1, c] = values[item, c] + ls - x  # log σ(−x) = log σ(x) − x
                left += ls
                right += ls - x
            for side in range(2):
                node_of[used] = children[inner, side]
                size = _heap_push(keys, items, size, logp + (left if side == 0 else right), used)
                used += 1
            continue
        word = paths.leaf_words[node]
        if seen[word]:
            continue
        seen[word] = 1
        found = _insert_top(out_words, out_logp, found, topn, word,
                            word_log_prob(H, word, syn1, paths))
        if found < topn or size == 0:
            continue
        if (_unseen_bound(values, items[:1], n_ctx, log_codes) <= out_logp[topn - 1]
                and _unseen_bound(values, items[:size], n_ctx, log_codes) <= out_logp[topn - 1]):
            break
    for i in range(used):  # every word marked seen had a leaf pushed
        if node_of[i] < n_leaves:
            seen[paths.leaf_words[node_of[i]]] = 0
    return found, expanded


@njit(**JIT)
def _unseen_bound(values, items, n_ctx, log_codes):
    """Σ_c min(0, log max_codes + max over ``items`` of their log P(node | h_c))."""
    total = 0.0
    for c in range(n_ctx):
        best = -np.inf
        for item in items:
            best = max(best, values[item, c])
        total += min(0.0, log_codes + best)
    return total


@njit(nogil=True, fastmath=True, cache=True, parallel=True)
def best_first_batch(Hs, rows, syn1, children, root, paths, max_codes, topn, out_words, out_logp,
                     expanded):
    """:func:`best_first` (or, with ``max_codes`` > 1, :func:`best_first_codes`) for
    a batch: context ``b`` is ``Hs[b, :rows[b]]``.

    Runs in parallel over the batch, with no Python per context.
    """
    n_leaves = children.shape[0] + 1
    for b in prange(Hs.shape[0]):
        if max_codes > 1:
            buffers = (np.empty(2 * n_leaves), np.empty(2 * n_leaves, np.int64),
                       np.empty((2 * n_leaves, Hs.shape[1])), np.empty(2 * n_leaves, np.int64),
                       np.zeros(len(paths.leaf_offsets) - 1, np.uint8))
            _, expanded[b] = best_first_codes(Hs[b, :rows[b]], syn1, children, root, paths,
                                              max_codes, topn, out_words[b], out_logp[b], buffers)
        else:
            keys = np.empty(n_leaves + 2, dtype=np.float64)
            items = np.empty(n_leaves + 2, dtype=np.int64)
            _, expanded[b] = best_first(Hs[b, :rows[b]], syn1, children, root, topn,
                                        out_words[b], out_logp[b], keys, items)


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


@njit(**JIT)
def code_log_prob(H, leaf, syn1, paths):
    """Σ_c log P(code | h_c) along leaf ``leaf``'s path."""
    total = 0.0
    for p in range(paths.offsets[leaf], paths.offsets[leaf + 1]):
        left, right = node_log_probs(H, syn1[paths.nodes[p]])
        total += left if paths.codes[p] == 0 else right
    return total


@njit(**JIT)
def word_log_prob(H, word, syn1, paths):
    """Σ_c log P(word | h_c), computed along the word's paths only; with several
    codes, P(word | h_c) = Σ_k P(code k | h_c) for each context row."""
    k0, k1 = paths.leaf_offsets[word], paths.leaf_offsets[word + 1]
    if k1 - k0 == 1:
        return code_log_prob(H, word, syn1, paths)
    total = 0.0
    for c in range(H.shape[0]):
        row = H[c:c + 1]
        top = -np.inf
        for k in range(k0, k1):
            top = max(top, code_log_prob(row, paths.leaves[k], syn1, paths))
        acc = 0.0
        for k in range(k0, k1):  # (recomputed: cheaper than a buffer for a handful of codes)
            acc += np.exp(code_log_prob(row, paths.leaves[k], syn1, paths) - top)
        total += top + np.log(acc)
    return total
