"""The training kernels: one sentence loop for both architectures, which differ only
in the centre step they call (CBOW: :func:`cbow_centre`; skip-gram:
:func:`skipgram_centre`), as in fastText's ``cbow()`` and ``skipgram()``.

A block of word ids is trained with word2vec.c's semantics: frequent-word
subsampling, a randomly shrunk window per position, and a learning rate falling
linearly across the block. Threads share :class:`Weights` without locks (Hogwild);
each owns a :class:`State`: its generator and scratch buffers, and private copies
of the inner nodes near the root, merged into the shared ones every few thousand
words.

The kernels run without numba's reference counts (:data:`hsw2v.jit.helpers.KERNEL`).
The small steps of a word are inlined into :func:`train_block` by numba
(``inline="always"``): called, each took every array as a struct of seven words
(CBOW 1.2× the words/s with one thread inlined, ``scripts/bench_blocks.py``).
The skip-gram steps are not: inlined as well, they made CBOW 8% slower.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import literally, njit

from hsw2v.hs.codes import codes_of, target_step
from hsw2v.hs.softmax import branch_loss_grad, context_mean, gather_context
from hsw2v.jit.helpers import KERNEL, lcg_next, lcg_uniform, prefetch_row


class Weights(NamedTuple):
    """What every thread trains: the input (word) vectors ``syn0`` and inner-node
    vectors ``syn1``; ``hot_nodes`` lists the inner nodes each thread trains in
    private rows, and ``hot_slot[n]`` is node n's row among them (-1 if none)."""

    syn0: np.ndarray  # float32 (V, D)
    syn1: np.ndarray  # float32 (V-1, D)
    hot_nodes: np.ndarray  # int32 (K)
    hot_slot: np.ndarray  # int32 (V-1)


class Config(NamedTuple):
    """The settings a kernel reads."""

    window: int
    cbow_mean: bool
    skipgram: bool
    sync_every: int  # merge the private hot rows every this many words


class State(NamedTuple):
    """One thread's generator and buffers (fastText's ``Model::State``). The kernels
    unpack it once per block: arrays taken from a tuple in per-word code cost more
    than the arithmetic (measured: CBOW ran 30% slower)."""

    rng: np.ndarray  # uint64 (1): word2vec.c's generator state
    sentence: np.ndarray  # int32: the current sentence's words after subsampling
    positions: np.ndarray  # int64: their indices in the block (for the learning rate)
    ctx: np.ndarray  # int32 (2·window): the current context words
    rows: np.ndarray  # float32 (2, 2·window, D): context vectors and their gradient steps
    pairs: np.ndarray  # float32 (2, 2·window, 2·window): skip-gram's Gram and cross products
    path: np.ndarray  # float32 (2, 2·window, P): scores and branch gradients (P: the
    # most nodes a step visits, all codes of a word, plus its codes)
    hot_rows: np.ndarray  # float32 (K, D): private copies of the hot inner nodes …
    hot_base: np.ndarray  # … and their values at the last merge


def new_state(seed: int, block_words: int, window: int, longest_path: int,
              hot_rows: np.ndarray) -> State:
    """A thread's state: generator ``seed``, room for ``block_words`` words a block,
    and its own copy of ``hot_rows``."""
    dim = hot_rows.shape[1]
    width = 2 * window
    return State(
        np.array([seed], dtype=np.uint64), np.empty(block_words, np.int32),
        np.empty(block_words, np.int64), np.empty(width, np.int32),
        np.empty((2, width, dim), np.float32), np.empty((2, width, width), np.float32),
        np.empty((2, width, longest_path), np.float32), hot_rows.copy(), hot_rows.copy())


@njit(**KERNEL, inline="always")
def subsample(ids, start, end, keep_prob, r, sen, sen_pos):
    """Copy the words of ``ids[start:end]`` that survive subsampling into ``sen``.

    ``sen_pos`` gets each kept word's index in ``ids``. Returns (kept, rng state).
    """
    m = 0
    for k in range(start, end):
        w = ids[k]
        pk = keep_prob[w]
        if pk < 1.0:
            r = lcg_next(r)
            if lcg_uniform(r) >= pk:
                continue
        sen[m] = w
        sen_pos[m] = k
        m += 1
    return m, r


