"""A round of data-parallel training (:mod:`hsw2v.distributed.driver`), as the workers
run it: each trains a replica of the global weights on its slice and returns the
rows it changed, and every worker moves its resident copy of the global weights
by the round's changes.

Every task is a pure function of its inputs: the weights at an *anchor* (a
value Dask holds), the changes of the rounds since, the slice, the range of the
learning rate, and a seed. The resident copy only saves replaying the changes:
a worker without it (new, or replacing a lost one) builds it from the anchor,
to the same bits.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ..counting.corpus import WordTable
from ..counting.vocab import Vocab, keep_probabilities
from ..model.model import Model
from ..runs.checkpoint import Position
from ..runs.kernel_setup import (HOT_NODES, KernelSetup, hot_inner_nodes, kernel_setup,
                                 subtree_totals)
from ..runs.common import initial_weights
from ..runs.epochs import run_epochs
from ..settings import TrainSettings
from ..text.reader import Slice, iter_blocks, slice_block_bytes
from ..training.kinds import model_kind
from ..trees.tree import Tree
from .quantize import (
    STEP_TYPE,
    add_quantized_rows,
    quantized_differences,
    take_rows,
)
from .spool import SliceSpool


@dataclass
class Job:
    """What every ``train-round`` task shares (sent once): the vocabulary, tree
    and settings (``threads``: per worker), and the words over which the learning
    rate falls. ``token`` names the run, for the workers' cached word tables."""

    token: str
    vocab: Vocab
    tree: Tree
    settings: TrainSettings
    schedule: int
    visits: tuple[np.ndarray, np.ndarray]  # per word trained, of each syn0 and syn1 row


def row_visits(vocab: Vocab, tree: Tree, s: TrainSettings) -> tuple[np.ndarray, np.ndarray]:
    """How often training updates each word vector and each inner-node vector, per
    word of the corpus trained (after subsampling): a word's vector once per
    context it is in (about window + 1 of them); a node once per example whose
    target lies below it (skip-gram: one example per context word)."""
    kept = vocab.counts * keep_probabilities(vocab.counts, s.sample) / vocab.total
    below = np.empty(tree.n_leaves - 1, dtype=np.float64)
    subtree_totals(tree.children, tree.inner_order, kept[tree.leaf_words].astype(np.float64), below)
    pairs = s.window + 1
    return kept * pairs, below * (pairs if model_kind(s.arch).examples_per_context_word else 1)


class Anchor(NamedTuple):
    """The global weights at the start of round ``round`` of the run (``extra``: the
    model kind's other matrices, in its order)."""

    round: int
    syn0: np.ndarray
    syn1: np.ndarray
    extra: tuple = ()

    def copy(self) -> Anchor:
        return Anchor(self.round, self.syn0.copy(), self.syn1.copy(),
                      tuple(m.copy() for m in self.extra))


class Change(NamedTuple):
    """What replicas changed in a round: the rows of each matrix they moved
    (ascending) and the summed moves, each row as int8 steps of its own scale
    (:func:`hsw2v.distributed.quantize.quantized_differences`: within 1/254 of the row's largest
    move, in a quarter of the bytes of float32); the round's words, loss sum, examples, and
    the number of replicas. The model kind's other matrices (``extra``) change
    whole: their summed moves, as float32."""

    rows0: np.ndarray
    syn0: np.ndarray  # int8 (len(rows0), D)
    scale0: np.ndarray  # float32 (len(rows0))
    rows1: np.ndarray
    syn1: np.ndarray
    scale1: np.ndarray
    words: int
    loss_sum: float
    examples: int
    replicas: int = 1
    extra: tuple = ()


def first_weights(job: Job) -> Anchor:
    """The starting weights, as a local run with the same seed has them."""
    s = job.settings
    extra = model_kind(s.arch).extra_weights(len(job.vocab), s.dim, s)
    return Anchor(0, *initial_weights(len(job.vocab), job.tree.n_leaves - 1, s.dim, s.seed,
                                     s.node_bias), tuple(extra.values()))


