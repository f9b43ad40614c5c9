"""Semantic trees (Mnih & Hinton 2009): split the vocabulary recursively in two with
a 2-component spherical Gaussian mixture fitted by EM on word representations.

A word is represented by the mean of the context vectors h it is predicted from
in the corpus (CBOW: the mean of the context window; skip-gram: each context
word's vector), computed with the full window and no subsampling. A word that
never has a context falls back to its own input vector.

Two ways to split a node's words once the mixture is fitted:

- ``balanced``: the half of the words with the highest responsibility for the
  first component goes left, so the tree stays balanced (depth ⌈log2 V⌉);
- ``adaptive``: every word goes to its likelier component (a split that leaves a
  side empty falls back to ``balanced``). With ``epsilon`` ε > 0 (ADAPTIVE(ε)), a
  word whose responsibility for the first component lies within ε of ½ goes to
  both sides, so it gets several codes (at most ``max_codes``).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ..counting.corpus import WordTable
from ..errors import HSW2VError, param
from ..jit.helpers import JIT, KERNEL
from ..system.parallel import ordered_map
from ..text.reader import Source, iter_blocks
from ..training.kinds import model_kind
from ..training.kind_dispatch import context_rows
from ..training.walk import make_walk
from .tree import SPLITS, Tree, from_overlapping_splits, huffman


class ContextSums(NamedTuple):
    """The walk's visitor for :func:`context_means`: the kind's config, the word
    vectors, ``H`` (scratch for the context matrix), and each word's sum of the
    context vectors it is predicted from, and their number."""

    config: Any
    syn0: np.ndarray
    H: np.ndarray
    sums: np.ndarray  # float32 (V, D)
    counts: np.ndarray  # int64 (V)
    extra: tuple  # the kind's other matrices


@njit(**KERNEL, inline="always")
def _add_contexts(v, target, ctx, n_ctx, position, dim):
    n = context_rows(v.config, v.syn0, v.extra, ctx, n_ctx, v.H, dim)
    for k in range(n):
        for d in range(dim):
            v.sums[target, d] += v.H[k, d]
    v.counts[target] += n
    return 0.0, n


_walk = make_walk(_add_contexts)


@njit(**KERNEL)
def accumulate_contexts(ids, sent_ends, n_sents, keep, window, sen, sen_pos, ctx, visitor):
    """Add, for every word of the block, the context vectors it is predicted from
    (the kind's context matrix: skip-gram, each context word's vector; CBOW, their
    mean), by the walk of training with the full window and no subsampling.
    Without numba's reference counts, as the training kernels: threads walking at
    once counted every row view on the arrays' shared counters (1.4 s against
    0.9 s for LBL's 5M-word pass on 2 threads)."""
    _walk(ids, sent_ends, n_sents, keep, window, False, np.uint64(0), sen, sen_pos, ctx,
               visitor, visitor.syn0.shape[1])


def _context_sums(model, config, vectors: np.ndarray | None = None) -> ContextSums:
    """A walk's visitor over ``model``'s word vectors (with subwords, composed:
    ``vectors``, where given, composed once for every worker), its sums at zero."""
    return ContextSums(config, model.word_vectors if vectors is None else vectors,
                       np.empty((2 * model.settings.window, model.dim), dtype=np.float32),
                       np.zeros(model.vectors.shape, dtype=np.float32),
                       np.zeros(len(model.vocab), dtype=np.int64), model.extra_matrices)


def _context_config(model) -> Any:
    """The config of ``model``'s kind that its context vectors are computed with
    (:attr:`~hsw2v.training.kinds.ModelKind.context_settings`)."""
    kind = model_kind(model.arch)
    return kind.config_of(replace(model.settings, **kind.context_settings))


