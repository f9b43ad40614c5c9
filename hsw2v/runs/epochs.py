"""The local engine's epochs: the main thread reads each block's word ids (from
the counting pass's token spool, or by encoding the text's byte blocks with a
nogil kernel) and queues them; worker threads run the block kernel on queued
blocks, Hogwild-style. Each block carries its slice of the linear learning-rate
schedule, so the schedule does not depend on which thread trains which block.
The Dask engine's workers run it on their slices too."""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import replace

import numpy as np

from ..counting.corpus import TokenSpool, WordTable
from ..errors import HSW2VError, param
from ..model.model import Model
from ..settings import TrainSettings
from ..system.progress import progress_bar
from ..system.signals import raise_pending
from ..text.reader import BLOCK_BYTES, Source, describe, iter_blocks, lock_free
from ..training.state import Weights, new_state
from .checkpoint import Checkpoints, Position
from .kernels import KernelSetup, kernel_setup
from .schedule import EpochLoss, LearningRate


def run_epochs(path: Source, model: Model, s: TrainSettings, progress: bool, position: Position,
                spool: TokenSpool | None = None, type_ids: list[np.ndarray] | None = None,
                checkpoints: Checkpoints | None = None, schedule: int | None = None,
                table: WordTable | None = None, setup: KernelSetup | None = None,
                whole_run: bool = True) -> tuple[list[float], float]:
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
    ``setup``: the run's :class:`KernelSetup`, if built before (else built here)."""
    vocab = model.vocab
    if spool is None:
        table = table or WordTable(vocab.words)
        table.encode(b"")  # loads the encoding kernel before LLVM's pages go (below)
        epoch_blocks = lambda: map(table.encode, iter_blocks(path))
    else:
        spool.warm_up()
        epoch_blocks = lambda: spool.blocks(type_ids)
    k = setup or kernel_setup(model, s)
    keep, kernel = k.keep, k.kernel
    planned = schedule or s.epochs * position.per_epoch
    losses = (EpochLoss(position.loss_sum, position.examples) if position.loss_sum
              else EpochLoss.empty(s.epochs))
    loss_sum, examples = losses.loss_sum, losses.examples
    done = [position.words]
    lock = threading.Lock()
    jobs: queue.Queue = queue.Queue(maxsize=2 * s.threads)
    failures: list[BaseException] = []

    alpha_at = LearningRate(s.alpha, s.min_alpha, planned).at

    weights = Weights(model.vectors, model.node_vectors, k.hot_nodes, k.hot_slot,
                      model.extra_matrices)
    paths, config = k.paths, k.config
    states = [new_state((s.seed * 7919 + 17 * (t + 1)) % 2**64, BLOCK_BYTES // 2 + 2, s.window,
                        k.longest, model.node_vectors[k.hot_nodes], model.extra_matrices)
              for t in range(s.threads)]
    for state, rng in zip(states, position.rng):
        state.rng[0] = rng

    def worker(state) -> None:
        while True:
            job = jobs.get()
            try:
                if job is None:
                    return
                if failures:
                    continue
                epoch, ids, ends, a0, a1 = job
                if len(ids) > len(state.sentence):
                    state = state._replace(sentence=np.empty(len(ids), dtype=np.int32),
                                           positions=np.empty(len(ids), dtype=np.int64))
                loss, n = kernel(ids, ends, len(ends), float(a0), float(a1), keep, weights, paths,
                                 config, state, s.dim)
                with lock:
                    losses.add(epoch, loss, n)
                    done[0] += len(ids)
            except BaseException as e:  # noqa: BLE001 (re-raised by the main thread)
                failures.append(e)
            finally:
                jobs.task_done()

    def save(epoch: int, blocks: int, epoch_words: int, words: int) -> None:
        jobs.join()  # every queued block trained: the weights and states agree
        if checkpoints is not None and not failures:
            checkpoints.save(model, replace(position, epoch=epoch, blocks=blocks,
                                            epoch_words=epoch_words, words=words,
                                            loss_sum=loss_sum, examples=examples,
                                            rng=[int(st.rng[0]) for st in states]))

    def changed(epoch: int, words: int, expected: int) -> HSW2VError:
        return HSW2VError(f"{describe(path)}: the corpus changed since it was counted ({expected} "
                          f"words in the vocabulary then, {words}+ in epoch {epoch + 1})")

    threads = [threading.Thread(target=worker, args=(state,), daemon=True) for state in states]
    start = time.perf_counter()
    for t in threads:
        t.start()
    bar = progress_bar(progress, total=planned, initial=position.words, unit="word",
                       unit_scale=True, desc="train", smoothing=0.1)
    shown = words = position.words
    try:
        for epoch in range(position.epoch, s.epochs):
            skip = position.blocks if epoch == position.epoch else 0
            blocks = epoch_words = 0
            for ids, ends in epoch_blocks():
                raise_pending()
                if failures:
                    break
                if len(ids) == 0:
                    continue
                blocks += 1
                epoch_words += len(ids)
                if blocks <= skip:  # trained before the checkpoint this run resumed
                    if blocks == skip and epoch_words != position.epoch_words:
                        raise changed(epoch, epoch_words, position.epoch_words)
                    continue
                if position.exact and epoch_words > position.per_epoch:
                    raise changed(epoch, epoch_words, position.per_epoch)
                a0, a1 = alpha_at(words), alpha_at(words + len(ids))
                words += len(ids)
                jobs.put((epoch, ids, ends, a0, a1))
                if checkpoints is not None and checkpoints.due():
                    save(epoch, blocks, epoch_words, words)
                shown = _refresh(bar, shown, done, losses, alpha_at, lock)
            if failures:
                break
            if blocks < skip or (position.exact and epoch_words != position.per_epoch):
                raise changed(epoch, epoch_words, position.per_epoch)
            if checkpoints is not None:
                save(epoch + 1, 0, 0, words)
    finally:
        if lock_free(jobs):  # else a signal left it locked: the threads are daemons
            for _ in threads:
                jobs.put(None)
            for t in threads:
                t.join()
        _refresh(bar, shown, done, losses, alpha_at, lock)
        bar.close()
    seconds = time.perf_counter() - start
    if failures:
        raise failures[0]
    position.words = done[0]
    if whole_run and losses.total_examples == 0:
        raise HSW2VError(_nothing_trained(s, done[0]))
    return losses.means(), seconds


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


def _refresh(bar, shown, done, losses, alpha_at, lock) -> int:
    """Advance the bar to the words trained so far; show alpha and the running loss
    of the latest epoch that has trained examples."""
    with lock:
        now = done[0]
        epoch, loss = losses.latest()
    if now > shown:
        bar.set_postfix(epoch=epoch + 1, alpha=f"{alpha_at(now):.5f}", loss=f"{loss:.4f}",
                        refresh=False)
        bar.update(now - shown)
    return now
