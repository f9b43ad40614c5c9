"""What a run's training threads share besides the weights: the subsampling table,
the hot inner nodes, the tree's paths, the settings the kernel reads, and the
kernel itself, loaded. Built once a run; the Dask engine's workers build it once
and reuse it every round (building it each round cost about 10 ms of a 300 ms
round)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..counting.vocab import keep_probabilities
from ..hs.flat import FlatCodes, FlatPaths
from ..hs.softmax import subtree_totals
from ..model.model import Model
from ..model.word2vec_format import warm_up_writer
from ..settings import TrainSettings
from ..system.compiling import about
from ..system.memory import release_compiler_pages
from ..training.block import block_kernel
from ..training.kinds import model_kind
from ..training.state import Weights, new_state
from ..trees.tree import Tree

HOT_NODES = 1024
"""With several threads, each thread trains its own copy of the inner nodes
visited most (those near the root) and merges it every HOT_SYNC_WORDS words (a
kind's :attr:`~hsw2v.training.kinds.ModelKind.fast_rows` most visited every 64)."""
HOT_SYNC_WORDS = 2048


def hot_inner_nodes(tree: Tree, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` inner nodes on the most word tokens' paths, the most visited
    first, and each inner node's slot among them (-1 for the others)."""
    n_inner = tree.n_leaves - 1
    k = min(k, n_inner)
    visits = np.empty(n_inner, dtype=np.float64)  # O(V): no array per path entry
    subtree_totals(tree.children, tree.inner_order, counts[tree.leaf_words] * 1.0, visits)
    hot = np.argsort(-visits, kind="stable")[:k].astype(np.int32)
    slot = np.full(n_inner, -1, dtype=np.int32)
    slot[hot] = np.arange(k, dtype=np.int32)
    return hot, slot


class KernelSetup(NamedTuple):
    """The read-only part of a run's training, as the threads take it."""

    keep: np.ndarray  # float32 (V): each word's probability of surviving subsampling
    hot_nodes: np.ndarray  # see :class:`hsw2v.training.block.Weights`
    hot_slot: np.ndarray
    paths: FlatPaths | FlatCodes
    longest: int  # floats of scratch a step needs (:attr:`hsw2v.trees.tree.Tree.step_scratch`)
    config: Any  # the kind's config (see :mod:`hsw2v.training.kinds`)
    kernel: Any  # train_block's entry point compiled for these types and the dimension


def kernel_setup(model: Model, s: TrainSettings) -> KernelSetup:
    """The :class:`KernelSetup` of training ``model`` with settings ``s``. Loads every
    kernel the run will call, then hands LLVM's pages back (see :mod:`hsw2v.system.memory`)."""
    tree = model.tree
    keep = keep_probabilities(model.vocab.counts, s.sample)
    hot_nodes, hot_slot = hot_inner_nodes(tree, model.vocab.counts, HOT_NODES if s.threads > 1 else 0)
    kind = model_kind(s.arch)
    config = kind.config_of(s)._replace(sync_every=HOT_SYNC_WORDS, fast_rows=kind.fast_rows)
    paths, longest = tree.training_paths, tree.step_scratch
    weights = Weights(model.vectors, model.node_vectors, hot_nodes, hot_slot, model.extra_matrices)
    state = new_state(0, 0, s.window, longest, model.node_vectors[hot_nodes],
                      model.extra_matrices)
    with about(f"the {s.arch} training kernel for dim {s.dim}"):
        kernel = block_kernel(kind, config, keep, weights, paths, state, s.dim)
    warm_up_writer(s.dim)
    release_compiler_pages()
    return KernelSetup(keep, hot_nodes, hot_slot, paths, longest, config, kernel)
