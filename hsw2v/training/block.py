"""The block kernel: one sentence walk (:mod:`hsw2v.training.walk`) whose examples go
to the centre step of the model kind, as in fastText, where ``cbow()`` and
``skipgram()`` differ only in what they pass to ``Model::update``.

A block of word ids is trained with word2vec.c's semantics: frequent-word
subsampling, a randomly shrunk window per position, and a learning rate falling
linearly across the block. Threads share :class:`~hsw2v.training.state.Weights`
without locks (Hogwild); each owns a :class:`~hsw2v.training.state.State`: its
generator and scratch buffers, and private copies of the inner nodes near the
root, merged into the shared ones every
:attr:`~hsw2v.training.kinds.ModelKind.hot_sync_words` words (256 for CBOW, 2,048
for the others); the hottest of them (CBOW's 32), and LBL's matrices and its
commonest words' input vectors, every :data:`FAST_SYNC_WORDS` (64).

The kernels run without numba's reference counts (:data:`hsw2v.jit.helpers.KERNEL`).
Each kind has a block kernel of its own (:func:`block_kernel_of`), a copy of
:func:`_train_block` whose walk holds the kind's centre step and context words,
inlined by numba before typing (see :mod:`hsw2v.training.kinds`);
:func:`block_kernel` returns it compiled.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import literally, njit
from numba.extending import overload

from ..softmax.step import step_for
from ..softmax.flat import FlatCodes
from ..jit.helpers import KERNEL, for_dim, prefetch_row, specialised, with_globals
from .kinds import ModelKind, kind_of_config
from .state import State, Weights
from .kind_dispatch import centre_step  # (a stand-in in the templates: see block_kernel_of)
from .ring import flush_ring
from .walk import kind_context_words, make_walk


@njit(**KERNEL)
def sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base):
    """Add this thread's changes to its private copies of the hot inner nodes to the
    shared vectors, then refresh the copies from them.

    The nodes near the root lie on almost every path; when threads share them, every
    update moves their cache lines between cores. Private copies, merged every 256
    words in CBOW (2,048 in the other kinds), keep CBOW scaling with threads (local
    SGD for those rows).
    A function of its own, not inlined: the kernel calls it at four places.
    """
    dim = syn1.shape[1]
    for k in range(len(hot_nodes)):
        row = syn1[hot_nodes[k]]
        for d in range(dim):
            row[d] += hot_rows[k, d] - hot_base[k, d]
            hot_rows[k, d] = row[d]
            hot_base[k, d] = row[d]


@njit(**KERNEL)
def sync_word_rows(syn0, word_rows, word_base):
    """:func:`sync_hot_rows` for a thread's private copies of ``syn0[:K]``, the input
    vectors of the K most frequent words (a vocabulary is in count order). A kind
    that neither subsamples nor shrinks its window (LBL) reads and writes the rows
    of the commonest words at nearly every word; shared, each write moves their
    cache lines between cores (the kernels' benchmarks page)."""
    dim = syn0.shape[1]
    for k in range(len(word_rows)):
        row = syn0[k]
        for d in range(dim):
            row[d] += word_rows[k, d] - word_base[k, d]
            word_rows[k, d] = row[d]
            word_base[k, d] = row[d]


def load_callees() -> None:
    """Load (or compile) the functions of their own that every block kernel calls,
    for its types: what a process can do while another compiles a kernel that
    calls them (see :mod:`hsw2v.system.ahead`), which then loads them from numba's cache."""
    rows = np.zeros((1, 1), dtype=np.float32)
    sync_hot_rows(rows, np.zeros(0, dtype=np.int32), rows, rows)
    sync_word_rows(rows, rows[:0], rows[:0])


FAST_SYNC_WORDS = 64
"""A thread merges its copies of the kind's matrices, of the kind's
``config.fast_rows`` hottest inner nodes and of its private word rows every this
many words (a divisor of the hot rows' interval). Every prediction reads the matrices, and nearly every one the
nodes nearest the root, so they may go stale less long than the other hot nodes:
merged every 2,048 words, LBL's held-out perplexity rose by about 10, and CBOW's
training loss by 0.005 nats (the kernels' benchmarks page)."""


def sync_matrices(shared, private, base):
    """:func:`sync_hot_rows` for the kind's 2-D matrices (tuples of them): add the
    thread's changes to its ``private`` copies to the ``shared`` ones, then refresh
    the copies. A stand-in: each block kernel gets :func:`sync_each_matrix`, or
    :func:`no_matrices` for a kind with none (:func:`block_kernel_of`); numba
    callers elsewhere (tests) get the overload below."""
    raise NotImplementedError("numba only")


@njit(**KERNEL, inline="always")
def sync_each_matrix(shared, private, base):
    """:func:`sync_matrices` for a kind with matrices."""
    for k in range(len(shared)):
        m, mine, seen = shared[k], private[k], base[k]
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                m[i, j] += mine[i, j] - seen[i, j]
                mine[i, j] = m[i, j]
                seen[i, j] = m[i, j]


@njit(**KERNEL, inline="always")
def no_matrices(shared, private, base):
    """:func:`sync_matrices` for a kind with none. Chosen in Python, not by an
    ``inline="always"`` overload: numba inlined such an overload's empty body into
    a kernel that also reads a tuple built in it (:class:`BlockTraining`) and then
    read that tuple's arrays out of bounds (CBOW with subwords)."""
    return None


@overload(sync_matrices, jit_options=KERNEL)
def _sync_matrices(shared, private, base):
    if len(shared) == 0:
        return lambda shared, private, base: None
    return lambda shared, private, base: sync_each_matrix(shared, private, base)


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


_NO_INTS = np.zeros(0, np.int32)
_NO_RING = np.zeros((2, 0, 1), np.float32)
_NO_POSITIONS = np.zeros(0, np.int64)


class BlockTraining(NamedTuple):
    """The walk's visitor when training, and what a kind's centre step reads: the
    kind's config, the weights (``extra``: the kind's own matrices as this thread
    trains them, see :attr:`hsw2v.training.kinds.ModelKind.matrices` and
    :class:`~hsw2v.training.state.State`), the thread's scratch, and the block's
    learning rate (``alpha0`` at its first word, falling by ``slope`` a word)."""

    config: Any
    syn0: np.ndarray
    syn1: np.ndarray
    hot_nodes: np.ndarray
    hot_slot: np.ndarray
    paths: Any
    rows: np.ndarray
    pairs: np.ndarray
    path: np.ndarray
    hot_rows: np.ndarray
    hot_base: np.ndarray
    word_rows: np.ndarray  # the thread's copies of syn0[:K] (State.word_rows)
    word_base: np.ndarray
    alpha0: float
    slope: float
    extra: tuple
    shared_extra: tuple  # the kind's matrices that every thread trains …
    extra_base: tuple  # … and this thread's copies' values at the last merge (if private)
    sub_offsets: np.ndarray = _NO_INTS  # with subwords, each word's rows of syn0 (Weights)
    sub_rows: np.ndarray = _NO_INTS
    sentence: np.ndarray = _NO_INTS  # the sentence's words after subsampling (State.sentence)
    ring: np.ndarray = _NO_RING  # with subwords, the window's sums and pending steps (State.ring)
    ring_pos: np.ndarray = _NO_POSITIONS
    ring_word: np.ndarray = _NO_INTS


@njit(**KERNEL, inline="always")
def merge_due(v, since_sync, sync_every, fast_rows):
    """Count a word and merge what is due after it in the visitor ``v``'s rows: every
    private hot row each ``sync_every`` words, the first ``fast_rows`` (the hottest,
    see :func:`hsw2v.runs.kernel_setup.hot_inner_nodes`), the kind's matrices and
    the private word rows each :data:`FAST_SYNC_WORDS`. Returns the words since the
    last merge of every row."""
    syn1, hot_nodes, hot_rows, hot_base = v.syn1, v.hot_nodes, v.hot_rows, v.hot_base
    since_sync += 1
    if since_sync == sync_every:
        sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
        since_sync = 0
    if since_sync % FAST_SYNC_WORDS == 0 and len(hot_nodes) > 0:
        fast = min(fast_rows, len(hot_nodes))
        if since_sync > 0 and fast > 0:
            sync_hot_rows(syn1, hot_nodes[:fast], hot_rows[:fast], hot_base[:fast])
        sync_matrices(v.shared_extra, v.extra, v.extra_base)
    if since_sync % FAST_SYNC_WORDS == 0 and len(v.word_rows) > 0:
        sync_word_rows(v.syn0, v.word_rows, v.word_base)
    return since_sync


@njit(**KERNEL, inline="always")
def prefetch_subwords(sen, i, m, window, syn0, offsets, sub_rows):
    """With subwords, start loading the rows the next example reads that the cache
    may not hold: those of the word that enters the window (CBOW's context) and of
    the next word (skip-gram's centre). Each word has a dozen or more rows, spread
    over the n-gram buckets: without it, a step waited on memory for most of them."""
    for j in (i + 1, i + 1 + window):
        if j < m:
            w = sen[j]
            for k in range(offsets[w], offsets[w + 1]):
                prefetch_row(syn0, sub_rows[k])


@njit(**KERNEL, inline="always")
def _before_training(v, sen, i, m, dim, since_sync):
    """Count the word (merging what is due, :func:`merge_due`) and prefetch what the
    next example needs. Returns the words since the last merge."""
    since_sync = merge_due(v, since_sync, v.config.sync_every, v.config.fast_rows)
    prefetch_next(sen, i, m, v.config.window, v.syn0, v.syn1, v.hot_slot, v.paths)
    if len(v.sub_offsets) > 0:
        if i == 0:  # (a new sentence: its positions start again at 0)
            flush_ring(v.syn0, v.sub_offsets, v.sub_rows, v.ring[1], v.ring_pos, v.ring_word, dim)
        prefetch_subwords(sen, i, m, v.config.window, v.syn0, v.sub_offsets, v.sub_rows)
    return since_sync


def _train_example(v, target, ctx, n_ctx, position, dim):
    """The kind's centre step at the learning rate of ``position`` (a template:
    :func:`block_kernel_of` puts the kind's ``centre`` in ``centre_step``'s place)."""
    alpha = np.float32(v.alpha0 + v.slope * position)
    return centre_step(v, target, ctx, n_ctx, alpha, dim)


_walk = None  # a stand-in in _train_block's template: block_kernel_of puts the kind's walk here


def _train_block(ids, sent_ends, n_sents, alpha0, alpha1, keep_prob, weights, paths, config,
                 state, dim):
    """Train on one block: ``ids`` split into sentences ending at ``sent_ends[:n_sents]``.

    Each example of the walk (subsampling, a randomly shrunk window) goes to the
    centre step of ``config``'s kind. The learning rate falls linearly from
    ``alpha0`` at the block's first word to ``alpha1`` after its last. The hot inner
    nodes are trained in the thread's private rows, merged into ``weights.syn1``
    every ``config.sync_every`` words and at the end (pass no hot nodes to train
    ``syn1`` directly). ``dim`` must equal the vectors' width: a compile-time
    constant, so numba compiles (and caches) a version for each, with the loops
    over ``dim`` unrolled. So is whether words may have several codes, from the
    type of ``paths`` (:attr:`hsw2v.trees.tree.Tree.training_paths`): with a
    :class:`~hsw2v.softmax.flat.FlatPaths`, no trace of the several-codes steps.
    Returns (sum of −log P, number of examples): skip-gram has one example per
    (centre, context) pair, CBOW one per centre word.
    """
    literally(dim)
    syn0, syn1, hot_nodes, hot_slot, shared_extra, sub_offsets, sub_rows = weights
    (rng, sen, sen_pos, ctx, rows, pairs, path, hot_rows, hot_base, extra, extra_base, word_rows,
     word_base, ring, ring_pos, ring_word) = state
    n_words = sent_ends[n_sents - 1] if n_sents > 0 else 0
    slope = (alpha1 - alpha0) / max(n_words, 1)
    private = len(hot_nodes) > 0
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    if private:
        sync_matrices(shared_extra, extra, extra_base)
    sync_word_rows(syn0, word_rows, word_base)
    visitor = BlockTraining(config, syn0, syn1, hot_nodes, hot_slot, paths, rows, pairs, path,
                            hot_rows, hot_base, word_rows, word_base, alpha0, slope, extra,
                            shared_extra, extra_base, sub_offsets, sub_rows, sen, ring, ring_pos,
                            ring_word)
    loss, n_examples, r = _walk(ids, sent_ends, n_sents, keep_prob, config.window, True,
                                rng[0], sen, sen_pos, ctx, visitor, dim)
    flush_ring(syn0, sub_offsets, sub_rows, ring[1], ring_pos, ring_word, dim)
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    if private:
        sync_matrices(shared_extra, extra, extra_base)
    sync_word_rows(syn0, word_rows, word_base)
    rng[0] = r
    return loss, n_examples


_KERNELS: dict[tuple[str, bool, bool, bool, bool], Any] = {}


def centre_of(kind: ModelKind, codes: bool = False, bias: bool = False,
              subwords: bool = False) -> Any:
    """``kind``'s centre step (an ``inline="always"`` numba function; with
    ``subwords``, its ``centre_subwords``, whose input vectors are the means of
    each word's rows) with the SGD
    step for paths with several codes a word or one, and for node vectors with a
    bias column or without (:func:`hsw2v.softmax.step.step_for`), in place of
    :func:`hsw2v.softmax.step.target_step`; and ``bias`` as the steps' own
    :data:`~hsw2v.softmax.step.NODE_BIAS`."""
    steps = kind.steps()
    centre = steps.centre_subwords if subwords else steps.centre
    return specialised(centre, target_step=step_for(codes, bias, kind.edge), NODE_BIAS=bias)


def block_kernel_of(kind: ModelKind, codes: bool = False, bias: bool = False,
                    subwords: bool = False, matrices: bool = True) -> Any:
    """The block kernel (a numba dispatcher, see :func:`_train_block`) of ``kind``
    for paths with several codes a word (:class:`~hsw2v.softmax.flat.FlatCodes`) or one
    (:class:`~hsw2v.softmax.flat.FlatPaths`), and for node vectors with a bias column or
    without (``bias``): its centre step, with the SGD step those paths need
    (:func:`hsw2v.softmax.step.step_for`), and its context words, inlined into one walk,
    with nothing of the other kinds or of the other case of ``bias``. Made once;
    numba caches each of its compilations (the argument types tell the variants of
    ``codes`` apart, the name those of ``bias`` and ``subwords``: a kind's
    ``centre_subwords``, for input rows given as
    :attr:`~hsw2v.training.state.Weights.sub_rows`)."""
    key = (kind.module, codes, bias, subwords, matrices)
    if key not in _KERNELS:
        example = njit(**KERNEL, inline="always")(with_globals(
            _train_example, centre_step=centre_of(kind, codes, bias, subwords)))
        steps = kind.steps()
        context = (getattr(steps, "subword_context", None) if subwords else None) or \
            kind_context_words(steps)
        sync = sync_each_matrix if matrices else no_matrices
        walk = make_walk(example, specialised(_before_training, sync_matrices=sync), context)
        block = with_globals(_train_block, _walk=walk, sync_matrices=sync)
        if bias:  # (numba names its cache after the function; the arguments' types are alike)
            block.__qualname__ += "_node_bias"
        if subwords:
            block.__qualname__ += "_subwords"
        _KERNELS[key] = njit(**KERNEL)(block)
    return _KERNELS[key]


def train_block(ids, sent_ends, n_sents, alpha0, alpha1, keep_prob, weights, paths, config,
                state, dim):
    """:func:`_train_block` for the kind of ``config``, called from Python (tests)."""
    kernel = block_kernel_of(kind_of_config(type(config)), isinstance(paths, FlatCodes),
                             weights.syn1.shape[1] > dim, len(weights.sub_offsets) > 0,
                             len(weights.extra) > 0)
    return kernel(ids, sent_ends, n_sents, alpha0, alpha1, keep_prob, weights, paths, config,
                  state, dim)


def block_kernel(kind: ModelKind, config: Any, keep: np.ndarray, weights: Weights, paths: Any,
                 state: State, dim: int, compile: bool = True) -> Any:
    """The block kernel of ``kind`` compiled for the type of ``config``, these
    arrays' types and vector size ``dim``: the entry point to call with arguments
    of the same types (see :func:`hsw2v.jit.helpers.for_dim`). Without ``compile``,
    None unless numba's cache holds it."""
    if not isinstance(config, kind.steps().Config):
        raise TypeError(f"a {kind.name} kernel takes its own Config")
    kernel = block_kernel_of(kind, isinstance(paths, FlatCodes), weights.syn1.shape[1] > dim,
                             len(weights.sub_offsets) > 0, len(weights.extra) > 0)
    return for_dim(kernel, np.empty(0, np.int32),
                   np.empty(0, np.int64), 0, 0.0, 0.0, keep, weights, paths, config, state, dim,
                   compile=compile)