def compile_kernels(model) -> None:
    """Load, or compile into numba's cache, the kernels that a semantic tree's build
    calls for a source model of ``model``'s kind and vector size: the context walk
    and the split. A first run calls this while a child process compiles the
    training kernel (:mod:`hsw2v.system.ahead`)."""
    window = model.settings.window
    config = _context_config(model)
    ids = np.zeros(0, dtype=np.int32)
    accumulate_contexts(ids, np.zeros(0, dtype=np.int64), 0,
                        np.ones(len(model.vocab), dtype=np.float32), window, np.empty_like(ids),
                        np.empty(0, dtype=np.int64), np.empty(2 * window, dtype=np.int32),
                        _context_sums(model, config))
    split_tree(np.zeros((3, 2), dtype=np.float32), adaptive=True, threads=1)


def context_means(model, corpus: Source, threads: int | None = None,
                  tokens: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]] | None = None
                  ) -> np.ndarray:
    """Each word's mean context vector h over ``corpus`` (input vector if it has none),
    float32 (V, D); ``threads`` walk blocks at once (default: every core), each into
    float32 sums of its own (a vocabulary's vectors each: float64 sums and a float64
    copy of the means took twice a Huffman run's memory), added into the first's and
    divided there. ``tokens``, where given, gives the corpus's blocks as (word ids,
    sentence ends) of ``model``'s vocabulary (a run's token spool: the text is not
    read and encoded again); else the text's blocks are encoded."""
    window = model.settings.window
    config = _context_config(model)
    keep = np.ones(len(model.vocab), dtype=np.float32)
    vectors = model.word_vectors
    table = WordTable.of_vocab(model.vocab) if tokens is None else None
    blocks: Iterable = iter_blocks(corpus) if tokens is None else tokens()
    workers = []

    def make_worker():
        visitor = _context_sums(model, config, vectors)
        workers.append((visitor.sums, visitor.counts))
        ctx = np.empty(2 * window, dtype=np.int32)

        def walk(block: bytes | tuple[np.ndarray, np.ndarray]) -> None:
            ids, ends = block if table is None else table.encode(block)
            accumulate_contexts(ids, ends, len(ends), keep, window, np.empty_like(ids),
                                np.empty(len(ids), dtype=np.int64), ctx, visitor)
        return walk

    for _ in ordered_map(make_worker, blocks, threads or os.cpu_count() or 1):
        pass
    sums, counts = workers.pop(0)
    while workers:  # (in the order the workers were made, each freed once added)
        more_sums, more_counts = workers.pop(0)
        sums += more_sums
        counts += more_counts
        del more_sums
    seen = counts > 0
    np.divide(sums, np.maximum(counts, 1)[:, None], out=sums, casting="same_kind")
    sums[~seen] = vectors[~seen]
    return sums


@njit(inline="always", **JIT)
def _top_direction(Y, iters):
    """Leading principal direction of the (centred) rows of ``Y`` (power iteration).

    This and :func:`gmm_log_odds` are written as loops, without numpy's array
    expressions: those bring broadcasting checks whose error messages format
    shapes, which took seconds of a first run's compile."""
    n, dim = Y.shape
    v = np.empty(dim)
    for d in range(dim):
        v[d] = 1.0 / np.sqrt(dim) * (1.0 if d % 2 == 0 else -1.0)
    w = np.empty(dim)
    for _ in range(iters):
        for d in range(dim):
            w[d] = 0.0
        for k in range(n):
            p = 0.0
            for d in range(dim):
                p += Y[k, d] * v[d]
            for d in range(dim):
                w[d] += p * Y[k, d]
        norm = 0.0
        for d in range(dim):
            norm += w[d] * w[d]
        norm = np.sqrt(norm)
        if norm == 0.0:
            break
        for d in range(dim):
            v[d] = w[d] / norm
    return v