@njit(**KERNEL, inline="always")
def shrunk_window(i, m, window, r):
    """word2vec.c's context span [lo, hi) around word ``i`` of an ``m``-word sentence:
    the window shrunk by a random b in [0, window). Returns (lo, hi, rng state)."""
    r = lcg_next(r)
    b = np.int64(r >> np.uint64(16)) % window
    return max(0, i - window + b), min(m, i + window - b + 1), r


@njit(**KERNEL)
def sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base):
    """Add this thread's changes to its private copies of the hot inner nodes to the
    shared vectors, then refresh the copies from them.

    The nodes near the root lie on almost every path; when threads share them, every
    update moves their cache lines between cores. Private copies, merged every few
    thousand words, keep CBOW scaling with threads (local SGD for those rows).
    """
    dim = syn1.shape[1]
    for k in range(len(hot_nodes)):
        row = syn1[hot_nodes[k]]
        for d in range(dim):
            row[d] += hot_rows[k, d] - hot_base[k, d]
            hot_rows[k, d] = row[d]
            hot_base[k, d] = row[d]


@njit(**KERNEL, inline="always")
def tick_sync(since_sync, sync_every, syn1, hot_nodes, hot_rows, hot_base):
    """Count one word; on every ``sync_every``-th, merge the private hot rows
    (:func:`sync_hot_rows`). Returns the new count."""
    since_sync += 1
    if since_sync == sync_every:
        sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
        return 0
    return since_sync


@njit(**KERNEL, inline="always")
def prefetch_next(sen, i, m, window, syn0, syn1, hot_slot, paths):
    """Start loading what the example after ``sen[i]`` needs and the cache may not
    hold: the inner nodes on its path outside the thread's private rows, and the
    input vector of the word that enters the window. Only a hint to the CPU: while
    the current example computes, those rows come from memory."""
    if i + 1 < m:
        offsets, nodes = paths.offsets, paths.nodes
        nxt = sen[i + 1]
        for p in range(offsets[nxt], offsets[nxt + 1]):
            if hot_slot[nodes[p]] < 0:
                prefetch_row(syn1, nodes[p])
        if i + 1 + window < m:
            prefetch_row(syn0, sen[i + 1 + window])


@njit(**KERNEL, inline="always")
def distinct_run(ctx, start, n):
    """The end of the longest run ``ctx[start:end]`` of distinct words (end ≤ n)."""
    for end in range(start + 1, n):
        for k in range(start, end):
            if ctx[k] == ctx[end]:
                return end
    return n


@njit(**KERNEL, inline="always")
def cbow_centre(target, ctx, n_ctx, alpha, cbow_mean, syn0, syn1, hot_slot, hot_rows, paths,
                rows, path, dim):
    """CBOW step: the mean (or sum) h of the context vectors ``ctx[:n_ctx]`` predicts
    ``target``; as in word2vec.c, the whole gradient step for h is added to every
    context vector. ``rows``, ``path``: a :class:`State`'s scratch. Returns −log P(target | h)."""
    h, grad_h = rows[0, 0], rows[1, 0]
    context_mean(syn0, ctx, n_ctx, cbow_mean, h, dim)
    grad_h[:] = 0.0
    loss = target_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, path[0, 0], dim)
    for k in range(n_ctx):
        c = syn0[ctx[k]]
        for d in range(dim):
            c[d] += grad_h[d]
    return loss


