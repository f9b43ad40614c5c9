"""A picture of a tree's top levels (``hsw2v tree MODEL --plot tree.png``), each
node labelled with the most frequent words below it, so that a reader sees what
the first branches separate. Needs matplotlib (``pip install matplotlib``);
no pyplot state is touched, so a notebook's backend is left alone."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import HSW2VError, param
from ..system.files import atomic_write
from .tree import Tree

FORMATS = ("png", "svg", "pdf")
MAX_LEVELS = 8


def top_words(tree: Tree, names: Sequence[str], levels: int, words: int) -> dict[int, list[str]]:
    """The ``words`` most frequent words below each inner node at depth 0 (the
    root) to ``levels`` (key: the node's row), most frequent first, by their
    ``names`` (the vocabulary's words, by id); a word with several codes below a
    node counts once."""
    offsets = tree.path_offsets
    depths = np.diff(offsets)
    found: dict[int, list[str]] = {}
    for d in range(levels + 1):
        leaves = np.flatnonzero(depths > d)
        leaves = leaves[np.argsort(tree.leaf_words[leaves], kind="stable")]  # most frequent first
        nodes = tree.path_nodes[offsets[leaves] + d]
        order = np.argsort(nodes, kind="stable")
        nodes, ids = nodes[order], tree.leaf_words[leaves[order]]
        starts = np.flatnonzero(np.diff(nodes, prepend=-1))
        for start, end in zip(starts, [*starts[1:], len(nodes)]):
            below = list(dict.fromkeys(ids[start:end].tolist()))[:words]
            found[int(nodes[start])] = [names[i] for i in below]
    return found


def _layout(tree: Tree, levels: int) -> list[tuple[int, int, float, int | None]]:
    """The drawn nodes as (node id, depth, row, parent's index in the list), in
    depth-first order; rows of the nodes at the bottom are 0, 1, 2, … top to bottom,
    and a node's row is the mean of its children's."""
    v, children = tree.n_leaves, tree.children
    drawn: list[tuple[int, int, float, int | None]] = []
    next_row = [0.0]

    def visit(node: int, depth: int, parent: int | None) -> float:
        index = len(drawn)
        drawn.append((node, depth, 0.0, parent))
        if node < v or depth == levels:
            row = next_row[0]
            next_row[0] += 1
        else:
            row = (visit(int(children[node - v, 0]), depth + 1, index)
                   + visit(int(children[node - v, 1]), depth + 1, index)) / 2
        drawn[index] = (node, depth, row, parent)
        return row

    visit(v + tree.root, 0, None)
    return drawn


def plot_tree(tree: Tree | Any, path: str, levels: int = 4, words: int = 3,
              vectors: Any = None) -> dict[int, list[str]]:
    """Draw the top ``levels`` of a tree, root on the left; each node is labelled
    with its most frequent words (a word's leaf, with the word).

    Parameters
    ----------
    tree
        The tree; or a trained model, for its tree and its words.
    path
        The picture to write: .png, .svg or .pdf (needs matplotlib: the ``plot`` extra).
    levels
        How many levels below the root.
    words
        How many words label a node.
    vectors
        What names the words: anything with the vocabulary's ``words`` in id order
        (word vectors, a model); without it, ``#id``.

    Returns
    -------
    dict[int, list[str]]
        Each drawn node's label words (see :func:`top_words`).
    """
    if not 1 <= levels <= MAX_LEVELS:
        raise HSW2VError(f"{param('levels')} must be between 1 and {MAX_LEVELS}, got {levels}")
    if words < 1:
        raise HSW2VError(f"{param('words')} must be at least 1, got {words}")
    kind = os.path.splitext(path)[1][1:].lower()
    if kind not in FORMATS:
        raise HSW2VError(f"{path}: {param('plot')} writes {', '.join('.' + f for f in FORMATS)} files")
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise HSW2VError(f"{param('plot')} needs matplotlib: pip install matplotlib") from None
    if not isinstance(tree, Tree):  # a model: its tree, and its words
        tree, vectors = tree.tree, vectors if vectors is not None else tree
    names = (list(vectors.words) if vectors is not None
             else [f"#{i}" for i in range(tree.n_words)])
    labels = top_words(tree, names, levels, words)
    drawn = _layout(tree, levels)
    v = tree.n_leaves
    rows = 1 + max(row for _, _, row, _ in drawn)
    fig = Figure(figsize=(2.2 + 2.4 * levels, 0.8 + 0.42 * rows))
    ax = fig.subplots()
    for node, depth, row, parent in drawn:
        if parent is not None:
            ax.plot([drawn[parent][1], depth], [drawn[parent][2], row], color="0.7", lw=0.8, zorder=1)
        if node < v:
            text, style = names[tree.leaf_words[node]], {"facecolor": "#fdebd0", "edgecolor": "#e59866"}
        else:
            text, style = ", ".join(labels[node - v]), {"facecolor": "#d6eaf8", "edgecolor": "#5dade2"}
        ax.text(depth, row, text, ha="center", va="center", fontsize=7, zorder=2,
                bbox={"boxstyle": "round,pad=0.25", "linewidth": 0.6, **style})
    ax.set_xlim(-0.6, levels + 0.6)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.axis("off")
    ax.set_title(f"{tree.kind} tree over {tree.n_words:,} words: the top {levels} levels, "
                 f"each node with its {words} most frequent words", fontsize=9)
    fig.tight_layout()
    with atomic_write(path) as f:
        fig.savefig(f, format=kind, dpi=110)
    return labels