@njit(inline="always", **JIT)
def gmm_log_odds(X, idx, iters):
    """Fit a 2-component spherical GMM to ``X[idx]`` by EM; return, per point,
    log p(component 0 | x) − log p(component 1 | x).

    The rows are gathered and centred once; each squared distance is
    |y|² − 2 y·μ + |μ|², and each component's spread Σ r |y − μ|² is
    Σ r |y|² − (Σ r) |μ|² at the new μ, so an EM step reads the rows twice."""
    n = len(idx)
    dim = X.shape[1]
    Y = np.empty((n, dim))
    mean = np.zeros(dim)
    for k in range(n):
        for d in range(dim):
            Y[k, d] = X[idx[k], d]
            mean[d] += Y[k, d]
    for d in range(dim):
        mean[d] /= n
    sq = np.empty(n)
    total = 0.0
    for k in range(n):
        s = 0.0
        for d in range(dim):
            Y[k, d] -= mean[d]
            s += Y[k, d] * Y[k, d]
        sq[k] = s
        total += s
    v = _top_direction(Y, 8)
    proj2 = 0.0
    for k in range(n):
        p = 0.0
        for d in range(dim):
            p += Y[k, d] * v[d]
        proj2 += p * p
    spread = max(np.sqrt(proj2 / n), 1e-6)
    mu = np.empty((2, dim))
    for d in range(dim):
        mu[0, d] = spread * v[d]
        mu[1, d] = -spread * v[d]
    var = np.empty(2)
    var[0] = var[1] = max(total / (n * dim), 1e-12)
    weight = np.empty(2)
    weight[0] = weight[1] = 0.5
    odds = np.empty(n)
    r = np.empty(n)
    acc = np.empty(dim)
    for it in range(iters + 1):
        # E-step
        m0 = 0.0
        m1 = 0.0
        for d in range(dim):
            m0 += mu[0, d] * mu[0, d]
            m1 += mu[1, d] * mu[1, d]
        c0 = np.log(weight[0]) - 0.5 * dim * np.log(var[0])
        c1 = np.log(weight[1]) - 0.5 * dim * np.log(var[1])
        for k in range(n):
            a = 0.0
            b = 0.0
            for d in range(dim):
                a += Y[k, d] * mu[0, d]
                b += Y[k, d] * mu[1, d]
            d0 = max(sq[k] - 2.0 * a + m0, 0.0)
            d1 = max(sq[k] - 2.0 * b + m1, 0.0)
            odds[k] = (c0 - d0 / (2 * var[0])) - (c1 - d1 / (2 * var[1]))
        if it == iters:
            break
        # M-step
        for k in range(n):
            r[k] = 1.0 / (1.0 + np.exp(-odds[k]))
        for c in range(2):
            rsum = 0.0
            rsq = 0.0
            for d in range(dim):
                acc[d] = 0.0
            for k in range(n):
                rk = r[k] if c == 0 else 1.0 - r[k]
                rsum += rk
                rsq += rk * sq[k]
                for d in range(dim):
                    acc[d] += rk * Y[k, d]
            if rsum < 1e-9:
                continue
            m = 0.0
            for d in range(dim):
                mu[c, d] = acc[d] / rsum
                m += mu[c, d] * mu[c, d]
            spread_c = max(rsq - rsum * m, 0.0)
            var[c] = max(spread_c / (rsum * dim), 1e-12)
            weight[c] = min(max(rsum / n, 1e-6), 1 - 1e-6)
    return odds


@njit(inline="always", **JIT)
def falling_order(keys):
    """The indices of ``keys`` from the largest key down, ties in index order: what
    ``np.argsort(-keys, kind="mergesort")`` gives, by a bottom-up merge sort of
    plain loops (numba's own mergesort took two seconds of a first compile)."""
    n = len(keys)
    order = np.empty(n, dtype=np.int64)
    spare = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, out = lo, mid, lo
            while a < mid and b < hi:
                if keys[order[b]] > keys[order[a]]:  # (a tie keeps the left first)
                    spare[out] = order[b]
                    b += 1
                else:
                    spare[out] = order[a]
                    a += 1
                out += 1
            while a < mid:
                spare[out] = order[a]
                a += 1
                out += 1
            while b < hi:
                spare[out] = order[b]
                b += 1
                out += 1
        order, spare = spare, order
        width *= 2
    return order


