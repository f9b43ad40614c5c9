"""Words with several codes (Mnih & Hinton's ADAPTIVE(ε) trees; see
:mod:`hsw2v.trees.tree`): P(w | h) is the sum over w's codes of each path's product.
The training step along all of a word's codes and the exact top-N search over
words sit side by side, over the one-code kernels of :mod:`hsw2v.softmax.one_code`.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ..jit.helpers import JIT, KERNEL
from .flat import FlatCodes, FlatPaths
from .one_code import (
    best_first,
    branch_loss_grad,
    code_log_prob,
    heap_pop,
    heap_push,
    log_sigmoid,
    step_copy,
    one_code_step,
)


def _has_codes(paths) -> bool:
    """Whether numba type ``paths`` is a :class:`FlatCodes` (else a :class:`FlatPaths`)."""
    return isinstance(paths, types.BaseNamedTuple) and paths.instance_class is FlatCodes


def codes_of(paths: FlatPaths | FlatCodes, word: int) -> int:
    """How many codes ``word`` has; always 1 in a :class:`FlatPaths`, and in numba
    code a constant then."""
    if isinstance(paths, FlatCodes):
        return int(paths.leaf_offsets[word + 1] - paths.leaf_offsets[word])
    return 1


@overload(codes_of, jit_options=KERNEL)
def _codes_of(paths, word):
    if _has_codes(paths):
        return lambda paths, word: paths.leaf_offsets[word + 1] - paths.leaf_offsets[word]
    return lambda paths, word: 1


@njit(**KERNEL, inline="always")
def any_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """The SGD step for predicting ``target`` from ``h`` when ``paths`` is a
    :class:`FlatCodes`: :func:`one_code_step` for a word with one code,
    :func:`multi_code_step` for a word with several (same arguments; both read
    :data:`~hsw2v.softmax.one_code.NODE_BIAS`, see :func:`step_for`)."""
    if codes_of(paths, target) > 1:
        return multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h,
                               scratch, dim)
    return one_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch,
                         dim)


NODE_BIAS: bool  # a copy's constant, as in hsw2v.softmax.one_code (see step_for)

_steps: dict[tuple[bool, bool, bool], Any] = {}


def step_for(codes: bool, bias: bool, edge: bool = False) -> Any:
    """The SGD step (an ``inline="always"`` numba function) for paths with several
    codes a word (:func:`any_code_step`) or one (:func:`one_code_step`), for node
    vectors with a bias column or without, and with word2vec.c's edge or without
    (see :func:`step_copy`). Made once."""
    if (codes, bias, edge) not in _steps:
        _steps[codes, bias, edge] = step_copy(any_code_step if codes else one_code_step,
                                                   bias, edge)
    return _steps[codes, bias, edge]


def target_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """The SGD step for predicting ``target`` from ``h``: :func:`step_for` ``paths``
    and ``syn1``'s columns.

    In numba code, a stand-in: a kernel gets its own copy of the steps that call it,
    with the step it needs in its place (:func:`hsw2v.jit.helpers.specialised`), so
    that it compiles only that step."""
    step = step_for(isinstance(paths, FlatCodes), syn1.shape[1] > dim)
    return step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim)


@njit(**KERNEL, inline="always")
def multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """:func:`~hsw2v.softmax.one_code.one_code_step` for a target with several codes: P(target | h) = Σ_k p_k, the
    sum of its codes' path products, and the step follows the exact gradient of
    log Σ_k p_k: each code's path gets its own gradient scaled by its posterior
    share r_k = p_k / Σ_j p_j.

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


@njit(**KERNEL)
def word_log_prob(H, word, syn1, paths):
    """Σ_c log P(word | h_c), computed along the word's paths only; with several
    codes, P(word | h_c) = Σ_k P(code k | h_c) for each context row."""
    k0, k1 = paths.leaf_offsets[word], paths.leaf_offsets[word + 1]
    if k1 - k0 == 1:
        return code_log_prob(H, word, syn1, paths)
    total = 0.0
    for c in range(H.shape[0]):
        row = H[c:c + 1]
        top = code_log_prob(row, paths.leaves[k0], syn1, paths)  # (no ±inf under fastmath)
        acc = 1.0  # Σ_k exp(log P(code k) − top), the largest so far as ``top``: one pass
        for k in range(k0 + 1, k1):
            lp = code_log_prob(row, paths.leaves[k], syn1, paths)
            if lp > top:
                acc = acc * np.exp(top - lp) + 1.0
                top = lp
            else:
                acc += np.exp(lp - top)
        total += top + np.log(acc)
    return total


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


@njit(**JIT)
def search_buffers(n_leaves, n_words, rows):
    """Scratch for :func:`best_first_codes` over a tree of ``n_leaves`` leaves and
    ``n_words`` words, for contexts of up to ``rows`` rows: a heap (keys, items),
    a row of per-context log-probabilities and the node id for each node pushed
    (at most 2L of each), and a per-word ``seen`` mask of zeros (left as zeros)."""
    return (np.empty(2 * n_leaves), np.empty(2 * n_leaves, np.int64),
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
    stopping (b_c is at least the top's value, so U is at least the top's bound),
    and after a scan that fails, only once size/8 more words have popped (U only
    falls as nodes open, so a later stop is still exact; the scans stay O(C) a word).

    ``buffers``: from :func:`search_buffers`. Returns (words found, inner nodes expanded).
    """
    keys, items, values, node_of, seen = buffers
    n_leaves = children.shape[0] + 1
    n_ctx, dim = H.shape
    log_codes = np.log(max_codes)
    values[0, :n_ctx] = 0.0
    node_of[0] = n_leaves + root
    used = 1
    size = heap_push(keys, items, 0, 0.0, 0)
    found = 0
    expanded = 0
    wait = 0
    while size > 0:
        logp, item, size = heap_pop(keys, items, size)
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
                size = heap_push(keys, items, size, logp + (left if side == 0 else right), used)
                used += 1
            continue
        word = paths.leaf_words[node]
        if seen[word]:
            continue
        seen[word] = 1
        found = _insert_top(out_words, out_logp, found, topn, word,
                            word_log_prob(H, word, syn1, paths))
        wait -= 1
        if found < topn or size == 0 or wait > 0:
            continue
        if _unseen_bound(values, items[:1], n_ctx, log_codes) > out_logp[topn - 1]:
            continue
        if _unseen_bound(values, items[:size], n_ctx, log_codes) <= out_logp[topn - 1]:
            break
        wait = size // 8  # the next full scan after this many new words: O(C) a word amortised
    for i in range(used):  # every word marked seen had a leaf pushed
        if node_of[i] < n_leaves:
            seen[paths.leaf_words[node_of[i]]] = 0
    return found, expanded


@njit(**JIT)
def _unseen_bound(values, items, n_ctx, log_codes):
    """Σ_c min(0, log max_codes + max over ``items`` of their log P(node | h_c))."""
    total = 0.0
    for c in range(n_ctx):
        best = values[items[0], c]  # (items is never empty; no ±inf under fastmath)
        for item in items[1:]:
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
            buffers = search_buffers(n_leaves, len(paths.leaf_offsets) - 1, Hs.shape[1])
            _, expanded[b] = best_first_codes(Hs[b, :rows[b]], syn1, children, root, paths,
                                              max_codes, topn, out_words[b], out_logp[b], buffers)
        else:
            keys = np.empty(n_leaves + 2, dtype=np.float64)
            items = np.empty(n_leaves + 2, dtype=np.int64)
            _, expanded[b] = best_first(Hs[b, :rows[b]], syn1, children, root, topn,
                                        out_words[b], out_logp[b], keys, items)
