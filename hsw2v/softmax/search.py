"""Exact prediction by best-first search over the tree, and the log-probabilities
of words along their paths (fastText's loss.cc keeps them beside training).

P(w | h) is the product of the branch probabilities σ(±h·u_n) along w's path
(code 0 at inner node n: σ(h·u_n); code 1: σ(−h·u_n)). Every factor is ≤ 1, so a
path's log-probability only falls as the path grows: expanding the most probable
open node first (A* with a zero heuristic) pops leaves in exact order of
probability, and the search stops after ``topn`` leaves (:func:`best_first`). A
word with several codes (ADAPTIVE(ε) trees) has P(w | h) summed over its codes'
paths, and the search stops by a bound on the words not yet seen
(:func:`best_first_codes`).

The context is a matrix ``H`` of C rows. For CBOW it is one row, the mean (or sum)
of the context vectors (:func:`hsw2v.training.cbow.context_mean`), as in training.
For skip-gram each context word is a row and a word's score is Σ_c log P(w | c):
every term still only falls along the path, so the search stays exact; the score
is the log of a product of per-context probabilities, not a normalised distribution.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit.helpers import JIT, KERNEL


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


@njit(**KERNEL)
def code_log_prob(H, leaf, syn1, paths):
    """Σ_c log P(code | h_c) along leaf ``leaf``'s path."""
    total = 0.0
    for p in range(paths.offsets[leaf], paths.offsets[leaf + 1]):
        left, right = node_log_probs(H, syn1[paths.nodes[p]])
        total += left if paths.codes[p] == 0 else right
    return total


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