@njit(inline="always", **JIT)
def divide_segment(X, order, lo, hi, iters, adaptive):
    """Split the words ``order[lo:hi]`` in two by a mixture fitted to their rows of
    ``X`` (:func:`gmm_log_odds`), reordering them in place: the left side first,
    each side in its old order when ``adaptive`` (each word to its likelier
    component), else by falling responsibility and halved (``balanced``, also
    where an adaptive split leaves a side empty). Returns where the right side starts."""
    n = hi - lo
    if n == 2:
        return lo + 1
    seg = order[lo:hi].copy()
    odds = gmm_log_odds(X, seg, iters)
    if adaptive:
        k = 0
        for i in range(n):
            k += odds[i] > 0
        if 0 < k < n:
            a, b = lo, lo + k
            for i in range(n):
                if odds[i] > 0:
                    order[a] = seg[i]
                    a += 1
                else:
                    order[b] = seg[i]
                    b += 1
            return lo + k
    rank = falling_order(odds)  # (stable)
    for i in range(n):
        order[lo + i] = seg[rank[i]]
    return lo + (n + 1) // 2


@njit(**JIT)
def _split_segments(X, order, stack, top, children, iters, adaptive, whole):
    """Divide the words of the segments on ``stack`` (rows of lo, hi and inner node,
    ``top`` of them), the last first (:func:`divide_segment`): set each one's two
    children and push each side of two words or more, its inner node numbered in
    preorder (the left side's right after the node, the right side's after the
    left's subtree). With ``whole``, until the stack is empty (the subtrees over
    all of them); else only the last one. Returns the new top.

    The one kernel that the tree's build compiles: the steps it calls are inlined
    into it, so LLVM optimises their code once (a chain of separately compiled
    functions re-optimises every callee's code at each level above it)."""
    n_words = len(order)
    while top > 0:
        top -= 1
        lo, hi, node = stack[top, 0], stack[top, 1], stack[top, 2]
        mid = divide_segment(X, order, lo, hi, iters, adaptive)
        for side in range(2):
            s0, s1 = (lo, mid) if side == 0 else (mid, hi)
            child = node + 1 if side == 0 else node + (mid - lo)
            if s1 - s0 == 1:
                children[node, side] = order[s0]
            else:
                children[node, side] = n_words + child
                stack[top, 0], stack[top, 1], stack[top, 2] = s0, s1, child
                top += 1
        if not whole:
            break
    return top


