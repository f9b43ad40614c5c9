"""Training orchestration: vocabulary, tree, weights, and threads running the kernels.

The main thread reads each block's word ids (from the counting pass's token spool,
or by encoding the text's byte blocks with a nogil kernel) and queues them; worker
threads run the SGD kernel on queued blocks, Hogwild-style. Each block carries its
slice of the linear learning-rate schedule, so the schedule does not depend on
which thread trains which block.
"""
from __future__ import annotations

import queue
import tempfile
import threading
import time
import warnings
from contextlib import ExitStack
from dataclasses import asdict, replace

import numpy as np

from ..counting.corpus import TokenSpool, WordCounts, WordTable, count_words
from ..counting.vocab import Vocab
from ..errors import HSW2VError, param
from ..model.model import Model
from ..settings import CHECKPOINT_MINUTES, TREE_KINDS, TrainSettings, option_of
from ..system.compiling import CompileWatch
from ..system.memory import release_compiler_pages, release_free_memory
from ..system.progress import progress_bar
from ..system.signals import raise_pending
from ..text.reader import (
    BLOCK_BYTES,
    Source,
    as_source,
    describe,
    iter_blocks,
    lock_free,
    rereadable,
)
from ..training.kinds import model_kind
from ..training.state import Weights, new_state
from ..trees.registry import TreeInputs, tree_builder, tree_builders
from ..trees.tree import Tree
from .checkpoint import Checkpoints, Position, load_checkpoint, say_resuming
from .kernels import KernelSetup, kernel_setup
from .schedule import EpochLoss, LearningRate


def build_vocab(corpus: Source, min_count: int = 5, max_vocab: int | None = None,
                progress: bool = False, threads: int | None = None) -> tuple[Vocab, int]:
    """Count the corpus in one pass.

    Parameters
    ----------
    corpus
        A path or list of paths, as :func:`hsw2v.train` takes.
    min_count
        Keep the words seen at least this many times.
    max_vocab
        Keep at most this many of them, the most frequent (default: no limit).
    progress
        Show a progress bar.
    threads
        Counting threads (all cores by default).

    Returns
    -------
    tuple[Vocab, int]
        The vocabulary kept and the corpus's token count.
    """
    threads = TrainSettings(threads=threads).resolved().threads
    counts = count_words(as_source(corpus), progress=progress, threads=threads, min_count=min_count)
    if counts.tokens == 0:
        raise HSW2VError(f"{describe(corpus)}: the corpus is empty (no words)")
    vocab, _ = _pruned(counts, min_count, max_vocab, corpus)
    return vocab, counts.tokens


def check_vocab(vocab: Vocab, min_count: int, corpus: Source) -> None:
    """A tree needs two words: say which setting to change when there are fewer."""
    if len(vocab) == 0:
        raise HSW2VError(f"{describe(corpus)}: no word occurs at least {min_count} times; lower {param('min_count')}")
    if len(vocab) == 1:
        why = (f"lower {param('min_count')}" if min_count > 1 else
               "the corpus has one distinct word; give it a text with at least two")
        raise HSW2VError(
            f"{describe(corpus)}: only one word ({vocab.words[0]!r}) occurs at least {min_count} times; "
            f"hierarchical softmax needs two; {why}"
        )


