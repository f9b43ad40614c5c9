"""Training on a Dask cluster (``hsw2v train --engine dask``): data-parallel,
synchronous rounds with parameter averaging.

- **Shards.** The corpus's files (or URLs); workers read them themselves, and no
  text passes through the client.
- **Counting.** One ``count-shard`` task per file (the bounded, exact counting of
  :func:`hsw2v.counting.corpus.count_words`), merged by a binary tree of ``merge-counts``
  tasks on the workers; the client receives only the vocabulary, and builds the
  tree and sends both (see :func:`on_cluster`).
- **Training.** Each epoch's text is cut into slices of about ``round_words``
  words (byte ranges of uncompressed local files; a compressed file or a URL is
  one slice). A round gives each worker one slice: ``train-round`` trains a
  replica of the global weights with the local trainer's threads and returns the
  rows it changed (see :mod:`hsw2v.distributed.rounds`). Each worker keeps its own copy of
  the global weights and moves it by the round's changes before the next, so
  only changed rows travel (as int8 steps of a scale per row), worker to
  worker: up to ``DIRECT_EXCHANGE`` replicas,
  every task takes each replica's change; past that, a tree of ``combine`` tasks
  sums them first. Rows the replicas all updated many times move by about their
  mean change, the others by the sum (see :func:`hsw2v.distributed.rounds._apply`). With
  ``spool`` and more than one epoch, each worker keeps the word ids of the
  slices it trains (:class:`hsw2v.distributed.spool.SliceSpool`) for their later epochs.
- **Anchors.** The weights exist as a Dask value only at an *anchor*, made when
  the changes since the last one add up to ``ANCHOR_BYTES`` times the weights'
  bytes (and for checkpoints and at the end); rounds take it ``ANCHOR_LAG``
  rounds later. A task's inputs are the anchor and the changes since. The
  client receives a few numbers a round, and the weights at checkpoints and at
  the end.
- **Faults.** Every task is a pure function of its inputs (anchor, changes,
  slice, schedule position, seed), so a task lost with its worker is run again
  elsewhere with the same result: a worker without the resident copy builds it
  from the anchor.
"""
from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..counting.corpus import WordCounts, count_words
from ..counting.counter import merge_two
from ..counting.vocab import Vocab
from ..errors import HSW2VError, param
from ..model.model import Model
from ..runs.checkpoint import Checkpoints, Position, load_checkpoint, say_resuming
from ..runs.schedule import EpochLoss, LearningRate
from ..runs.common import carried_settings, check_converging, check_vocab
from ..runs.resolve import run_settings
from ..settings import CONNECT_SECONDS, TrainSettings, available_cores
from ..system.progress import progress_bar
from ..system.signals import raise_pending
from ..text.reader import Slice, corpus_files, describe, reads_in_slices
from ..text.tokens import TypeArrays
from ..training.kinds import model_kind
from ..trees.registry import TreeInputs, build_tree
from .cluster import connect, task_key, tree_reduce
from .quantize import STEP_TYPE
from .rounds import (
    Anchor,
    Job,
    anchor_at,
    change_totals,
    combine,
    first_weights,
    release,
    row_visits,
    train_slice,
    warm_up,
)

SHARD_SHIFT = 44
"""First-occurrence keys of shard i start at ``i << SHARD_SHIFT``: ties in count keep
the order of the shards' concatenation (a shard holds < 2**20 blocks, 1 TiB)."""


# --- tasks (run on the workers) ---------------------------------------------------

def list_shards(corpus: list[str]) -> list[str]:
    """The files that CORPUS names, as the workers see them."""
    files = corpus_files(corpus)
    if "-" in files:
        raise HSW2VError(f"{param('engine', 'dask')} reads files or URLs, not stdin (-)")
    return files


def count_shard(path: str, index: int, threads: int, memory: int | None) -> WordCounts:
    """Every word of one shard, exactly, with first occurrences after those of the
    shards before it."""
    counts = count_words(path, threads=threads, min_count=1, memory=memory)
    if len(counts) and int(counts.first.max()) >> SHARD_SHIFT:
        raise HSW2VError(f"{path}: more than {1 << (SHARD_SHIFT - 20)} blocks; split the shard")
    counts.first = counts.first + (np.int64(index) << np.int64(SHARD_SHIFT))
    counts.table_ids = []
    return counts