class Reach(NamedTuple):
    """What training a word can read, per run: CSR maps from words to the rows of
    the word vectors (the word's own) and of the inner-node vectors (the nodes on
    its codes' paths), and the hot inner nodes that threads copy when they start."""

    words: tuple[np.ndarray, np.ndarray]
    nodes: tuple[np.ndarray, np.ndarray]
    hot: np.ndarray


def reach(vocab: Vocab, tree: Tree) -> Reach:
    """The :class:`Reach` of a run's words."""
    v = tree.n_words
    own = (np.arange(v + 1, dtype=np.int64), np.arange(v, dtype=np.int32))
    lo = tree.path_offsets[tree.leaves]  # each code's path, word by word
    length = tree.path_offsets[tree.leaves + 1] - lo
    ends = np.cumsum(length)
    at = np.arange(ends[-1]) - np.repeat(ends - length - lo, length)
    nodes = (np.concatenate([[0], ends])[tree.leaf_offsets], tree.path_nodes[at])
    return Reach(own, nodes, hot_inner_nodes(tree, vocab.counts, HOT_NODES)[0])


class Run(NamedTuple):
    """What a worker builds once per run, not per round."""

    table: WordTable
    reach: Reach
    setup: KernelSetup
    spool: SliceSpool | None

    def close(self) -> None:
        """Delete the run's spool, if any."""
        if self.spool:
            self.spool.close()


_RUNS: dict[str, Run] = {}
"""The word table and :class:`Reach` of the run a worker trains."""
_RESIDENT: dict[str, Anchor] = {}
"""The worker's copy of the run's global weights, moved on in place round by round."""
_REPLICAS: dict[str, tuple[np.ndarray, np.ndarray]] = {}
"""Arrays for a replica, kept between rounds."""
_LOCK = threading.Lock()

_POOL: list = []
"""(threads, ThreadPoolExecutor): the worker's threads for work on rows between rounds
(the most any run has asked for)."""
_POOL_LOCK = threading.Lock()
SPLIT_ROWS = 4096
"""Work on fewer rows than this stays on the task's thread."""