def train_locally(corpus: Source, *, vocab: Vocab | None = None, tree: Tree | str | None = None,
          tree_from: Model | None = None, init_model: Model | None = None,
          checkpoint: str | None = None, checkpoint_every: float = CHECKPOINT_MINUTES,
          resume: str | None = None, count_memory: int | None = None, progress: bool = True,
          checkpoint_outputs: dict[str, str | None] | None = None, **settings) -> Model:
    """Train word vectors on ``corpus``: a path (plain, .gz, .bz2 or .zst; ``-`` for stdin)
    or a list of them, read in order (see :func:`hsw2v.text.reader.corpus_files`).

    Keyword settings are those of :class:`TrainSettings`. ``vocab`` skips counting;
    ``tree`` is a kind (see :class:`TrainSettings`) or a ready :class:`Tree` over that
    vocabulary. With ``tree="semantic"`` the
    tree is learned from ``tree_from`` (whose vocabulary is then used) or, without
    it, from a first training pass with a Huffman tree (one-shot mode).
    ``init_model`` trains that model further on ``corpus``, keeping its vocabulary,
    tree and structural settings (words outside its vocabulary are skipped and
    counted in ``skipped``). ``checkpoint`` saves the run's full state there every
    ``checkpoint_every`` minutes and after each epoch; ``resume`` continues the run
    saved in that checkpoint on the same corpus, with its settings (only
    ``threads`` may change). ``count_memory`` bounds the counting pass (bytes; see
    :func:`hsw2v.counting.corpus.count_words`). ``checkpoint_outputs`` is kept in
    each checkpoint: the files the run writes at its end, which a resumed run writes.
    Returns the :class:`Model`, with the mean loss of each epoch in ``epoch_loss``.
    """
    corpus = as_source(corpus)
    saver = Checkpoints(checkpoint, checkpoint_every, checkpoint_outputs) if checkpoint else None
    if resume is not None:
        return _resume(corpus, resume, saver, progress, settings)
    if isinstance(tree, str):
        settings["tree"], tree = tree, None
    if init_model is not None:
        structural = model_kind(init_model.arch).structural
        s = carried_settings(replace(init_model.settings, threads=None), settings,
                             tuple(k for k in CONTINUED if k not in structural),
                             f"{param('init_model')} keeps the model's")
    else:
        s = TrainSettings(**settings).resolved()
    if tree is not None and (kind := tree.kind.partition("-")[0]) in TREE_KINDS:
        s = replace(s, tree=kind)  # recorded with the model: the kind of the tree given
    if tree is None and init_model is None:
        tree_builder(s.tree).ready(s)  # (a missing database fails before any reading)
    with rereadable(corpus) as path, ExitStack() as cleanup:
        watch = cleanup.enter_context(CompileWatch(progress))
        spool, type_ids, skipped, per_epoch = None, None, None, 0
        if tree_from is not None:
            vocab = tree_from.vocab
        elif vocab is None or init_model is not None:
            spool = cleanup.enter_context(TokenSpool()) if s.spool else None
            counts = count_words(path, progress=progress, spool=spool, threads=s.threads,
                                 min_count=1 if init_model else s.min_count, memory=count_memory)
            if counts.tokens == 0:
                raise HSW2VError(f"{describe(path)}: the corpus is empty (no words)")
            if init_model is None:
                vocab, word_ids = _pruned(counts, s.min_count, s.max_vocab, corpus)
                per_epoch = vocab.total
            else:
                vocab, tree = init_model.vocab, init_model.tree
                word_ids, skipped = _model_ids(counts, vocab, corpus)
                per_epoch = counts.tokens - skipped["tokens"]
            type_ids = counts.spool_ids(word_ids)
        else:
            vocab = vocab.pruned(s.min_count, s.max_vocab)
            check_vocab(vocab, s.min_count, corpus)
        seconds: dict[str, float] = {}
        if tree is None:
            start = time.perf_counter()
            tree = _make_tree(path, vocab, s, tree_from, progress)
            seconds["tree"] = time.perf_counter() - start
        if len(tree) != len(vocab):
            raise HSW2VError(f"the tree has {len(tree)} leaves but the vocabulary {len(vocab)} words")
        release_free_memory()  # the counting pass's garbage, before the big allocations
        release_compiler_pages()
        if init_model is not None:
            vectors, node_vectors = init_model.vectors.copy(), init_model.node_vectors.copy()
            extra = {name: m.copy() for name, m in init_model.extra.items()}
        else:
            vectors, node_vectors = initial_weights(len(vocab), tree.n_leaves - 1, s.dim, s.seed, s.node_bias)
            extra = model_kind(s.arch).extra_weights(len(vocab), s.dim, s)
        model = Model(vocab, tree, vectors, node_vectors, s, extra=extra)
        if spool is not None and not spool.usable:
            warnings.warn(f"the token spool in {tempfile.gettempdir()} could not be kept "
                          f"({spool.failure}); each epoch reads the text again", stacklevel=2)
            spool = None
        # A run that counted the corpus checks each epoch against that count.
        position = Position(per_epoch or vocab.total, exact=per_epoch > 0)
        model.epoch_loss, seconds["train"] = run_epochs(path, model, s, progress, position, spool,
                                                         type_ids, saver)
        seconds["compile"] = watch.seconds
    check_converging(model)
    model.seconds = seconds
    model.skipped = skipped
    return model


