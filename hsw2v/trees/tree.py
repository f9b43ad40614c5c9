"""Binary trees over the vocabulary for hierarchical softmax.

A tree over V words has V leaves (node ids ``0..V-1``, the word indices) and V-1
inner nodes (node ids ``V..2V-2``; inner node ``a`` has id ``V + a`` and owns row
``a`` of the inner-node vectors). ``children[a] = (c0, c1)``: taking child ``c0``
is code 0, which has probability σ(h·u_a); ``c1`` is code 1, σ(-h·u_a). These are
word2vec.c's conventions, and each word's codes and points are listed root first.

A word may also have several codes (Mnih & Hinton's ADAPTIVE(ε) trees): the tree
then has L > V leaves, leaf ``w < V`` is word w's first code and leaf ``V + j``
another code of word ``extra_leaves[j]``; inner node ``a`` has id ``L + a``, and
P(w | h) is the sum over w's codes of each path's product.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..errors import HSW2VError
from ..softmax.flat import FlatCodes, FlatPaths

SPLITS = ("balanced", "adaptive")
"""How a learned tree splits a node's words (``--split``; see :mod:`hsw2v.trees.semantic`)."""


class Tree:
    """A full binary tree, with each leaf's root-first path in CSR form.

    ``path_nodes[path_offsets[k]:path_offsets[k+1]]`` are the inner nodes (rows of
    the inner-node vectors) from the root to leaf ``k``; ``path_codes`` the branches.
    ``inner_order`` lists the inner nodes breadth-first from the root (parents first).
    Leaf ``w < V`` is word w; ``extra_leaves[j]`` is the word of leaf ``V + j``, a
    further code of that word (see the module's docstring).
    """

    def __init__(self, children: np.ndarray, kind: str, extra_leaves: np.ndarray | None = None,
                 builder: str | None = None):
        children = np.ascontiguousarray(children, dtype=np.int32)
        extra = np.ascontiguousarray(np.zeros(0) if extra_leaves is None else extra_leaves,
                                     dtype=np.int32)
        n_leaves = children.shape[0] + 1 if children.ndim == 2 else 0
        n_words = n_leaves - len(extra)
        if children.ndim != 2 or children.shape[1] != 2 or extra.ndim != 1 or n_words < 2:
            raise HSW2VError("tree: children must have shape (V-1, 2) with V ≥ 2" if not len(extra)
                             else "tree: children must have shape (L-1, 2) for L leaves, of which "
                             "at least 2 are words' first codes")
        if len(extra) and (extra.min() < 0 or extra.max() >= n_words):
            raise HSW2VError("tree: an extra leaf names no word")
        self.children = children
        self.kind = kind  # what it is, in words: ``semantic-adaptive-0.25``
        self.builder = builder or kind  # the registry's builder that made it: ``semantic``
        self.n_words = n_words
        self.n_leaves = n_leaves
        self.extra_leaves = extra
        (self.root, self.inner_order, self.path_offsets, self.path_nodes,
         self.path_codes) = _paths(children)
        self.leaf_words = np.concatenate([np.arange(n_words, dtype=np.int32), extra])
        order = np.argsort(self.leaf_words, kind="stable")  # each word's first leaf is itself
        self.leaf_offsets = np.zeros(n_words + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.leaf_words, minlength=n_words), out=self.leaf_offsets[1:])
        self.leaves = order.astype(np.int32)
        self.max_codes = int(np.diff(self.leaf_offsets).max())
        self.details: dict[str, int] = {}
        """Figures a builder records about its tree (the WordNet tree: the words and
        tokens WordNet covers); saved with the model."""

    def __repr__(self) -> str:
        return f"Tree<kind={self.kind}, words={self.n_words}, leaves={self.n_leaves}>"

    def __len__(self) -> int:
        return self.n_words

    @property
    def flat(self) -> FlatCodes:
        """The paths and each word's codes as one value for the kernels."""
        return FlatCodes(self.path_offsets, self.path_nodes, self.path_codes,
                         self.leaf_offsets, self.leaves, self.leaf_words)

    @property
    def training_paths(self) -> FlatPaths | FlatCodes:
        """What the training kernels take: :attr:`flat`, narrowed to a
        :class:`FlatPaths` when every word has one code. The kernels are compiled
        for the type they get, so a one-code tree's have no trace of the
        several-codes step (faster: see the kernels' benchmarks page)."""
        if self.max_codes > 1:
            return self.flat
        return FlatPaths(self.path_offsets, self.path_nodes, self.path_codes)

    def path(self, word: int) -> tuple[np.ndarray, np.ndarray]:
        """(inner nodes, codes) from the root to ``word`` (its first code)."""
        lo, hi = self.path_offsets[word], self.path_offsets[word + 1]
        return self.path_nodes[lo:hi], self.path_codes[lo:hi]

    def paths(self, word: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(inner nodes, codes) of each of ``word``'s codes, its first code first."""
        leaves = self.leaves[self.leaf_offsets[word]:self.leaf_offsets[word + 1]]
        return [(self.path_nodes[self.path_offsets[k]:self.path_offsets[k + 1]],
                 self.path_codes[self.path_offsets[k]:self.path_offsets[k + 1]]) for k in leaves]

    @property
    def depths(self) -> np.ndarray:
        """Path length of each word's first code."""
        return np.diff(self.path_offsets[:self.n_words + 1]).astype(np.int64)

    @property
    def codes_per_word(self) -> np.ndarray:
        """How many codes (leaves) each word has: all ones but in ADAPTIVE(ε) trees."""
        return np.diff(self.leaf_offsets)

    @property
    def nodes_per_word(self) -> np.ndarray:
        """The inner nodes a training step for each word visits: its codes' path lengths summed."""
        out = np.zeros(self.n_words, dtype=np.int64)
        np.add.at(out, self.leaf_words, np.diff(self.path_offsets))
        return out

    @property
    def step_scratch(self) -> int:
        """Floats of scratch a training step needs: the longest path, or for a word
        with several codes their path lengths summed plus one per code."""
        codes = self.codes_per_word
        return int((self.nodes_per_word + np.where(codes > 1, codes, 0)).max())

    def summary(self, counts: np.ndarray) -> dict:
        """Kind, size, depth, mean path length (all codes of a word summed) per word
        and per token, codes per word, and the builder's :attr:`details`."""
        visits, codes = self.nodes_per_word, self.codes_per_word
        return {
            "kind": self.kind,
            "words": self.n_words,
            "depth": int(np.diff(self.path_offsets).max()),
            "mean_path_length": float(visits.mean()),
            "weighted_mean_path_length": float((visits * counts).sum() / np.sum(counts)),
            "codes_per_word": float(codes.mean()),
            "max_codes": self.max_codes,
            **self.details,
            **({"covered_word_share": self.details["covered_words"] / self.n_words,
                "covered_token_share": self.details["covered_tokens"] / float(np.sum(counts))}
               if "covered_words" in self.details and "covered_tokens" in self.details else {}),
        }


def _descending(counts: np.ndarray, kind: str) -> np.ndarray:
    """``counts`` as int64, checked: at least 2, in descending order."""
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) < 2:
        raise HSW2VError("need at least 2 distinct words to build a tree")
    if np.any(counts[:-1] < counts[1:]):
        raise HSW2VError(f"{kind}: counts must be sorted in descending order")
    return counts