def split_tree(X: np.ndarray, adaptive: bool, iters: int = 10, threads: int | None = None
               ) -> np.ndarray:
    """The children table (V−1, 2) of the tree that splits the rows of ``X`` (one per
    word) top-down by :func:`divide_segment`; inner node 0 is the root, the others
    in preorder. The largest segments are split first until every thread has some,
    then ``threads`` (default: every core) build the rest apart: the same tree
    whatever their number."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    n = len(X)
    order = np.arange(n, dtype=np.int64)
    children = np.empty((n - 1, 2), dtype=np.int32)
    threads = threads or os.cpu_count() or 1
    segments = [(0, n, 0)]
    pushed = np.empty((2, 3), dtype=np.int64)
    while len(segments) < 4 * threads:
        segments.sort(key=lambda seg: seg[1] - seg[0])
        if segments[-1][1] - segments[-1][0] < 64:
            break
        pushed[0] = segments.pop()
        k = _split_segments(X, order, pushed, 1, children, iters, adaptive, False)
        segments.extend(tuple(int(x) for x in pushed[j]) for j in range(k))

    def build(seg: tuple[int, int, int]) -> None:
        stack = np.empty((max(seg[1] - seg[0], 1), 3), dtype=np.int64)
        stack[0] = seg
        _split_segments(X, order, stack, 1, children, iters, adaptive, True)

    segments.sort(key=lambda seg: seg[0] - seg[1])  # the largest first
    for _ in ordered_map(lambda: build, segments, threads):
        pass
    return children


def gmm_splitter(X: np.ndarray, split: str = "balanced", iters: int = 10):
    """A ``split(order, lo, hi)`` for :func:`hsw2v.trees.tree.from_splits` that clusters
    ``X`` (:func:`divide_segment`)."""
    if split not in SPLITS:
        raise HSW2VError(f"{param('split')} must be one of {', '.join(SPLITS)}, got {split!r}")
    X = np.ascontiguousarray(X, dtype=np.float32)
    adaptive = split == "adaptive"

    def divide(order, lo, hi):
        return divide_segment(X, order, lo, hi, iters, adaptive)

    return divide


def overlapping_splitter(X: np.ndarray, epsilon: float, iters: int = 10):
    """A ``split(words, spare)`` for :func:`hsw2v.trees.tree.from_overlapping_splits`
    (masks of the words that go left and right): ADAPTIVE(ε) on the rows of ``X``. A spare word whose responsibility r for the
    first component has |r − ½| ≤ ε goes to both sides; the others to their likelier
    side. If that leaves a side empty or whole, no word is copied, and then the
    split falls back to halving by responsibility, as :func:`gmm_splitter` does."""
    X = np.ascontiguousarray(X, dtype=np.float32)

    margin = np.log((0.5 + epsilon) / (0.5 - epsilon))  # |r − ½| ≤ ε ⇔ |odds| ≤ margin
    first = np.array([True, False])

    def divide(words, spare):
        n = len(words)
        if n == 2:
            return first, ~first
        odds = gmm_log_odds(X, words, iters)
        left = odds > 0
        both = spare & (np.abs(odds) <= margin)
        for go_left, go_right in ((left | both, ~left | both), (left, ~left)):
            if 0 < go_left.sum() < n and 0 < go_right.sum() < n:
                return go_left, go_right
        go_left = np.zeros(n, dtype=bool)
        go_left[np.argsort(-odds, kind="stable")[:(n + 1) // 2]] = True
        return go_left, ~go_left

    return divide


def semantic_tree(X: np.ndarray, split: str = "balanced", iters: int = 10, epsilon: float = 0.0,
                  max_codes: int = 1, threads: int | None = None) -> Tree:
    """A tree over the rows of ``X`` (one per word, in vocabulary order); with
    ``split`` adaptive and ``epsilon`` > 0, words may get up to ``max_codes`` codes.
    One code a word, ``threads`` split apart subtrees at once (:func:`split_tree`)."""
    if len(X) < 2:
        raise HSW2VError("need at least 2 words to build a tree")
    if epsilon > 0 and split == "adaptive" and max_codes > 1:
        tree = from_overlapping_splits(len(X), overlapping_splitter(X, epsilon, iters), max_codes,
                                       f"semantic-adaptive-{epsilon:g}")
        tree.builder = "semantic"
        return tree
    if split not in SPLITS:
        raise HSW2VError(f"{param('split')} must be one of {', '.join(SPLITS)}, got {split!r}")
    tree = Tree(split_tree(X, split == "adaptive", iters, threads), "semantic")
    tree.kind = f"semantic-{split}"
    return tree


def semantic_below(X: np.ndarray, counts: np.ndarray, levels: int, split: str = "balanced",
                   iters: int = 10) -> Tree:
    """Huffman's tree over ``counts`` down to depth ``levels``; below each of its
    nodes at that depth, a semantic tree over that node's words (their rows of
    ``X``), on the same inner nodes. Frequent words keep their short Huffman
    paths; the rarer words below are grouped by meaning (the trees guide,
    docs/guides/trees-semantic.md, measures it for skip-gram)."""
    top = huffman(counts)
    v, children = top.n_words, top.children.copy()
    offsets, nodes = top.path_offsets, top.path_nodes
    deep = np.flatnonzero(np.diff(offsets) > levels)
    under = nodes[offsets[deep] + levels]  # each deep word's node at depth `levels`
    for node in np.unique(under):
        words = deep[under == node]
        old = np.unique(np.concatenate([nodes[offsets[w] + levels:offsets[w + 1]] for w in words]))
        sub = semantic_tree(X[words], split, iters)
        rows = np.empty(len(words) - 1, dtype=np.int64)  # the subtree's inner node -> a row
        rows[sub.root] = node
        rows[np.arange(len(words) - 1) != sub.root] = old[old != node]
        for a, pair in enumerate(sub.children.tolist()):
            children[rows[a]] = [int(words[c]) if c < len(words) else v + int(rows[c - len(words)])
                                 for c in pair]
    return Tree(children, f"semantic-{split}-below-{levels}", builder="semantic")

