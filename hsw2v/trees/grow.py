"""Growing a tree by new leaves, keeping every old word's code as a prefix of its
new one: a new word splits a leaf into an inner node whose children are the old
word (code 0) and the new one (code 1). The old word's path gains that one node,
and nothing else moves, so with the new node's vector at zero, P(old word | h)
is halved (σ(0) = 1/2) and every other old word's is unchanged.

Each new word, the most frequent first, splits the leaf that adds least to the
expected code length Σ_w f_w·depth_w: splitting leaf l at depth d adds
f_l + f_new·(d + 1). The cheapest leaf at each depth is the least frequent one,
so only one candidate a depth is weighed.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

import numpy as np

from ..errors import HSW2VError
from .tree import Tree


class GrownTree(NamedTuple):
    """A grown tree, and for each new word (in the order placed) the word whose
    leaf it split."""

    tree: Tree
    beside: np.ndarray  # int32: a grown word id for each new word


def grow_tree(tree: Tree, ids: np.ndarray, added: np.ndarray, counts: np.ndarray) -> GrownTree:
    """``tree`` (V words, one code each) grown by the words ``added``.

    Parameters
    ----------
    tree
        The tree to grow; its words' ids are its leaves.
    ids
        int (V): each old word's id in the grown vocabulary.
    added
        int: the new words' ids in the grown vocabulary, in the order to place them
        (the most frequent first).
    counts
        The grown vocabulary's counts, by id.

    Returns
    -------
    GrownTree
        Inner node ``a`` of ``tree`` is inner node ``a`` of the grown tree (the row of
        the inner-node vectors stays), and the ``k``-th new word's inner node is row
        V − 1 + k.
    """
    if tree.max_codes > 1:
        raise HSW2VError("a tree whose words have several codes cannot grow: a new word "
                         "would take one code of an old word's several")
    n_old, n_new = tree.n_words, len(ids) + len(added)
    children = np.empty((n_new - 1, 2), dtype=np.int32)
    old = tree.children
    children[:n_old - 1] = np.where(old < n_old, ids[np.minimum(old, n_old - 1)],
                                    old - n_old + n_new)
    parent = np.empty((n_new, 2), dtype=np.int64)  # each leaf's inner node, and its side
    for side in (0, 1):
        leaf = old[:, side] < n_old
        parent[ids[old[leaf, side]], 0] = np.flatnonzero(leaf)
        parent[ids[old[leaf, side]], 1] = side
    depths: dict[int, list[tuple[int, int]]] = {}  # depth: a heap of (count, word)
    for word, depth in zip(ids.tolist(), tree.depths.tolist()):
        depths.setdefault(depth, []).append((int(counts[word]), word))
    for heap in depths.values():
        heapq.heapify(heap)
    beside = np.empty(len(added), dtype=np.int32)
    for k, word in enumerate(added.tolist()):
        f = int(counts[word])
        depth = min((heap[0][0] + f * (d + 1), d) for d, heap in depths.items() if heap)[1]
        _, leaf = heapq.heappop(depths[depth])
        row = n_old - 1 + k
        children[row] = (leaf, word)
        children[parent[leaf, 0], parent[leaf, 1]] = n_new + row
        parent[leaf] = (row, 0)
        parent[word] = (row, 1)
        below = depths.setdefault(depth + 1, [])
        heapq.heappush(below, (int(counts[leaf]), leaf))
        heapq.heappush(below, (f, word))
        beside[k] = leaf
    kind = tree.kind if tree.kind.endswith(", grown") else f"{tree.kind}, grown"
    grown = Tree(children, kind, builder=tree.builder)
    grown.details = dict(tree.details)
    return GrownTree(grown, beside)


def expected_code_length(tree: Tree, counts: np.ndarray) -> float:
    """Σ_w f_w·depth_w / Σ_w f_w: the branches a token's step takes, on average."""
    return float((counts * tree.depths).sum() / counts.sum())


def split_leaf(tree: Tree, word: int) -> int:
    """The word whose leaf ``word`` split when it joined ``tree``, for ``word`` a grown
    one: it joined as code 1 of a new node (later words that split its own leaf put
    it on code 0 below), whose code-0 side, followed down code 0 past later splits,
    is that word."""
    parent = np.empty(2 * tree.n_leaves - 1, dtype=np.int64)
    parent[tree.children.ravel()] = np.repeat(np.arange(tree.n_leaves - 1), 2)
    node = word
    while tree.children[parent[node], 0] == node:  # up past later splits of its own leaf
        node = tree.n_leaves + int(parent[node])
    node = int(tree.children[parent[node], 0])
    while node >= tree.n_leaves:
        node = int(tree.children[node - tree.n_leaves, 0])
    return node
