"""The local engine: count the corpus, make the vocabulary, the tree and the
weights, then train them in threads (:mod:`hsw2v.runs.epochs`)."""
from __future__ import annotations

import tempfile
import sys
import time
import warnings
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from typing import NamedTuple

import numpy as np

from ..counting.corpus import TokenSpool, WordCounts, count_words
from ..counting.vocab import Vocab
from ..errors import HSW2VError, param
from ..model.model import Model
from ..settings import CHECKPOINT_MINUTES, TrainSettings
from ..system.compiling import CompileWatch, about
from ..system.memory import release_compiler_pages, release_free_memory
from ..text.reader import Source, as_source, describe, rereadable
from ..training.kinds import model_kind
from ..trees.registry import TreeBuilder, TreeInputs, build_tree, tree_builder, tree_for
from ..trees.tree import Tree
from .checkpoint import Checkpoints, Position, load_checkpoint, say_resuming, tree_pass_of
from .common import (
    carried_settings,
    check_converging,
    check_vocab,
    fresh_model,
    initial_weights,
)
from .epochs import run_epochs
from .grow import grown_model
from .kernel_setup import compiled_words, first_kernel_ahead, wait_for_tree_kernels
from .resolve import first_pass_settings, run_settings


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


def train_locally(corpus: Source, *, vocab: Vocab | None = None, tree: Tree | str | None = None,
          tree_from: Model | None = None, init_model: Model | None = None,
          checkpoint: str | None = None, checkpoint_every: float = CHECKPOINT_MINUTES,
          resume: str | None = None, count_memory: int | None = None, progress: bool = True,
          checkpoint_outputs: dict[str, str | None] | None = None, grow: bool = False,
          **settings) -> Model:
    """Train word vectors on ``corpus``: a path (plain, .gz, .bz2 or .zst; ``-`` for stdin)
    or a list of them, read in order (see :func:`hsw2v.text.reader.corpus_files`).

    Keyword settings are those of :class:`TrainSettings`. ``vocab`` skips counting;
    ``tree`` is a kind (see :class:`TrainSettings`) or a ready :class:`Tree` over that
    vocabulary. With ``tree="semantic"`` the
    tree is learned from ``tree_from`` (whose vocabulary is then used) or, without
    it, from a first training pass of ``tree_epochs`` with a Huffman tree
    (one-shot mode), whose word vectors (and the kind's other matrices) the run
    then starts from.
    ``init_model`` trains that model further on ``corpus``, keeping its vocabulary,
    tree and structural settings (words outside its vocabulary are skipped and
    counted in ``skipped``); with ``grow``, the corpus's words that reach the
    min-count join the vocabulary and the tree first (:mod:`hsw2v.runs.grow`).
    ``checkpoint`` saves the run's full state there every
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
    s = run_settings(settings, "local", init_model, grow, tree)
    with rereadable(corpus) as path, ExitStack() as cleanup:
        watch = cleanup.enter_context(CompileWatch(progress))
        compiling = cleanup.enter_context(first_kernel_ahead(s))
        if compiling:  # (a first run: say so before counting, not after a silent wait)
            watch.announce(compiling)
        if tree_from is not None:
            start = Counted(tree_from.vocab, tree, None)
        elif vocab is None or init_model is not None:
            spool = cleanup.enter_context(TokenSpool()) if s.spool else None
            start = _counted(path, corpus, s, init_model, grow, spool, progress, count_memory)
            if start.tree is None:  # (a ready tree given with a corpus to count)
                start = start._replace(tree=tree)
        else:
            start = Counted(_given_vocab(vocab, s, corpus), tree, None)
        seconds: dict[str, float] = {}
        tree, first_pass = start.tree, None
        if tree is None:
            began, compiled = time.perf_counter(), watch.seconds
            tree, first_pass = _make_tree(path, start.vocab, s, tree_from, progress,
                                          start.spool if start.spool and start.spool.usable
                                          else None, start.type_ids, start.per_epoch, saver)
            seconds["tree"] = time.perf_counter() - began - (watch.seconds - compiled)
            if first_pass is not None:  # (its seconds: the threads', compiles excluded)
                seconds["first_pass"] = first_pass.seconds["train"]
                seconds["tree"] -= seconds["first_pass"]
        model = _starting_model(start.vocab, tree, s, start.init_model, first_pass)
        spool = _kept(start.spool)
        # A run that counted the corpus checks each epoch against that count.
        position = Position(start.per_epoch or start.vocab.total, exact=start.per_epoch > 0)
        model.epoch_loss, seconds["train"] = run_epochs(path, model, s, progress, position, spool,
                                                         start.type_ids, saver)
        seconds["compile"] = watch.seconds
    check_converging(model)
    model.seconds = seconds
    model.skipped = start.skipped
    return model


class Counted(NamedTuple):
    """What a run starts from: the vocabulary, the tree if already known, the model
    it continues (grown, with ``grow``), and from counting the corpus: the token
    spool, each counted type's word id in the vocabulary, the words skipped, and
    the tokens an epoch trains (0 when not counted)."""

    vocab: Vocab
    tree: Tree | None
    init_model: Model | None
    spool: TokenSpool | None = None
    type_ids: list[np.ndarray] | None = None
    skipped: dict[str, int] | None = None
    per_epoch: int = 0


def _counted(path: Source, corpus: Source, s: TrainSettings, init_model: Model | None,
             grow: bool, spool: TokenSpool | None, progress: bool, count_memory: int | None
             ) -> Counted:
    """Count the corpus (into ``spool``): the vocabulary kept, or ``init_model``'s
    (grown by the corpus's words with ``grow``)."""
    counts = count_words(path, progress=progress, spool=spool, threads=s.threads,
                         min_count=1 if init_model else s.min_count, memory=count_memory)
    if counts.tokens == 0:
        raise HSW2VError(f"{describe(path)}: the corpus is empty (no words)")
    tree, skipped = None, None
    if init_model is None:
        vocab, word_ids = _pruned(counts, s.min_count, s.max_vocab, corpus)
        if model_kind(s.arch).language_model:
            vocab, word_ids = counts.marked_vocab(vocab, word_ids)
        per_epoch = vocab.total if not vocab.markers else counts.tokens + counts.lines
    else:
        if grow:
            init_model = grown_model(init_model, counts, s.min_count, s.max_vocab, s.seed)
        vocab, tree = init_model.vocab, init_model.tree
        word_ids, skipped = _model_ids(counts, vocab, corpus)
        per_epoch = counts.tokens - skipped["tokens"]
        if vocab.markers:  # (a word outside it is <unk>, and every line ends with </s>)
            skipped, per_epoch = None, counts.tokens + counts.lines
    return Counted(vocab, tree, init_model, spool, counts.spool_ids(word_ids, vocab.unknown_id),
                   skipped, per_epoch)


def _given_vocab(vocab: Vocab, s: TrainSettings, corpus: Source) -> Vocab:
    """A vocabulary given instead of counting, pruned by the run's settings."""
    vocab = vocab.pruned(s.min_count, s.max_vocab)
    check_vocab(vocab, s.min_count, corpus)
    if model_kind(s.arch).language_model and not vocab.markers:
        vocab = vocab.with_markers(1, 1)[0]  # (their counts are not known without counting)
    return vocab


def _starting_model(vocab: Vocab, tree: Tree, s: TrainSettings, init_model: Model | None,
                    first_pass: Model | None) -> Model:
    """The model the epochs start from: ``init_model``'s weights, or fresh ones (the
    word vectors and kind's matrices of a one-shot tree's ``first_pass``; with
    subwords, which that pass trains without, its word rows beside fresh n-gram
    rows: against a first pass with subwords, 12% less time for the same
    analogies, docs/benchmarks/peers.md)."""
    if len(tree) != len(vocab):
        raise HSW2VError(f"the tree has {len(tree)} leaves but the vocabulary {len(vocab)} words")
    release_free_memory()  # the counting pass's garbage, before the big allocations
    release_compiler_pages()
    if init_model is not None:  # (its input rows copied once, as one matrix with subwords)
        ngrams = init_model.ngram_vectors
        inputs = (init_model.vectors.copy() if ngrams is None
                  else np.concatenate([init_model.vectors, ngrams]))
        v = len(init_model.vectors)
        return Model(vocab, tree, inputs[:v], init_model.node_vectors.copy(), s,
                     extra={name: m.copy() for name, m in init_model.extra.items()},
                     history=list(init_model.history),
                     ngram_vectors=None if ngrams is None else inputs[v:])
    if first_pass is not None and first_pass.ngram_vectors is None and s.value("subwords"):
        model = fresh_model(vocab, tree, s)  # (the words' rows moved in, the n-grams' fresh)
        model.vectors[:] = first_pass.vectors
        first_pass.vectors = np.empty((0, first_pass.dim), dtype=np.float32)  # (freed)
        return model
    if first_pass is not None:  # its input rows and matrices; the inner nodes start afresh
        _, node_vectors = initial_weights(0, tree.n_leaves - 1, s.dim, s.seed, s.node_bias)
        return Model(vocab, tree, first_pass.vectors, node_vectors, s, extra=first_pass.extra,
                     ngram_vectors=first_pass.ngram_vectors)
    return fresh_model(vocab, tree, s)


def _kept(spool: TokenSpool | None) -> TokenSpool | None:
    """``spool`` if it could be kept; else None, with a warning: epochs read the text."""
    if spool is not None and not spool.usable:
        warnings.warn(f"the token spool in {tempfile.gettempdir()} could not be kept "
                      f"({spool.failure}); each epoch reads the text again", stacklevel=3)
        return None
    return spool


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
    then = tree_pass_of(resume)
    if then is not None:
        return _resume_first_pass(corpus, resume, model, position, replace(then, threads=s.threads),
                                  saver, progress)
    if progress:
        say_resuming(resume, position, s.epochs)
    with rereadable(corpus) as path, first_kernel_ahead(s):
        model.epoch_loss, seconds = run_epochs(path, model, s, progress, position, None, None,
                                                saver)
    check_converging(model)
    model.seconds = {"train": seconds}
    return model


def _resume_first_pass(corpus: Source, resume: str, first_pass: Model, position: Position,
                       s: TrainSettings, saver: Checkpoints | None, progress: bool) -> Model:
    """Go on with a run saved in its first pass (checkpoint ``resume``): that pass
    to its end, the tree learned from it, then the run's epochs (settings ``s``)."""
    if progress:
        say_resuming(resume, position, first_pass.settings.epochs, "the first pass (on a Huffman "
                     "tree, for the tree this run learns)")
    with rereadable(corpus) as path, first_kernel_ahead(s):
        began = time.perf_counter()
        tree = _tree_after_first_pass(path, first_pass, s, position, progress, None, None, saver)
        built = time.perf_counter() - began - first_pass.seconds["train"]
        model = _starting_model(first_pass.vocab, tree, s, None, first_pass)
        model.epoch_loss, seconds = run_epochs(path, model, s, progress,
                                               Position(position.per_epoch, position.exact), None,
                                               None, saver)
    check_converging(model)
    model.seconds = {"first_pass": first_pass.seconds["train"], "tree": built, "train": seconds}
    return model


def _before_tree(builder: TreeBuilder, first_pass: Model) -> None:
    """Free what a tree's build does not read before it runs: the first pass's inner
    nodes (the run's start afresh) and, once the builder's kernels are loaded,
    LLVM's pages (:func:`release_compiler_pages`)."""
    first_pass.node_vectors = np.empty((0, first_pass.dim), dtype=np.float32)
    if builder.compile_kernels is not None:
        builder.compile_kernels(first_pass)
    release_free_memory()
    release_compiler_pages()


def _make_tree(path: Source, vocab: Vocab, s: TrainSettings, tree_from: Model | None,
               progress: bool, spool: TokenSpool | None = None,
               type_ids: list[np.ndarray] | None = None, per_epoch: int = 0,
               saver: Checkpoints | None = None) -> tuple[Tree, Model | None]:
    """The tree ``s.tree`` asks for, from its builder in the registry; and the model
    of the first pass, if one was trained here. A builder that learns from a
    model's context vectors uses ``tree_from``; without it, a first pass of
    ``s.tree_epochs`` on the builder's ``first_pass`` tree trains that model (one-shot), from the
    run's token ``spool`` if it has one, checkpointed by ``saver``."""
    kind = tree_for(s.tree, tree_from is not None)
    builder = tree_builder(kind)
    if builder.learns_from_model and tree_from is None:
        first = first_pass_settings(s)
        release_free_memory()  # the counting pass's garbage, before the first pass's weights
        first_pass = fresh_model(vocab, build_tree(first.tree, TreeInputs(
            vocab.words, vocab.counts, first)), first)
        position = Position(per_epoch or vocab.total, exact=per_epoch > 0)
        tree = _tree_after_first_pass(path, first_pass, s, position, progress, spool, type_ids,
                                      saver)
        return tree, first_pass
    return build_tree(kind, TreeInputs(vocab.words, vocab.counts, s, tree_from, path)), None


def _tree_after_first_pass(path: Source, first_pass: Model, s: TrainSettings, position: Position,
                           progress: bool, spool: TokenSpool | None,
                           type_ids: list[np.ndarray] | None, saver: Checkpoints | None) -> Tree:
    """Train the first pass ``first_pass`` (on a Huffman tree, with its own settings)
    from ``position`` to its end, then learn the run's tree (``s.tree``) from it, over
    the run's token ``spool`` where it has one (the text is not encoded again).
    Its checkpoints hold the run's settings ``s``, so a resumed run goes on from
    the pass to the tree and the run's epochs."""
    kind = tree_for(s.tree, False)
    with about(compiled_words(s, kind), whole=True):
        if saver is not None:
            saver.then = s
        try:
            first_pass.epoch_loss, seconds = run_epochs(
                path, first_pass, first_pass.settings, progress, position, spool, type_ids, saver,
                stage="tree pass")
        finally:
            if saver is not None:
                saver.then = None
        first_pass.seconds = {"train": seconds}
        check_converging(first_pass)
        if progress:  # (a pass over the text and the splits: a second or more)
            sys.stderr.write(f"hsw2v: learning the {kind} tree from the first pass's "
                             "context vectors\n")
        wait_for_tree_kernels(s)
        _before_tree(tree_builder(kind), first_pass)
        tokens = None if spool is None else \
            partial(spool.blocks, type_ids, line_end=first_pass.vocab.end_id)
        return build_tree(kind, TreeInputs(first_pass.vocab.words, first_pass.vocab.counts, s,
                                           first_pass, path, tokens))
