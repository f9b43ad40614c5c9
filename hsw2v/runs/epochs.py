"""The local engine's epochs: the main thread reads each block's word ids (from
the counting pass's token spool, or by encoding the text's byte blocks with a
nogil kernel) and queues them; worker threads run the block kernel on queued
blocks, Hogwild-style. Each block carries its slice of the linear learning-rate
schedule, so the schedule does not depend on which thread trains which block.
For a kind with :attr:`~hsw2v.training.kinds.ModelKind.thread_parts`, each
thread trains its own contiguous part of each epoch from the spool, as in
word2vec.c and fastText; a thread whose queue is empty takes another's block, so
none waits. The Dask engine's workers run it on their slices too."""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from ..counting.corpus import TokenSpool, WordTable
from ..errors import HSW2VError, param
from ..model.model import Model
from ..settings import TrainSettings
from ..system.progress import progress_bar
from ..system.signals import raise_pending
from ..system.parallel import lock_free, start_threads
from ..text.reader import BLOCK_BYTES, Source, describe, iter_blocks
from ..training.kinds import model_kind
from ..training.state import Weights, new_state
from .checkpoint import Checkpoints, Position
from .kernel_setup import KernelSetup, kernel_setup
from .schedule import EpochLoss, LearningRate


def run_epochs(path: Source, model: Model, s: TrainSettings, progress: bool, position: Position,
               spool: TokenSpool | None = None, type_ids: list[np.ndarray] | None = None,
               checkpoints: Checkpoints | None = None, schedule: int | None = None,
               table: WordTable | None = None, setup: KernelSetup | None = None,
               whole_run: bool = True, stage: str = "train") -> tuple[list[float], float]:
    """Stream the corpus through the worker threads from ``position`` to the end of
    epoch ``s.epochs``; return each epoch's mean loss and the seconds from the
    threads' start to their end. The learning rate falls over ``schedule`` words
    (default: ``s.epochs`` × ``position.per_epoch``). On return, ``position.words``
    counts the words trained in all (and its ``loss_sum`` and ``examples``, when
    given, hold the sums).

    The blocks come from ``spool`` (with ``type_ids``, see :meth:`TokenSpool.blocks`)
    if given; otherwise the text is read and encoded again each epoch. An epoch
    whose words differ from ``position.per_epoch`` (when ``exact``) or from the
    words of the blocks a resumed run skips means the corpus changed: that fails.
    So does a ``whole_run`` (not one Dask round's slice) that trained no example.
    ``checkpoints`` saves the run at block boundaries, with every queued block trained.
    ``setup``: the run's :class:`KernelSetup`, if built before (else built here).
    ``stage`` names the progress bar."""
    return Epochs(path, model, s, position, spool, type_ids, checkpoints, schedule, table,
                  setup).run(progress, whole_run, stage)