def huffman(counts: np.ndarray) -> Tree:
    """Huffman tree from counts sorted in descending order, in O(V) (two queues).

    As in word2vec.c, each merge takes the two smallest of the leaves and the inner
    nodes made so far (the inner node wins a tie); the smaller gets code 0, and the
    root is the last inner node. There is no depth limit.
    """
    counts = _descending(counts, "huffman")
    n = len(counts)
    children: list[tuple[int, int]] = []
    _merge_smallest(list(range(n)), counts.tolist(), children, n)
    return Tree(np.array(children, dtype=np.int32), "huffman")


def from_splits(order: np.ndarray, split, kind: str) -> Tree:
    """Build a tree top-down: the words ``order[lo:hi]`` under a node are divided by
    ``split(order, lo, hi) -> mid`` into ``order[lo:mid]`` (code 0) and ``order[mid:hi]``.

    ``split`` may reorder ``order[lo:hi]`` in place and must return lo < mid < hi.
    Inner nodes are numbered in creation order, so the root is inner node 0.
    """
    order = np.array(order, dtype=np.int64)
    n = len(order)
    if n < 2:
        raise HSW2VError("need at least 2 distinct words to build a tree")
    children = np.empty((n - 1, 2), dtype=np.int32)
    next_inner = 1
    stack = [(0, n, 0)]  # (lo, hi, inner node that owns the segment)
    while stack:
        lo, hi, inner = stack.pop()
        mid = int(split(order, lo, hi))
        if not lo < mid < hi:
            raise HSW2VError(f"tree: split of [{lo}, {hi}) at {mid} leaves a side empty")
        for side, (a, b) in enumerate(((lo, mid), (mid, hi))):
            if b - a == 1:
                children[inner, side] = order[a]
            else:
                children[inner, side] = n + next_inner
                stack.append((a, b, next_inner))
                next_inner += 1
    return Tree(children, kind)