@njit(**KERNEL)
def skipgram_in_turn(target, ctx, n_ctx, alpha, syn0, syn1, hot_slot, hot_rows, paths, rows,
                     pairs, path, dim):
    """:func:`skipgram_centre` for a target with several codes: the context words
    take turns, as in word2vec.c, each with one :func:`hsw2v.hs.codes.target_step`.
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


@njit(**KERNEL)
def skipgram_centre(target, ctx, n_ctx, alpha, syn0, syn1, hot_slot, hot_rows, paths, rows,
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
    thread's ``hot_rows`` (see :func:`hsw2v.hs.softmax.hs_step`). ``rows``, ``pairs``,
    ``path``: a :class:`State`'s scratch. Returns Σ_c −log P(target | c).

    With a node bias (``syn1`` a column wider than ``dim``), each earlier context's
    step also moved the bias by g, so the Gram entries gain 1 and the bias takes
    the sum of the contexts' steps.

    Contexts go four at a time, then two: one load of u[d] serves four, and u takes
    their four steps in one store (1.05× the words/s, ``scripts/bench_blocks.py``;
    the pairs for what is left, 1.035× more). Each context's gradient takes the
    path's nodes four at a time, in one store (1.10× more).
    The row selection is written out at each use on purpose: a helper returning
    either row made CBOW about 1.5× slower in a one-thread benchmark.
    """
    H, grad, gram, cross, X, G = rows[0], rows[1], pairs[0], pairs[1], path[0], path[1]
    bias = syn1.shape[1] > dim
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
    # The four rows are picked as in hs_step, written out: a shared helper cost 0.941x there.
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


@njit(**KERNEL)
def train_block(ids, sent_ends, n_sents, alpha0, alpha1, keep_prob, weights, paths, config,
                state, dim):
    """Train on one block: ``ids`` split into sentences ending at ``sent_ends[:n_sents]``.

    For each sentence, the words that survive subsampling are visited in order; each
    one's context is the randomly shrunk window around it, and the centre step of
    ``config``'s architecture trains on it. The learning rate falls linearly from
    ``alpha0`` at the block's first word to ``alpha1`` after its last. The hot inner
    nodes are trained in the thread's private rows, merged into ``weights.syn1``
    every ``config.sync_every`` words and at the end (pass no hot nodes to train
    ``syn1`` directly). ``dim`` must equal the vectors' width: a compile-time
    constant, so numba compiles (and caches) a version for each, with the loops
    over ``dim`` unrolled. So is whether words may have several codes, from the
    type of ``paths`` (:attr:`hsw2v.trees.tree.Tree.training_paths`): with a
    :class:`~hsw2v.trees.tree.FlatPaths`, no trace of the several-codes steps. (Checking
    each word's codes at run time, or passing the step functions as arguments,
    which numba does not inline, made one-code skip-gram 14–17% slower in
    ``scripts/bench_kernels.py``.)
    Returns (sum of −log P, number of examples): skip-gram has one example per
    (centre, context) pair, CBOW one per centre word.
    """
    literally(dim)
    syn0, syn1, hot_nodes, hot_slot = weights
    window, cbow_mean, skipgram, sync_every = config
    rng, sen, sen_pos, ctx, rows, pairs, path, hot_rows, hot_base = state
    n_words = sent_ends[n_sents - 1] if n_sents > 0 else 0
    slope = (alpha1 - alpha0) / max(n_words, 1)
    r = rng[0]
    loss = 0.0
    n_examples = 0
    start = 0
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    since_sync = 0
    for s in range(n_sents):
        end = sent_ends[s]
        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)
        start = end
        for i in range(m):
            since_sync = tick_sync(since_sync, sync_every, syn1, hot_nodes, hot_rows, hot_base)
            alpha = np.float32(alpha0 + slope * sen_pos[i])
            prefetch_next(sen, i, m, window, syn0, syn1, hot_slot, paths)
            lo, hi, r = shrunk_window(i, m, window, r)
            n_ctx = gather_context(sen, lo, hi, i, ctx)
            if n_ctx == 0:
                continue
            if skipgram:
                c = 0
                while c < n_ctx:  # a word that comes again must see its own earlier update
                    end = distinct_run(ctx, c, n_ctx)
                    if codes_of(paths, sen[i]) > 1:
                        loss += skipgram_in_turn(sen[i], ctx[c:end], end - c, alpha, syn0, syn1,
                                                 hot_slot, hot_rows, paths, rows, pairs, path, dim)
                    else:
                        loss += skipgram_centre(sen[i], ctx[c:end], end - c, alpha, syn0, syn1,
                                                hot_slot, hot_rows, paths, rows, pairs, path, dim)
                    c = end
                n_examples += n_ctx
            else:
                loss += cbow_centre(sen[i], ctx, n_ctx, alpha, cbow_mean, syn0, syn1, hot_slot,
                                    hot_rows, paths, rows, path, dim)
                n_examples += 1
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    rng[0] = r
    return loss, n_examples