class Epochs:
    """The epochs of one run (gensim's ``_job_producer`` and ``_worker_loop``): the
    main thread produces blocks with their slice of the learning rate
    (:meth:`_job_producer`), each worker thread trains them with its own
    :class:`~hsw2v.training.state.State` (:meth:`_worker_loop`). See :func:`run_epochs`."""

    def __init__(self, path: Source, model: Model, s: TrainSettings, position: Position,
                 spool: TokenSpool | None, type_ids: list[np.ndarray] | None,
                 checkpoints: Checkpoints | None, schedule: int | None,
                 table: WordTable | None, setup: KernelSetup | None) -> None:
        self.path, self.model, self.s, self.position = path, model, s, position
        self.spool, self.type_ids, self.checkpoints = spool, type_ids, checkpoints
        if spool is None:
            self.table = table or WordTable.of_vocab(model.vocab)
            self.table.encode(b"")  # loads the encoding kernel before LLVM's pages go (below)
        else:
            spool.warm_up()
        self.setup = setup or kernel_setup(model, s)
        self.planned = schedule or s.epochs * position.per_epoch
        self.losses = (EpochLoss(position.loss_sum, position.examples) if position.loss_sum
                       else EpochLoss.empty(s.epochs))
        self.alpha_at = LearningRate(s.alpha, s.min_alpha, self.planned).at
        self.weights = Weights(model.input_matrix(), model.node_vectors, self.setup.hot_nodes,
                               self.setup.hot_slot, model.extra_matrices, *model.subwords)
        self.states = [new_state((s.seed * 7919 + 17 * (t + 1)) % 2**64, BLOCK_BYTES // 2 + 2,
                                 s.window, self.setup.longest,
                                 model.node_vectors[self.setup.hot_nodes], model.extra_matrices,
                                 model.vectors[:self.setup.private_words],
                                 model.ngram_vectors is not None)
                       for t in range(s.threads)]
        for state, rng in zip(self.states, position.rng):
            state.rng[0] = rng
        self.done = position.words  # words trained (by the workers, under the lock)
        self.lock = threading.Lock()
        self.queues: list[queue.Queue] = [queue.Queue(maxsize=2) for _ in range(s.threads)]
        self.queued = threading.Semaphore(0)  # the blocks in all the queues
        self.parts = (s.threads > 1 and model_kind(s.arch).thread_parts and checkpoints is None
                      and isinstance(spool, TokenSpool))
        self.failures: list[BaseException] = []

    def run(self, progress: bool, whole_run: bool = True, stage: str = "train"
            ) -> tuple[list[float], float]:
        """Train from the position to the end; (each epoch's mean loss, seconds)."""
        threads = [threading.Thread(target=self._worker_loop, args=(t, state), daemon=True)
                   for t, state in enumerate(self.states)]
        start = time.perf_counter()
        bar = progress_bar(progress, total=self.planned, initial=self.position.words,
                           unit="word", unit_scale=True, desc=stage, smoothing=0.1)
        self.shown = self.position.words
        try:
            start_threads(threads, "training")
            self._job_producer(bar)
        finally:
            if all(map(lock_free, self.queues)):  # else a signal left one locked: the threads are daemons
                for t in range(len(threads)):
                    self._queue(t, None)
                for t in threads:
                    if t.ident is not None:  # (started)
                        t.join()
            self._refresh(bar)
            bar.close()
        seconds = time.perf_counter() - start
        if self.failures:
            raise self.failures[0]
        self.position.words = self.done
        if whole_run and self.losses.total_examples == 0:
            raise HSW2VError(_nothing_trained(self.s, self.done))
        return self.losses.means(), seconds

    def _epoch_blocks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(thread, word ids, sentence ends) of each block of one epoch, in the order
        of the learning rate: the blocks in turn, or (:attr:`parts`) each thread's
        part's next block in turn."""
        if self.spool is None:
            blocks = map(self.table.encode, iter_blocks(self.path))
        elif not self.parts:
            blocks = self.spool.blocks(self.type_ids, line_end=self.model.vocab.end_id)
        else:
            yield from part_blocks(self.spool, self.type_ids, len(self.queues),
                                   self.model.vocab.end_id)
            return
        for k, (ids, ends) in enumerate(blocks):
            yield k % len(self.queues), ids, ends

    def _job_producer(self, bar) -> None:
        """Queue every block from the position on, each with its epoch and its slice
        of the learning rate; check each epoch's words; save checkpoints."""
        s, position = self.s, self.position
        words = position.words
        for epoch in range(position.epoch, s.epochs):
            skip = position.blocks if epoch == position.epoch else 0
            blocks = epoch_words = 0
            for thread, ids, ends in self._epoch_blocks():
                raise_pending()
                if self.failures:
                    break
                if len(ids) == 0:
                    continue
                blocks += 1
                epoch_words += len(ids)
                if blocks <= skip:  # trained before the checkpoint this run resumed
                    if blocks == skip and epoch_words != position.epoch_words:
                        raise self._changed(epoch, epoch_words, position.epoch_words)
                    continue
                if position.exact and epoch_words > position.per_epoch:
                    raise self._changed(epoch, epoch_words, position.per_epoch)
                a0, a1 = self.alpha_at(words), self.alpha_at(words + len(ids))
                words += len(ids)
                self._queue(thread, (epoch, ids, ends, a0, a1))
                if self.checkpoints is not None and self.checkpoints.due():
                    self._save(epoch, blocks, epoch_words, words)
                self._refresh(bar)
            if self.failures:
                break
            if blocks < skip or (position.exact and epoch_words != position.per_epoch):
                raise self._changed(epoch, epoch_words, position.per_epoch)
            if self.checkpoints is not None:
                self._save(epoch + 1, 0, 0, words)

    def _queue(self, thread: int, job) -> None:
        """Queue ``job`` for ``thread`` (None: stop a thread)."""
        self.queues[thread].put(job)
        self.queued.release()

    def _next_job(self, thread: int) -> tuple[queue.Queue, object]:
        """The next job of ``thread``'s queue, else of another's; waits for one."""
        self.queued.acquire()
        order = self.queues[thread:] + self.queues[:thread]
        while True:  # (a job is queued for each acquire: another thread may take this one)
            for q in order:
                try:
                    return q, q.get_nowait()
                except queue.Empty:
                    pass

    def _worker_loop(self, thread: int, state) -> None:
        """Train queued blocks until a None comes; after a failure, drain the queues."""
        k, s = self.setup, self.s
        while True:
            jobs, job = self._next_job(thread)
            try:
                if job is None:
                    return
                if self.failures:
                    continue
                epoch, ids, ends, a0, a1 = job
                if len(ids) > len(state.sentence):
                    state = state._replace(sentence=np.empty(len(ids), dtype=np.int32),
                                           positions=np.empty(len(ids), dtype=np.int64))
                loss, n = k.kernel(ids, ends, len(ends), float(a0), float(a1), k.keep,
                                   self.weights, k.paths, k.config, state, s.dim)
                with self.lock:
                    self.losses.add(epoch, loss, n)
                    self.done += len(ids)
            except BaseException as e:  # noqa: BLE001 (re-raised by the main thread)
                self.failures.append(e)
            finally:
                jobs.task_done()

    def _save(self, epoch: int, blocks: int, epoch_words: int, words: int) -> None:
        """A checkpoint at this block boundary, once every queued block is trained."""
        for jobs in self.queues:  # every queued block trained: the weights and states agree
            jobs.join()
        if self.checkpoints is not None and not self.failures:
            losses = self.losses
            self.checkpoints.save(self.model, replace(
                self.position, epoch=epoch, blocks=blocks, epoch_words=epoch_words, words=words,
                loss_sum=losses.loss_sum, examples=losses.examples,
                rng=[int(st.rng[0]) for st in self.states]))

    def _changed(self, epoch: int, words: int, expected: int) -> HSW2VError:
        return HSW2VError(f"{describe(self.path)}: the corpus changed since it was counted "
                          f"({expected} words in the vocabulary then, {words}+ in epoch {epoch + 1})")

    def _refresh(self, bar) -> None:
        """Advance the bar to the words trained so far; show alpha and the running
        loss of the latest epoch that has trained examples."""
        with self.lock:
            now = self.done
            epoch, loss = self.losses.latest()
        if now > self.shown:
            bar.set_postfix(epoch=epoch + 1, alpha=f"{self.alpha_at(now):.5f}",
                            loss=f"{loss:.4f}", refresh=False)
            bar.update(now - self.shown)
            self.shown = now


def part_blocks(spool: TokenSpool, type_ids: list[np.ndarray], n: int, line_end: int = -1
                ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(part, word ids, sentence ends) of the spool's blocks cut into ``n`` contiguous
    parts (:meth:`TokenSpool.parts`): each part's next block in turn, the parts that
    have run out left out. Each part is read through a buffer of its own (1 MiB at
    least, 4 MiB in all)."""
    chunk = max(1 << 20, (4 << 20) // n)
    parts = {t: spool.blocks(type_ids, chunk, at, first, count, line_end=line_end)
             for t, (at, first, count) in enumerate(spool.parts(n))}
    while parts:
        for t, blocks in list(parts.items()):
            block = next(blocks, None)
            if block is None:
                del parts[t]
            else:
                yield t, *block


def _nothing_trained(s: TrainSettings, words: int) -> str:
    """Why no example was trained (``words``: the vocabulary's words read), for the
    one line that ends such a run."""
    if words == 0:
        why = "no word of the vocabulary occurs in the corpus"
    elif s.sample > 0:
        why = (f"subsampling ({param('sample', s.sample)}) dropped every word of this small "
               f"corpus; try {param('sample', 0)}")
    else:
        why = "no word has another within its line"
    return f"nothing was trained: {why}"