def from_overlapping_splits(n_words: int, split, max_codes: int, kind: str) -> Tree:
    """Build a tree top-down where a word may go to both sides of a split and so get
    several codes (Mnih & Hinton's ADAPTIVE(ε)).

    ``split(words, spare) -> (left, right)`` divides a node's distinct ``words``:
    two boolean masks over them, of the words that go to each side. A word may be
    on both sides only where ``spare`` (a mask over ``words``) is true, every word
    must be on a side, and each side must be non-empty and smaller than
    ``words``. A word is spare while it has fewer than ``max_codes`` codes, so no
    word gets more. The first leaf of word w is leaf w; its further leaves are
    numbered from V on.
    """
    copies = np.ones(n_words, dtype=np.int64)
    made: list[list] = []  # per inner node: its two children as ("leaf", word) or ("inner", a)
    stack = [(np.arange(n_words, dtype=np.int64), 0)]
    made.append([None, None])
    while stack:
        words, inner = stack.pop()
        n = len(words)
        spare = copies[words] < max_codes
        go_left, go_right = (np.asarray(m, dtype=bool) for m in split(words, spare))
        both = go_left & go_right
        if (go_left.shape != (n,) or go_right.shape != (n,)
                or not 0 < go_left.sum() < n or not 0 < go_right.sum() < n
                or not (go_left | go_right).all() or (both & ~spare).any()):
            raise HSW2VError(f"tree: a split of {n} words is not a valid overlapping split")
        copies[words[both]] += 1
        left, right = words[go_left], words[go_right]
        for side, part in enumerate((left, right)):
            if len(part) == 1:
                made[inner][side] = ("leaf", int(part[0]))
            else:
                made[inner][side] = ("inner", len(made))
                stack.append((part, len(made)))
                made.append([None, None])
    extra: list[int] = []
    first = np.zeros(n_words, dtype=bool)
    n_leaves = int(copies.sum())
    children = np.empty((len(made), 2), dtype=np.int32)
    for a, pair in enumerate(made):
        for side, (what, k) in enumerate(pair):
            if what == "inner":
                children[a, side] = n_leaves + k
            elif not first[k]:
                first[k] = True
                children[a, side] = k
            else:
                children[a, side] = n_words + len(extra)
                extra.append(k)
    return Tree(children, kind, np.array(extra, dtype=np.int32))


def _halve(order, lo, hi):
    return (lo + hi + 1) // 2


def balanced(n_words: int) -> Tree:
    """Split the frequency-ordered vocabulary into halves recursively: depth ⌈log2 V⌉."""
    return from_splits(np.arange(n_words), _halve, "balanced")


def random_tree(n_words: int, seed: int = 1) -> Tree:
    """Words placed at random on the leaves of a balanced tree."""
    return from_splits(np.random.default_rng(seed).permutation(n_words), _halve, "random")


def fano(counts: np.ndarray) -> Tree:
    """Shannon–Fano: split the frequency-sorted list where the halves' totals are closest."""
    prefix = [0]
    for c in np.asarray(counts, dtype=np.int64).tolist():
        prefix.append(prefix[-1] + c)

    def split(order, lo, hi):
        # the cut k (lo < k < hi) minimising |2·prefix[k] − prefix[lo] − prefix[hi]|
        k = bisect.bisect_left(prefix, (prefix[lo] + prefix[hi]) / 2, lo + 1, hi - 1)
        if k > lo + 1 and (2 * prefix[k] - prefix[lo] - prefix[hi]
                           >= prefix[lo] + prefix[hi] - 2 * prefix[k - 1]):
            k -= 1
        return k

    return from_splits(np.arange(len(counts)), split, "fano")


def _merge_smallest(ids: list[int], weights: list[int], children: list[tuple[int, int]],
                    n: int) -> int:
    """Huffman's merges over items given in descending weight, in O(items) with two
    queues (the items, smallest first, and the inner nodes made so far; an inner
    node wins a tie): each new inner node, numbered ``n + len(children)``, is
    appended to ``children`` with the smaller of its two children first (code 0);
    the root's id."""
    made: list[int] = []  # the weights of the inner nodes made here, in order
    first = n + len(children)  # the id of the first of them
    leaf, inner = len(ids) - 1, 0
    for a in range(len(ids) - 1):
        pair, weight = [], 0
        for _ in range(2):
            if leaf >= 0 and (inner >= a or weights[leaf] < made[inner]):
                pair.append(ids[leaf])
                weight += weights[leaf]
                leaf -= 1
            else:
                pair.append(first + inner)
                weight += made[inner]
                inner += 1
        children.append((pair[0], pair[1]))
        made.append(weight)
    return first + len(made) - 1 if made else ids[0]