def shard_size(path: str, counts: WordCounts) -> tuple[int, int]:
    """A shard's tokens and its size in bytes; -1 for a shard read whole: compressed,
    or a URL (a server need not answer range requests)."""
    if not reads_in_slices(path):
        return counts.tokens, -1
    return counts.tokens, os.path.getsize(path)


def merge_shard_counts(a: WordCounts, b: WordCounts) -> WordCounts:
    """Two shards' (or subtrees') counts as one."""
    types, n = merge_two(TypeArrays(a.word_bytes, a.offsets, a.counts, a.first),
                         TypeArrays(b.word_bytes, b.offsets, b.counts, b.first))
    return WordCounts(*types, a.tokens + b.tokens, n, lines=a.lines + b.lines)


def vocabulary(counts: WordCounts, min_count: int, max_vocab: int | None, markers: bool = False
               ) -> tuple[Vocab, int, int]:
    """The vocabulary kept (with a language model's ``markers``, ``<unk>`` and
    ``</s>``), the corpus's tokens and its distinct words."""
    vocab = counts.to_vocab(min_count, max_vocab)
    if markers:
        vocab = counts.marked_vocab(vocab, np.empty(0, dtype=np.int32))[0]
    return vocab, counts.tokens, counts.n_types


DIRECT_EXCHANGE = 4
"""Up to this many replicas, each round's tasks take every replica's change of the
round before; more are first summed by a tree of ``combine`` tasks."""
ANCHOR_LAG = 2
"""Rounds use a new anchor from this many rounds after it is asked for. Meanwhile
they take the anchor before and its changes, so the anchor is made while a worker
waits between rounds (its task has a lower priority than training) and the other
workers fetch it while they train: made and fetched at once, it cost about 200 ms
of the run's path (skip-gram, 2 workers)."""
ANCHOR_BYTES = 4
"""A new anchor is made when the changes since the last add up to this many times
the bytes of the weights (about 16 times their rows, at 1 byte an entry): this
bounds what the workers hold, and what a lost worker's replacement replays."""


# --- the client ----------------------------------------------------------------------

def _value(x: Any) -> Any:
    return x


def on_cluster(c: Any, value: Any, name: str) -> Any:
    """``value`` as a task's result on the cluster, not as scattered data: Dask's
    memory manager keeps one copy of data no waiting task needs, and scattered
    data lost with its worker is lost for good (a killed worker once took the
    run's only copy of the job), while a task runs again. The value travels in
    the task's definition, held by the scheduler, so Dask's warning on large
    graphs is raised past the value's size."""
    import dask

    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "64GB"}):
        return c.submit(_value, value, key=task_key(name))


ROUNDS_PER_EPOCH = 32
"""At least this many slices an epoch by default, 16 for each of 2 workers (see
:func:`default_round_words`)."""
MIN_ROUND_WORDS = 1_000
"""The shortest round allowed: each round costs about 20 ms of scheduling and
combining, so rounds of a few words would spend the run on that (1 word a round:
over 300 s for 49k words)."""