def initial_weights(n_words: int, n_inner: int, dim: int, seed: int,
                    node_bias: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Word vectors uniform in ±0.5/dim (as word2vec.c) and zero vectors for the
    ``n_inner`` inner nodes (with ``node_bias``, one more column: each node's bias)."""
    vectors = np.random.default_rng(seed).random((n_words, dim), dtype=np.float32)
    vectors -= 0.5
    vectors /= dim
    return vectors, np.zeros((n_inner, dim + node_bias), dtype=np.float32)


CONTINUED = ("window", "sample", "alpha", "min_alpha", "epochs", "threads", "seed", "spool")
"""The settings a run may change when it trains a model further (``init_model``)."""


def carried_settings(base: TrainSettings, given: dict, allowed: tuple[str, ...], why: str) -> TrainSettings:
    """``base`` with the ``allowed`` settings of ``given``; any other setting given
    with a different value is an error (``why`` says whose settings are kept)."""
    for name, value in given.items():
        if name not in allowed and value != getattr(base, name):
            raise HSW2VError(f"{why} {param(name)} ({getattr(base, name)}); "
                             f"drop {param(name, value, option_of(name, value))}")
    return replace(base, **{k: v for k, v in given.items() if k in allowed}).resolved()


def _pruned(counts: WordCounts, min_count: int, max_vocab: int | None, corpus: Source
            ) -> tuple[Vocab, np.ndarray]:
    """The vocabulary kept, and each counted type's word id in it (or -1)."""
    vocab = counts.to_vocab(min_count, max_vocab)
    check_vocab(vocab, min_count, corpus)
    return vocab, counts.type_ids(min_count, max_vocab)


def _model_ids(counts: WordCounts, vocab: Vocab, corpus: Source
               ) -> tuple[np.ndarray, dict[str, int]]:
    """Each counted type's id in a model's ``vocab`` (-1 outside it), and the tokens
    and types of the corpus that it does not hold."""
    index = vocab.index
    ids = np.array([index.get(counts.word(i), -1) for i in range(len(counts))], dtype=np.int32)
    outside = ids < 0
    skipped = {"tokens": int(counts.counts[outside].sum()), "types": int(outside.sum())}
    if skipped["tokens"] == counts.tokens:
        raise HSW2VError(f"{describe(corpus)}: none of its words is in the model's vocabulary")
    return ids, skipped


def _resume(corpus: Source, resume: str, saver: Checkpoints | None, progress: bool,
            settings: dict) -> Model:
    """Continue the run saved in the checkpoint ``resume`` (see :func:`train`)."""
    model, position = load_checkpoint(resume)
    if position.round_slices:
        raise HSW2VError(f"{resume}: a checkpoint of {param('engine', 'dask')}; resume it with {param('engine', 'dask')}")
    s = carried_settings(model.settings, settings, ("threads",),
                 f"{resume}: a resumed run keeps the checkpoint's")
    model.settings = s
    if progress:
        say_resuming(resume, position, s.epochs)
    with rereadable(corpus) as path:
        model.epoch_loss, seconds = run_epochs(path, model, s, progress, position, None, None,
                                                saver)
    check_converging(model)
    model.seconds = {"train": seconds}
    return model


DIVERGED = 10.0
"""A run whose last epoch's loss exceeds this many times the loss of the untrained
model (all inner-node vectors zero: ln 2 per branch) has diverged."""


def check_converging(model: Model) -> None:
    """Stop with one line when training diverged: non-finite weights or loss, or a
    loss far above the untrained model's. Nothing is written then."""
    s, tree, counts = model.settings, model.tree, model.vocab.counts
    untrained = float((tree.depths * counts).sum() / counts.sum()) * np.log(2.0)
    last = model.epoch_loss[-1] if model.epoch_loss else 0.0
    if (not np.isfinite(model.epoch_loss).all() or not np.isfinite(model.vectors).all()
            or not np.isfinite(model.node_vectors).all() or last > DIVERGED * untrained):
        raise HSW2VError(f"training diverged (loss {last:.4g} nats, {untrained:.3g} untrained); "
                         f"lower {param('alpha')} (it was {s.alpha:g})")


def _make_tree(path: Source, vocab: Vocab, s: TrainSettings, tree_from: Model | None,
               progress: bool) -> Tree:
    """The tree ``s.tree`` asks for, from its builder in the registry. A builder that
    learns from a model's context vectors uses ``tree_from``; without it, a first
    pass over a Huffman tree trains that model (one-shot)."""
    builder = tree_builder(s.tree)
    if tree_from is not None and not builder.takes_model:
        learners = [k for k, b in tree_builders.items() if b.takes_model]
        raise HSW2VError(f"{param('tree_from')} goes with {' or '.join(param('tree', k) for k in learners)}")
    if builder.learns_from_model and tree_from is None:
        defaults = TrainSettings()
        first = {**asdict(s), "tree": "huffman",
                 **{k: getattr(defaults, k) for k in builder.settings}}
        tree_from = train_locally(path, vocab=vocab, progress=progress, **first)
    return builder.build(TreeInputs(vocab.words, vocab.counts, s, tree_from, path))


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
