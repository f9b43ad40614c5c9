"""What a run's training threads share besides the weights: the subsampling table,
the hot inner nodes (the most visited, by :func:`subtree_totals`), the tree's
paths, the settings the kernel reads, and the kernel itself, loaded. Built once a
run; the Dask engine's workers build it once and reuse it every round (building
it each round cost about 10 ms of a 300 ms round)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ..counting.vocab import keep_probabilities
from ..jit.helpers import JIT
from ..softmax.flat import FlatCodes, FlatPaths
from ..model.model import Model
from ..counting.vocab import Vocab
from ..model.word2vec_format import warm_up_writer
from ..settings import TrainSettings
from ..system.ahead import compiling_ahead, wait_for_child
from ..system.compiling import about
from ..system.memory import release_compiler_pages
from ..training.block import block_kernel, load_callees
from ..training.kinds import model_kind, model_kinds
from ..training.state import Weights, new_state
from ..trees.registry import TreeInputs, build_tree, tree_builders
from ..trees.tree import Tree
from .common import fresh_model

HOT_NODES = max(kind.hot_nodes for kind in model_kinds.values())
"""The inner nodes that every Dask worker's slice reaches (the most visited: as many
as any kind keeps private, so that each kind's are among them); a
local run's threads train their own copies of a kind's
:attr:`~hsw2v.training.kinds.ModelKind.hot_nodes` most visited and merge them every
:attr:`~hsw2v.training.kinds.ModelKind.hot_sync_words` words (the kind's
``fast_rows`` most visited every 64)."""


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
    private_words: int  # each thread's own copies of syn0[:K] (ModelKind.private_words)
    config: Any  # the kind's config (see :mod:`hsw2v.training.kinds`)
    kernel: Any  # train_block's entry point compiled for these types and the dimension


class _KernelArgs(NamedTuple):
    """What the block kernel is compiled for (its types) and runs with."""

    kind: Any
    config: Any
    keep: np.ndarray
    weights: Weights
    paths: FlatPaths | FlatCodes
    state: Any

    def kernel(self, dim: int, compile: bool = True) -> Any:
        """The block kernel for these arguments (see :func:`block_kernel`)."""
        return block_kernel(*self, dim, compile=compile)


def private_words(model: Model, s: TrainSettings) -> int:
    """How many of the most frequent words' input vectors each thread trains in rows
    of its own: the kind's :attr:`~hsw2v.training.kinds.ModelKind.private_words`
    with several threads, else none."""
    return min(model_kind(s.arch).private_words, len(model.vectors)) if s.threads > 1 else 0


def _kernel_args(model: Model, s: TrainSettings, hot_nodes: np.ndarray, hot_slot: np.ndarray
                 ) -> _KernelArgs:
    """The block kernel's arguments for training ``model`` with ``s``, with the
    private inner nodes ``hot_nodes`` (see :func:`hot_inner_nodes`)."""
    tree = model.tree
    kind = model_kind(s.arch)
    config = kind.config_of(s)._replace(sync_every=kind.hot_sync_words, fast_rows=kind.fast_rows)
    weights = Weights(model.input_matrix(), model.node_vectors, hot_nodes, hot_slot,
                      model.extra_matrices, *model.subwords)
    state = new_state(0, 0, s.window, tree.step_scratch, model.node_vectors[hot_nodes],
                      model.extra_matrices, model.vectors[:private_words(model, s)],
                      model.ngram_vectors is not None)
    return _KernelArgs(kind, config, keep_probabilities(model.vocab.counts, s.sample), weights,
                       tree.training_paths, state)


def kernel_setup(model: Model, s: TrainSettings) -> KernelSetup:
    """The :class:`KernelSetup` of training ``model`` with settings ``s``. Loads every
    kernel the run will call, then hands LLVM's pages back (see :mod:`hsw2v.system.memory`).
    The writer's kernel comes first: on a first run, this process compiles it while
    a child compiles the training kernel (:func:`first_kernel_ahead`), which this
    one then waits for and loads."""
    hot = model_kind(s.arch).hot_nodes if s.threads > 1 else 0
    args = _kernel_args(model, s, *hot_inner_nodes(model.tree, model.vocab.counts, hot))
    warm_up_writer(s.dim)
    what = compiled_words(s)
    wait_for_child(_first_kernel_key(s), what)
    with about(what):
        kernel = args.kernel(s.dim)
    release_compiler_pages()
    w = args.weights
    return KernelSetup(args.keep, w.hot_nodes, w.hot_slot, args.paths, model.tree.step_scratch,
                       private_words(model, s), args.config, kernel)


def smallest_model(s: TrainSettings) -> Model:
    """A model of three words on a tree built from counts, with settings ``s``: its
    training kernel is the one a run with ``s`` calls first (the kernel's types depend
    on the kind, its settings, the vector size and whether words have one code or
    several, not on the vocabulary): the first-pass tree of a tree learned in the
    run, else the first tree of the registry built from counts."""
    kind = model_kind(s.arch)
    if s.value("subwords"):  # (the kernel's types are those of any number of buckets)
        s = replace(s, buckets=min(s.buckets, 16))
    vocab = Vocab(["a", "b", "c"], [3, 2, 1])
    if kind.language_model:
        vocab = vocab.with_markers(1, 1)[0]
    tree = tree_builders[s.tree].first_pass or next(
        k for k, b in tree_builders.items() if b.from_counts)
    return fresh_model(vocab, build_tree(tree, TreeInputs(vocab.words, vocab.counts, s)), s)


def first_kernel(s: TrainSettings, compile: bool = True) -> Any:
    """The training kernel that a run with settings ``s`` calls first, compiled where
    numba's cache lacks it; without ``compile``, loaded, or None where the cache lacks it."""
    model = smallest_model(s)
    hot_slot = np.full(model.tree.n_leaves - 1, -1, dtype=np.int32)
    hot_slot[0] = 0
    return _kernel_args(model, s, np.zeros(1, np.int32), hot_slot).kernel(s.dim, compile)