def frequency_classes(counts: np.ndarray, n_classes: int) -> np.ndarray:
    """Where each of ``n_classes`` frequency classes starts in the frequency-sorted
    vocabulary: word w goes to class ⌊C · (tokens of the words before w) / tokens⌋,
    so the classes hold about equal shares of the tokens (frequent words in small
    classes, a very frequent word alone); classes left empty are dropped."""
    counts = np.asarray(counts, dtype=np.int64)
    before = np.cumsum(counts) - counts
    label = before * n_classes // int(counts.sum())
    return np.flatnonzero(np.diff(label, prepend=-1))


def classes(counts: np.ndarray, n_classes: int | None = None) -> Tree:
    """A class tree in the manner of Goodman (2001): the frequency-sorted vocabulary
    is cut into about √V classes of equal token shares (:func:`frequency_classes`);
    the top levels are a Huffman tree over the classes' totals, and inside each
    class a Huffman tree over its words' counts."""
    counts = _descending(counts, "classes")
    n = len(counts)
    starts = frequency_classes(counts, n_classes or max(2, round(n ** 0.5)))
    ends = np.append(starts[1:], n)
    children: list[tuple[int, int]] = []
    tops = [(_merge_smallest(list(range(a, b)), counts[a:b].tolist(), children, n),
             int(counts[a:b].sum())) for a, b in zip(starts.tolist(), ends.tolist())]
    tops.sort(key=lambda item: -item[1])  # (stable: equal totals keep their order)
    _merge_smallest([i for i, _ in tops], [w for _, w in tops], children, n)
    return Tree(np.array(children, dtype=np.int32), "classes")


def _paths(children: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Root, inner nodes breadth-first, and every word's root-first path, from the
    children table."""
    n = children.shape[0] + 1
    flat = children.ravel()
    if flat.min() < 0 or flat.max() > 2 * n - 2:
        raise HSW2VError("tree: child id out of range")
    parent = np.full(2 * n - 1, -1, dtype=np.int64)
    code = np.zeros(2 * n - 1, dtype=np.uint8)
    inner_ids = np.arange(n - 1, dtype=np.int64)
    parent[children[:, 0]] = inner_ids
    parent[children[:, 1]] = inner_ids
    code[children[:, 1]] = 1
    hits = np.bincount(flat, minlength=2 * n - 1)
    roots = np.flatnonzero(parent[n:] < 0)
    if np.any(hits > 1) or hits.sum() != 2 * n - 2 or len(roots) != 1:
        raise HSW2VError("tree: not a full binary tree (a node has two parents or none)")
    root = int(roots[0])
    levels = _levels(children, root, n)
    depth = np.zeros(2 * n - 1, dtype=np.int64)
    for d, level in enumerate(levels):
        depth[level] = d
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(depth[:n], out=offsets[1:])
    nodes = np.empty(offsets[-1], dtype=np.int32)
    codes = np.empty(offsets[-1], dtype=np.uint8)
    # Fill paths from the leaf upwards, all words at once, one level per step.
    cur = np.arange(n, dtype=np.int64)
    pos = offsets[1:] - 1
    active = np.arange(n)
    for _ in range(len(levels) - 1):
        p = parent[cur[active]]
        nodes[pos[active]] = p
        codes[pos[active]] = code[cur[active]]
        cur[active] = n + p
        pos[active] -= 1
        active = active[pos[active] >= offsets[:-1][active]]
    order = np.concatenate(levels)
    return root, order[order >= n] - n, offsets, nodes, codes


def _levels(children: np.ndarray, root: int, n: int) -> list[np.ndarray]:
    """Node ids level by level from the root (``levels[d]`` at depth d)."""
    levels = [np.array([n + root], dtype=np.int64)]
    for _ in range(n):  # no path is longer than n - 1
        inner = levels[-1][levels[-1] >= n] - n
        if not len(inner):
            break
        levels.append(children[inner].ravel().astype(np.int64))
    if sum(map(len, levels)) != 2 * n - 1:
        raise HSW2VError("tree: not every node is reachable from the root")
    return levels