def epoch_slices(shards: list[str], sizes: list[tuple[int, int]], round_words: int,
                 words_per_token: float) -> list[tuple[str | Slice, int]]:
    """The epoch's slices in corpus order, each with its estimated words: byte ranges
    of about ``round_words`` words of each uncompressed shard, a compressed shard whole."""
    slices = []
    for path, (tokens, size) in zip(shards, sizes):
        n = 1 if size < 0 else max(1, round(tokens / round_words))
        cuts = [size * k // n for k in range(n + 1)]
        for k in range(n):
            part = path if n == 1 else Slice(path, cuts[k], cuts[k + 1])
            slices.append((part, round(tokens * words_per_token / n)))
    return slices


def train_on_dask(corpus: Sequence[str], *, client: Any = None, scheduler: str | None = None,
                  workers: int | None = None, round_words: int | None = None,
                  count_memory: int | None = None, progress: bool = True,
                  checkpoint: str | None = None, checkpoint_every: float = 30.0,
                  resume: str | None = None,
                  checkpoint_outputs: dict[str, str | None] | None = None, **settings) -> Model:
    """Train on a Dask cluster (see the module's notes); the settings are those of
    :func:`hsw2v.runs.trainer.train_locally`, with ``threads`` per worker (default: a
    LocalCluster's share of the cores, or the workers' own thread count), and
    ``round_words`` the words each worker trains a round (default: the model kind's,
    :attr:`hsw2v.training.kinds.ModelKind.round_words`, or less on a small corpus: see
    :func:`default_round_words`). ``checkpoint`` saves the
    global weights and the run's position between rounds (gathered to the client
    every ``checkpoint_every`` minutes and after each epoch); ``resume`` continues
    such a run, with the same result."""
    saver = Checkpoints(checkpoint, checkpoint_every, checkpoint_outputs) if checkpoint else None
    state = load_checkpoint(resume) if resume else None
    if state and not state[1].round_slices:
        raise HSW2VError(f"{resume}: a checkpoint of a local run; resume it without {param('engine', 'dask')}")
    if state and progress:
        say_resuming(resume, state[1], state[0].settings.epochs)
    if round_words is not None and round_words < MIN_ROUND_WORDS:
        raise HSW2VError(f"{param('round_words')} must be at least {MIN_ROUND_WORDS:,} (a round "
                         f"costs about 20 ms of combining, whatever its length), got {round_words}")
    local_threads = max(1, available_cores() // workers) if workers and not scheduler else None
    threads = settings.pop("threads", None) or local_threads
    if progress and client is None:  # (the cluster's start takes seconds: say so)
        sys.stderr.write(f"hsw2v: connecting to the Dask scheduler at {scheduler}\n" if scheduler
                         else f"hsw2v: starting a Dask LocalCluster of {workers} worker "
                         f"process{'es' * (workers != 1)} on 127.0.0.1\n")
    with connect(client, scheduler, None if client is not None else workers) as c:
        try:
            c.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except (TimeoutError, asyncio.TimeoutError):
            raise HSW2VError(f"the Dask cluster has no workers (waited {CONNECT_SECONDS} s)") from None
        if threads is None:
            threads = min(w["nthreads"] for w in c.scheduler_info()["workers"].values())
        if state:
            s = carried_settings(state[0].settings, {**settings, "threads": threads}, ("threads",),
                         f"{resume}: a resumed run keeps the checkpoint's")
        else:
            s = run_settings({**settings, "threads": threads}, "dask")
        pending: list = []
        if progress and not state:
            _say_counting(c, s, local=bool(workers and not scheduler and client is None))
        try:
            return _train(c, list(corpus), s, round_words, count_memory, progress, pending, saver,
                          state)
        except KeyboardInterrupt:
            c.cancel(pending)
            raise
        except HSW2VError:
            raise
        except Exception as e:
            if type(e).__module__.split(".")[0] not in ("distributed", "dask", "asyncio"):
                raise
            raise HSW2VError(f"the Dask cluster failed: {' '.join(str(e).split())}") from None


def _say_counting(c: Any, s: TrainSettings, local: bool) -> None:
    """Say what the cluster does before the training bar shows: it counts, and on a
    first run of a ``local`` cluster (whose workers share this machine's numba
    cache), it compiles the kernels."""
    n = len(c.scheduler_info()["workers"])
    first = ""
    if local:
        from ..runs.kernel_setup import first_kernel

        if first_kernel(s, compile=False) is None:
            first = "; they compile the kernels first (numba; cached on disk, so this is once)"
    sys.stderr.write(f"hsw2v: counting the corpus on {n} Dask worker{'s' * (n != 1)}, "
                     f"then training in rounds{first}\n")


WORKER_WAIT_SECONDS = 60.0
"""How long a run waits, once its cluster has no worker left, for one to join
before it ends with one line (``HSW2V_DASK_WORKER_WAIT`` sets it, in seconds)."""


def worker_wait() -> float:
    """:data:`WORKER_WAIT_SECONDS`, or ``HSW2V_DASK_WORKER_WAIT`` where set."""
    try:
        return max(0.0, float(os.environ.get("HSW2V_DASK_WORKER_WAIT", WORKER_WAIT_SECONDS)))
    except ValueError:
        return WORKER_WAIT_SECONDS


def _result(c: Any, future: Any) -> Any:
    """``future.result()``, but a cluster without workers for :func:`worker_wait`
    seconds ends the run with one line (its tasks would wait for ever)."""
    alone_since = None
    while True:
        try:
            return future.result(timeout=1.0)
        except (TimeoutError, asyncio.TimeoutError):
            pass
        raise_pending()
        if c.scheduler_info()["workers"]:
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since > worker_wait():
            raise HSW2VError(f"the Dask cluster lost its last worker, and none joined in "
                             f"{worker_wait():g} s; a checkpoint, if asked for, holds the last "
                             "saved state (--resume continues from it)")


def default_round_words(s: TrainSettings, per_epoch: int) -> int:
    """The words a worker trains a round unless told: the model kind's
    (:attr:`~hsw2v.training.kinds.ModelKind.round_words`), but no more than cuts an
    epoch into :data:`ROUNDS_PER_EPOCH` slices, and at least :data:`MIN_ROUND_WORDS`.
    Fewer, longer rounds cost a small corpus quality: the workers' copies drift apart
    for longer between combinations. (It depends on the corpus only, not on the
    workers, so that a resumed run cuts its epochs as the first did.)"""
    share = per_epoch // ROUNDS_PER_EPOCH
    return max(MIN_ROUND_WORDS, min(model_kind(s.arch).round_words, share))


def _train(c: Any, corpus: list[str], s: TrainSettings, round_words: int | None,
           count_memory: int | None,
           progress: bool, pending: list, saver: Checkpoints | None,
           state: tuple[Model, Position] | None) -> Model:
    """Count, build the tree, train in rounds (see :func:`train_on_dask`)."""
    run = DaskRun(c, s, pending, saver, state)
    start = time.perf_counter()
    run.plan(corpus, round_words, count_memory)
    counted = time.perf_counter() - start
    start = time.perf_counter()
    model = run.train(progress)
    model.seconds = {"count": counted, "train": time.perf_counter() - start}
    check_converging(model)
    return model


class DaskRun:
    """One run on a Dask cluster, in named steps (as gensim's training loop):
    :meth:`plan` counts the shards and puts the job on the cluster; :meth:`train`
    submits the rounds (:meth:`_submit_round`), counts each one's totals a round
    later (:meth:`_account`), moves the workers to a new anchor when the changes
    since the last grow large (:meth:`_reanchor`, :meth:`_use_fresh`), and saves
    checkpoints (:meth:`_save`). ``pending`` holds the futures a Ctrl-C cancels."""

    def __init__(self, c: Any, s: TrainSettings, pending: list, saver: Checkpoints | None,
                 state: tuple[Model, Position] | None) -> None:
        self.c, self.s, self.pending, self.saver, self.state = c, s, pending, saver, state

    def plan(self, corpus: list[str], round_words: int | None, count_memory: int | None) -> None:
        """Count the shards on the workers, make the vocabulary and the tree, cut
        each epoch into slices, and put the job and the first weights on the cluster."""
        c, s, state = self.c, self.s, self.state
        shards = c.submit(list_shards, corpus, key=task_key("list-shards")).result()
        counts = [c.submit(count_shard, path, i, s.threads, count_memory,
                           key=task_key("count-shard")) for i, path in enumerate(shards)]
        sizes = [c.submit(shard_size, path, n, key=task_key("shard-size"))
                 for path, n in zip(shards, counts)]
        self.pending += counts + sizes
        total = tree_reduce(c, merge_shard_counts, counts, "merge-counts")
        vocab, tokens, _ = c.submit(vocabulary, total, s.min_count, s.max_vocab,
                                    model_kind(s.arch).language_model,
                                    key=task_key("vocabulary")).result()
        sizes = c.gather(sizes)
        del counts, total
        self.pending.clear()
        if tokens == 0:
            raise HSW2VError(f"{describe(shards)}: the corpus is empty (no words)")
        check_vocab(vocab, s.min_count, describe(shards))
        if state and (vocab.words != state[0].words
                      or list(vocab.counts) != list(state[0].vocab.counts)):
            raise HSW2VError(f"{describe(shards)}: the corpus changed since the checkpoint was saved")
        tree = state[0].tree if state else build_tree(s.tree, TreeInputs(vocab.words, vocab.counts, s))
        self.vocab, self.tree = vocab, tree
        self.matrix_names = list(model_kind(s.arch).matrices(len(vocab), s.dim, s))  # the kind's own
        self.per_epoch = per_epoch = vocab.total
        round_words = round_words or default_round_words(s, per_epoch)
        self.slices = epoch_slices(shards, sizes, round_words, per_epoch / tokens)
        self.job_plan = Job(uuid.uuid4().hex, vocab, tree, s, s.epochs * per_epoch,
                            row_visits(vocab, tree, s))
        self.job = on_cluster(c, self.job_plan, "job")
        if state:
            self.anchor = on_cluster(c, Anchor(0, state[0].vectors, state[0].node_vectors,
                                               state[0].extra_matrices), "resumed-weights")
        else:
            self.anchor = c.submit(first_weights, self.job, key=task_key("first-weights"))
        c.gather([c.submit(warm_up, self.job, key=task_key("warm-up"), workers=[w], pure=False)
                  for w in c.scheduler_info()["workers"]])

    def train(self, progress: bool) -> Model:
        """Every round from the run's position to the end; the trained model."""
        c, s, per_epoch = self.c, self.s, self.per_epoch
        at = self.at = self.state[1] if self.state else Position(
            per_epoch, False, loss_sum=[0.0] * s.epochs, examples=[0] * s.epochs)
        self.done = at.words
        self.losses = EpochLoss(at.loss_sum, at.examples)
        self.alpha_at = LearningRate(s.alpha, s.min_alpha, s.epochs * per_epoch).at
        self.rounds: list = []  # (epoch, totals futures, number) of rounds not yet counted
        self.history: list[list] = []  # each round's changes since the anchor
        self.previous: list = []  # the anchor before and the changes since, kept until
        # every worker has run a round from the new anchor (and holds it): until then, a
        # lost anchor is rebuilt from them
        self.submitted = 0  # rounds submitted
        self.first_from_anchor = 0  # the number of the first round from the newest anchor
        self.held = 0  # rows of the changes since the newest anchor (as far as counted)
        self.fresh: list = []  # a new anchor not yet used: its future, rounds of history it
        # covers, and the number of rounds submitted when it was asked for
        self.row_bytes = s.dim * np.dtype(STEP_TYPE).itemsize + 4  # a changed row's, as it travels
        self.weight_bytes = (len(self.vocab) * s.dim
                             + (self.tree.n_leaves - 1) * (s.dim + s.node_bias)) * 4
        # Slices a round: fixed (and kept in checkpoints), so that a lost worker
        # changes where the tasks run, never what they compute.
        self.width = at.round_slices or max(1, len(c.scheduler_info()["workers"]))
        self.bar = progress_bar(progress, total=s.epochs * per_epoch, initial=self.done,
                                unit="word", unit_scale=True, desc="train", smoothing=0.1)
        try:
            for epoch in range(at.epoch, s.epochs):
                first = at.blocks if epoch == at.epoch else 0
                before = epoch * per_epoch + sum(words for _, words in self.slices[:first])
                for r in range(first, len(self.slices), self.width):
                    before = self._submit_round(epoch, r, before)
                    if self.saver and r + self.width < len(self.slices) and self.saver.due():
                        self._save(epoch, r + self.width)
                if self.saver:
                    self._save(epoch + 1, 0)
            while self.rounds:
                self._account(*self.rounds.pop(0))
            self._reanchor(now=True)
            final = _result(c, self.anchor)
            c.run(release, self.job_plan.token)  # the workers' copies of this run's weights
        finally:
            self.bar.close()
        model = Model(self.vocab, self.tree, np.array(final.syn0), np.array(final.syn1), s,
                      extra={name: np.array(m) for name, m in zip(self.matrix_names, final.extra)})
        model.epoch_loss = self.losses.means()
        return model

    def _submit_round(self, epoch: int, r: int, before: int) -> int:
        """Submit the round of slices from ``r`` (``before``: the words planned before
        it), count the round before it, and ask for a new anchor when due. Returns
        the words planned before the next round."""
        c = self.c
        if self.fresh and self.submitted >= self.fresh[2] + ANCHOR_LAG:
            self._use_fresh()
        names = list(c.scheduler_info()["workers"]) or [None]
        changes = []
        for k in range(r, min(r + self.width, len(self.slices))):
            part, words = self.slices[k]
            where = {"workers": [names[(k - r) % len(names)]], "allow_other_workers": True}
            changes.append(c.submit(train_slice, self.job, self.anchor, list(self.history), part,
                                    epoch, before, words, k, key=task_key("train-round"),
                                    **(where if names[0] else {})))
            before += words
        if len(changes) > DIRECT_EXCHANGE:
            changes = [tree_reduce(c, combine, changes, "combine")]
        self.history.append(changes)
        self.rounds.append((epoch, [c.submit(change_totals, ch, key=task_key("change-totals"))
                                    for ch in changes], self.submitted))
        self.submitted += 1
        self.pending[:] = [self.anchor, *self.fresh[:1], *self.previous,
                           *(ch for round_ in self.history for ch in round_)]
        if len(self.rounds) > 1:  # the client stays one round behind the workers
            self._account(*self.rounds.pop(0))
        if not self.fresh and self.held * self.row_bytes >= ANCHOR_BYTES * self.weight_bytes:
            self._reanchor()
        return before

    def _account(self, epoch: int, totals: list, number: int) -> None:
        """Add a counted round's words, losses and changed rows; advance the bar."""
        raise_pending()
        if number >= self.first_from_anchor:
            self.previous.clear()
        for n, loss, ex, rows in (_result(self.c, t) for t in totals):
            self.losses.add(epoch, loss, ex)
            self.done += n
            self.held += rows
            self.bar.update(min(n, self.bar.total - self.bar.n))
        self.bar.set_postfix(alpha=f"{self.alpha_at(self.done):.5f}",
                             loss=f"{self.losses.mean(epoch):.4f}",
                             workers=len(self.c.scheduler_info()["workers"]), refresh=False)

    def _reanchor(self, now: bool = False) -> None:
        """Ask for the weights after the rounds so far, as one value; rounds take it
        ANCHOR_LAG rounds later, or from now on with ``now``."""
        self.fresh[:] = [self.c.submit(anchor_at, self.job, self.anchor, list(self.history),
                                       key=task_key("anchor"), priority=-1),
                         len(self.history), self.submitted]
        self.held = 0
        if now:
            self._use_fresh()

    def _use_fresh(self) -> None:
        """Train from the new anchor on, keeping the old one until it is safe to drop."""
        new, cut, _ = self.fresh
        self.previous[:] = [self.anchor, *(ch for changes in self.history[:cut] for ch in changes)]
        self.first_from_anchor = self.submitted
        self.anchor, self.history = new, self.history[cut:]
        self.fresh.clear()

    def _save(self, epoch: int, next_slice: int) -> None:
        """A checkpoint: every round submitted counted, the weights gathered."""
        while self.rounds:
            self._account(*self.rounds.pop(0))
        self._reanchor(now=True)
        w = _result(self.c, self.anchor)
        self.saver.save(Model(self.vocab, self.tree, w.syn0, w.syn1, self.s,
                              extra=dict(zip(self.matrix_names, w.extra))),
                        Position(self.per_epoch, False, epoch, next_slice, 0, self.done,
                                 self.at.loss_sum, self.at.examples, [], self.width))