def _in_spans(threads: int, n: int, work: Callable[[int, int], object]) -> list[tuple[int, object]]:
    """``work(lo, hi)`` on ``threads`` consecutive spans of ``range(n)`` at once (the
    kernels release the GIL; a worker's training threads are idle then): each
    span's start and result, in order. One span, on this thread, for one thread or
    few rows. Rows are independent, so the result does not depend on the split."""
    if threads == 1 or n < SPLIT_ROWS:
        return [(0, work(0, n))]
    with _POOL_LOCK:  # (a pool dropped for a larger one ends its threads once unused)
        if not _POOL or _POOL[0] < threads:
            _POOL[:] = [threads, ThreadPoolExecutor(threads, thread_name_prefix="hsw2v-rows")]
        pool = _POOL[1]
    spans = [(n * k // threads, n * (k + 1) // threads) for k in range(threads)]
    return list(zip((lo for lo, _ in spans), pool.map(lambda span: work(*span), spans)))


MEAN_VISITS = 2000
"""A row that the replicas of a round update about this many times in all moves by
about the midpoint of their summed and their mean change (see :func:`_apply`)."""


def _apply(weights: Anchor, changes: list[Change], job: Job) -> None:
    """Move the global weights by a round's changes, in place. Each row moves by the
    replicas' summed change times ``1/P + (1 - 1/P) / (1 + P·v / MEAN_VISITS)``,
    where P is the number of replicas and v the number of times each updated the
    row, as expected from the word counts. A row updated a few times takes the sum
    of the steps, as a local run's Hogwild threads add theirs; a row updated
    thousands of times (frequent words, the nodes near the root) takes the mean of
    the replicas' changes, each an estimate of one move made from the same start:
    their sum overshoots (with 4 workers, CBOW diverged when only rows past 10,000
    updates took the mean). The kind's other matrices take the replicas' mean change."""
    syn0, syn1 = weights.syn0, weights.syn1
    p, words = sum(ch.replicas for ch in changes), sum(ch.words for ch in changes)
    for ch in changes:
        for matrix, moved in zip(weights.extra, ch.extra):
            matrix += moved / np.float32(p)
        for w, rows, steps, scale, visits in ((syn0, *ch[0:3], job.visits[0]),
                                              (syn1, *ch[3:6], job.visits[1])):
            together = visits[rows] * words  # updates of the row by all the replicas
            share = (1 / p + (1 - 1 / p) / (1 + together / MEAN_VISITS)).astype(np.float32) * scale
            _in_spans(job.settings.threads, len(rows), lambda lo, hi, w=w, rows=rows, steps=steps,
                      share=share: add_quantized_rows(w, rows[lo:hi], steps[lo:hi], share[lo:hi]))


def weights_at(job: Job, anchor: Anchor, history: list[list[Change]]) -> Anchor:
    """The global weights after the rounds of ``history`` (each round's changes)
    from ``anchor``: the worker's resident copy, moved on in place if it stands at a
    round in between, else built from the anchor. Read it, never write it."""
    r = anchor.round + len(history)
    with _LOCK:
        held = _RESIDENT.get(job.token)
        keep = held is None or held.round <= r  # (an older round, for a rerun task, is built aside)
        if held is None or not anchor.round <= held.round <= r:
            held = anchor.copy()
        for changes in history[held.round - anchor.round:]:
            _apply(held, changes, job)
        held = held._replace(round=r)
        if keep:
            _RESIDENT.clear()
            _RESIDENT[job.token] = held
    return held


def anchor_at(job: Job, anchor: Anchor, history: list[list[Change]]) -> Anchor:
    """The global weights after ``history``, as a value of their own (a new anchor)."""
    return weights_at(job, anchor, history).copy()


DENSE_WORDS = 4
"""A slice of more than this many words per vocabulary word copies and compares
the whole weights: it reads most rows (CBOW's 1M-word rounds, 63% of them on
enwiki-17m), and whole matrices copy faster than most of their rows one by one."""


class ReplicaBlocks:
    """A slice's blocks, as :func:`hsw2v.runs.epochs.run_epochs` takes a spool's; before
    each block trains, the rows it can read (see :class:`Reach`) are copied from the
    start weights into the replica, each row once. The replica's other rows are
    left from earlier rounds and never read: a round copies, and then compares,
    only the rows it can have changed (for a 125,000-word skip-gram round on
    enwiki-17m, 18% of the word vectors and 38% of the node vectors). With
    ``dense``, every row is copied at once instead. A slice is read in blocks for
    each of ``threads`` (:func:`hsw2v.text.reader.slice_block_bytes`), which also share
    the copying and comparing."""

    def __init__(self, part: str | Slice | list, table: WordTable, reach: Reach, start: Anchor,
                 replica: tuple[np.ndarray, np.ndarray], dense: bool = False,
                 spool: SliceSpool | None = None, again: bool = False, threads: int = 1):
        self.part, self.table, self.reach, self.start, self.replica = part, table, reach, start, replica
        self.dense, self.again, self.threads = dense, again, threads
        self.spool = spool if isinstance(part, str | Slice) else None
        if dense:
            for dst, src in zip(replica[:2], (start.syn0, start.syn1)):
                _in_spans(threads, len(src), lambda lo, hi, dst=dst, src=src:
                          np.copyto(dst[lo:hi], src[lo:hi]))
            self.rows = (np.arange(len(start.syn0), dtype=np.int32),
                         np.arange(len(start.syn1), dtype=np.int32))
            self.taken = [len(start.syn0), len(start.syn1)]
            return
        self.seen = (np.zeros(len(start.syn0), dtype=np.bool_), np.zeros(len(start.syn1), dtype=np.bool_))
        self.rows = (np.empty(len(start.syn0), dtype=np.int32), np.empty(len(start.syn1), dtype=np.int32))
        hot = reach.hot  # (read by every thread at its start)
        self.seen[1][hot] = True
        self.rows[1][:len(hot)] = hot
        replica[1][hot] = start.syn1[hot]
        self.taken = [0, len(hot)]

    def take(self, ids: np.ndarray) -> None:
        """Copy the rows the words ``ids`` can read that no block before has."""
        if self.dense:
            return
        (syn0, syn1), (seen0, seen1), (rows0, rows1) = self.replica[:2], self.seen, self.rows
        before = self.taken[0]
        self.taken[0] = take_rows(ids, *self.reach.words, self.start.syn0, syn0, seen0, rows0, before)
        self.taken[1] = take_rows(rows0[before:self.taken[0]], *self.reach.nodes, self.start.syn1,
                                  syn1, seen1, rows1, self.taken[1])  # (the words new here)

    def warm_up(self) -> None:
        """Load the encoding and copying kernels before training starts."""
        self.table.encode(b"")
        self.take(np.empty(0, dtype=np.int32))

    def blocks(self, type_ids=None, line_end: int = -1):
        """(word ids, sentence ends) of each block, its rows copied first: from the
        spool if it holds the slice, else from the text (kept in the spool if the
        slice trains ``again``). The ids come encoded by the vocabulary's table,
        ``</s>`` included: ``type_ids`` and ``line_end`` are the token spool's."""
        def text():
            return map(self.table.encode, iter_blocks(self.part, slice_block_bytes(self.part, self.threads)))

        for ids, ends in self.spool.blocks(self.part, text, self.again) if self.spool else text():
            self.take(ids)
            yield ids, ends

    def change(self, words: int, loss_sum: float, examples: int) -> Change:
        """The rows the replica changed, and by how much."""
        return Change(*_moved(self.replica[0], self.start.syn0, self.rows[0][:self.taken[0]],
                              self.threads),
                      *_moved(self.replica[1], self.start.syn1, self.rows[1][:self.taken[1]],
                              self.threads),
                      words, loss_sum, examples,
                      extra=tuple(new - old for new, old in zip(self.replica[2:], self.start.extra)))


def _moved(new: np.ndarray, old: np.ndarray, candidates: np.ndarray, threads: int = 1
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows among ``candidates`` in which ``new`` differs from ``old``, ascending,
    and ``new - old`` there as int8 steps and each row's scale (on ``threads`` threads)."""
    candidates = np.sort(candidates)
    rows = np.empty(len(candidates), dtype=np.int32)
    steps = np.empty((len(candidates), new.shape[1]), dtype=STEP_TYPE)
    scale = np.empty(len(candidates), dtype=np.float32)
    found = _in_spans(threads, len(candidates), lambda lo, hi: quantized_differences(
        new, old, candidates[lo:hi], rows[lo:hi], steps[lo:hi], scale[lo:hi]))
    n = 0
    for lo, k in found:  # each span's rows moved down after the previous span's
        if lo != n:
            rows[n:n + k], steps[n:n + k], scale[n:n + k] = rows[lo:lo + k], steps[lo:lo + k], scale[lo:lo + k]
        n += k
    return rows[:n], steps[:n], scale[:n]


def train_slice(job: Job, anchor: Anchor, history: list[list[Change]], part: str | Slice | list,
                epoch: int, words_before: int, words: int, index: int) -> Change:
    """Train a replica of the global weights (``anchor`` moved on by ``history``) on
    slice number ``index`` of the epoch, with the learning rate of words
    ``words_before..words_before+words`` of the run; what it changed."""
    s = replace(job.settings, epochs=epoch + 1)
    start = weights_at(job, anchor, history)
    with _LOCK:  # a replica's arrays, reused from round to round (one a task)
        replica = _REPLICAS.pop(job.token, None) or (np.zeros_like(start.syn0),
                                                     np.zeros_like(start.syn1),
                                                     *(np.zeros_like(m) for m in start.extra))
    for dst, src in zip(replica[2:], start.extra):  # (a kind's other matrices train whole)
        np.copyto(dst, src)
    names = model_kind(s.arch).matrices(len(job.vocab), s.dim, s)
    model = Model(job.vocab, job.tree, replica[0], replica[1], s,
                  extra=dict(zip(names, replica[2:])))
    run = _RUNS.get(job.token)
    if run is None:  # (a worker running two tasks at once may build it twice)
        table = WordTable.of_vocab(job.vocab)
        table.encode(b"")  # (loaded before kernel_setup hands LLVM's pages back)
        spool = SliceSpool(len(job.vocab)) if s.spool and job.settings.epochs > 1 else None
        if spool:
            spool.warm_up()
        run = Run(table, reach(job.vocab, job.tree), kernel_setup(model, s), spool)
        for dropped in _RUNS.values():  # (a task still reading its spool reads the text instead)
            dropped.close()
        _RUNS.clear()
        _RUNS[job.token] = run
    seeds = np.random.SeedSequence([s.seed, epoch, index]).generate_state(s.threads, np.uint64)
    position = Position(max(words, 1), exact=False, epoch=epoch, words=words_before,
                        loss_sum=[0.0] * (epoch + 1), examples=[0] * (epoch + 1),
                        rng=[int(x) for x in seeds])
    blocks = ReplicaBlocks(part, run.table, run.reach, start, replica,
                           dense=words > DENSE_WORDS * len(job.vocab), spool=run.spool,
                           again=epoch + 1 < job.settings.epochs, threads=s.threads)
    run_epochs(part, model, s, False, position, spool=blocks, schedule=job.schedule,
               setup=run.setup, whole_run=False)
    change = blocks.change(position.words - words_before, position.loss_sum[epoch],
                           position.examples[epoch])
    with _LOCK:
        _REPLICAS.clear()
        _REPLICAS[job.token] = replica
    return change


def warm_up(job: Job) -> None:
    """Build the word table and load the kernels (a slice of nothing), so that the
    first round does not wait for them."""
    train_slice(job, first_weights(job), [], [], 0, 0, 1, 0)
    _RESIDENT.clear()
    _REPLICAS.clear()


def release(token: str) -> None:
    """Drop what this worker keeps for run ``token``: its copy of the weights, the
    replica's arrays, the word table and the spool (once the run has ended)."""
    with _LOCK:
        for kept in (_RESIDENT, _REPLICAS):
            kept.pop(token, None)
        run = _RUNS.pop(token, None)
    if run:
        run.close()


def _sum_rows(ra: np.ndarray, steps_a: np.ndarray, scale_a: np.ndarray, rb: np.ndarray,
              steps_b: np.ndarray, scale_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = np.union1d(ra, rb).astype(np.int32)
    total = np.zeros((len(rows), steps_a.shape[1]), dtype=np.float32)
    add_quantized_rows(total, np.searchsorted(rows, ra).astype(np.int32), steps_a, scale_a)
    add_quantized_rows(total, np.searchsorted(rows, rb).astype(np.int32), steps_b, scale_b)
    at, steps, scale = _moved(total, np.zeros_like(total), np.arange(len(rows), dtype=np.int32))
    return rows[at], steps, scale


def combine(a: Change, b: Change) -> Change:
    """Two replicas' changes as one (sums, row by row, quantized again)."""
    return Change(*_sum_rows(*a[0:3], *b[0:3]), *_sum_rows(*a[3:6], *b[3:6]), a.words + b.words,
                  a.loss_sum + b.loss_sum, a.examples + b.examples, a.replicas + b.replicas,
                  tuple(x + y for x, y in zip(a.extra, b.extra)))


def change_totals(ch: Change) -> tuple[int, float, int, int]:
    """A change's words, loss sum, examples and rows (the client's only per-round data)."""
    return ch.words, ch.loss_sum, ch.examples, len(ch.rows0) + len(ch.rows1)
