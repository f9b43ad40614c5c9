"""Prediction with the tree: exact top-N by best-first search, path log-probabilities,
brute force over all leaves (for checking), and held-out scoring.

Every branch factor σ(±h·u) is ≤ 1, so a path's log-probability only falls as the
path grows. Expanding the most probable open node first (A* with a zero
heuristic) therefore pops leaves in exact order of probability, and the search
stops after ``topn`` leaves.

The context is a matrix ``H`` of C rows. For CBOW it is one row, the mean (or sum)
of the context vectors, as in training. For skip-gram each context word is a row
and a word's score is Σ_c log P(w | c): every term still only falls along the
path (each node adds Σ_c log σ(±h_c·u)), so the search stays exact; the score is
the log of a product of per-context probabilities, not a normalised distribution.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .corpus import WordTable, iter_blocks
from .kernels import JIT


@njit(**JIT)
def log_sigmoid(x):
    """log σ(x), stable for large |x|."""
    if x >= 0:
        return -np.log1p(np.exp(-x))
    return x - np.log1p(np.exp(x))


@njit(**JIT)
def node_log_probs(H, u):
    """(Σ_c log σ(h_c·u), Σ_c log σ(-h_c·u)): the two branches' log-probabilities."""
    left = 0.0
    right = 0.0
    for c in range(H.shape[0]):
        x = np.float32(0.0)
        for d in range(H.shape[1]):
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


@njit(nogil=True, fastmath=True, cache=True, parallel=True)
def best_first_batch(Hs, rows, syn1, children, root, topn, out_words, out_logp, expanded):
    """:func:`best_first` for a batch: context ``b`` is ``Hs[b, :rows[b]]``.

    Runs in parallel over the batch, with no Python per context.
    """
    n_words = children.shape[0] + 1
    for b in prange(Hs.shape[0]):
        keys = np.empty(n_words + 2, dtype=np.float64)
        items = np.empty(n_words + 2, dtype=np.int64)
        _, expanded[b] = best_first(Hs[b, :rows[b]], syn1, children, root, topn, out_words[b],
                                    out_logp[b], keys, items)


@njit(**JIT)
def all_log_probs(H, syn1, children, order, out):
    """Score of every word by visiting every inner node top-down (the brute force).

    ``order`` lists the inner nodes parents first; ``out`` has length V.
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
def path_log_prob(H, word, syn1, path_offsets, path_nodes, path_codes):
    """Σ_c log P(word | h_c), computed along the word's path only."""
    total = 0.0
    for p in range(path_offsets[word], path_offsets[word + 1]):
        left, right = node_log_probs(H, syn1[path_nodes[p]])
        total += left if path_codes[p] == 0 else right
    return total


@njit(**JIT)
def score_block(ids, sent_ends, n_sents, syn0, syn1, path_offsets, path_nodes, path_codes,
                window, skipgram, cbow_mean, h):
    """Held-out −log P over one block: the full window, no shrink, no subsampling.

    Examples are as in training (skip-gram: each centre/context pair; CBOW: each
    word with a context). Returns (sum of −log P, number of examples).
    """
    dim = syn0.shape[1]
    loss = 0.0
    n = 0
    start = 0
    for s in range(n_sents):
        end = sent_ends[s]
        for i in range(start, end):
            lo = max(start, i - window)
            hi = min(end, i + window + 1)
            if hi - lo < 2:
                continue
            if skipgram:
                for j in range(lo, hi):
                    if j != i:
                        loss -= path_log_prob(syn0[ids[j]:ids[j] + 1], ids[i], syn1,
                                              path_offsets, path_nodes, path_codes)
                        n += 1
            else:
                h[0, :] = 0.0
                for j in range(lo, hi):
                    if j != i:
                        for d in range(dim):
                            h[0, d] += syn0[ids[j], d]
                if cbow_mean:
                    for d in range(dim):
                        h[0, d] /= hi - lo - 1
                loss -= path_log_prob(h, ids[i], syn1, path_offsets, path_nodes, path_codes)
                n += 1
        start = end
    return loss, n


def score(model, corpus: str, window: int | None = None) -> dict:
    """Mean −log P(target | context) and perplexity of ``model`` on held-out ``corpus``.

    Uses the model's window at full width (no random shrink) and no subsampling,
    so that models are comparable on the same file. Words outside the vocabulary
    are dropped, as in training.
    """
    from .errors import HSW2VError

    window = window or int(model.settings.get("window", 5))
    skipgram = model.arch == "skipgram"
    cbow_mean = bool(model.settings.get("cbow_mean", True))
    table = WordTable(model.vocab.words)
    t = model.tree
    h = np.empty((1, model.dim), dtype=np.float32)
    loss, examples, words = 0.0, 0, 0
    for block in iter_blocks(corpus):
        ids, ends = table.encode(block)
        words += len(ids)
        block_loss, n = score_block(ids, ends, len(ends), model.vectors, model.node_vectors,
                                    t.path_offsets, t.path_nodes, t.path_codes, window,
                                    skipgram, cbow_mean, h)
        loss += block_loss
        examples += n
    if examples == 0:
        raise HSW2VError(f"{corpus}: no word of the vocabulary has a context to score")
    mean = loss / examples
    return {"loss": mean, "perplexity": math.exp(mean), "examples": examples, "words": words,
            "window": window, "arch": model.arch}