def _first_kernel_key(s: TrainSettings) -> tuple:
    """What tells runs' first kernels apart (a one-shot tree's first pass has other
    settings than its run, but the same kernel)."""
    return "first kernel", s.arch, s.dim


@contextmanager
def first_kernel_ahead(s: TrainSettings) -> Iterator[str | None]:
    """Within the block, a forked child compiles the training kernel that a run with
    settings ``s`` calls first into numba's cache, unless the cache holds it (see
    :mod:`hsw2v.system.ahead`), while this process compiles the kernel's callees;
    where the tree is learned from vectors, a second child compiles the kernels of
    the tree's build. :func:`kernel_setup` waits for the first child, then loads the
    kernel; :func:`wait_for_tree_kernels` for the second. Yields what compiles, in
    words, or None where the cache holds the first kernel."""
    if first_kernel(s, compile=False) is not None:
        yield None
        return
    builder = tree_builders.get(s.tree)
    with compiling_ahead(_first_kernel_key(s), lambda: first_kernel(s), load_callees):
        if builder is None or builder.compile_kernels is None:
            yield compiled_words(s)
            return
        with compiling_ahead(_tree_kernels_key(s),
                             lambda: builder.compile_kernels(smallest_model(s))):
            yield compiled_words(s, s.tree)


def compiled_words(s: TrainSettings, tree: str | None = None) -> str:
    """What a run with settings ``s`` compiles, in words: its training kernel, and
    the kernels of ``tree``'s build where one is learned in the run."""
    trees = f" and the {tree} tree's kernels" if tree else ""
    return f"the {s.arch} training kernel{trees} for dim {s.dim}"


def _tree_kernels_key(s: TrainSettings) -> tuple:
    """What tells apart the kernels of the builds of trees learned from vectors."""
    return "tree kernels", s.arch, s.tree, s.dim


def wait_for_tree_kernels(s: TrainSettings) -> None:
    """Wait for the child of :func:`first_kernel_ahead` that compiles the kernels of
    the tree's build, if one does (a first run), so that they load from the cache."""
    wait_for_child(_tree_kernels_key(s), f"the {s.tree} tree's kernels for dim {s.dim}")
