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

from .corpus import TokenSpool, WordTable, count_words
from .errors import HSW2VError
from .memory import release_compiler_pages, release_free_memory
from .model import Model
from .progress import progress_bar
from .reader import BLOCK_BYTES, Source, describe, iter_blocks, rereadable
from .semantic import context_means, semantic_tree
from .settings import TREE_KINDS, TrainSettings
from .sgd import Config, Weights, new_state, train_block
from .tree import Tree, build_tree
from .utils import for_dim
from .vocab import Vocab
from .word2vec_format import warm_up_writer


def build_vocab(corpus: Source, min_count: int = 5, max_vocab: int | None = None,
                progress: bool = False) -> tuple[Vocab, int]:
    """Count the corpus in one pass; return the pruned vocabulary and the token count."""
    vocab, tokens, _ = _count(corpus, min_count, max_vocab, progress, None)
    return vocab, tokens


def _count(corpus: Source, min_count: int, max_vocab: int | None, progress: bool,
           spool: TokenSpool | None) -> tuple[Vocab, int, np.ndarray]:
    """:func:`build_vocab`, also giving each counted type's word id (or -1)."""
    counts = count_words(corpus, progress=progress, spool=spool)
    if counts.tokens == 0:
        raise HSW2VError(f"{describe(corpus)}: the corpus is empty (no words)")
    vocab = counts.to_vocab(min_count, max_vocab)
    check_vocab(vocab, min_count, corpus)
    return vocab, counts.tokens, counts.type_ids(min_count, max_vocab)


def check_vocab(vocab: Vocab, min_count: int, corpus: Source) -> None:
    """A tree needs two words: say which setting to change when there are fewer."""
    if len(vocab) == 0:
        raise HSW2VError(f"{describe(corpus)}: no word occurs at least {min_count} times; lower --min-count")
    if len(vocab) == 1:
        raise HSW2VError(
            f"{describe(corpus)}: only one word ({vocab.words[0]!r}) occurs at least {min_count} times; "
            "hierarchical softmax needs two; lower --min-count"
        )


def keep_probabilities(counts: np.ndarray, sample: float) -> np.ndarray:
    """word2vec.c's subsampling: P(keep) = (sqrt(c / (s·N)) + 1) · s·N / c, capped at 1."""
    counts = counts.astype(np.float64)
    if sample <= 0:
        return np.ones(len(counts), dtype=np.float32)
    threshold = sample * counts.sum()
    keep = (np.sqrt(counts / threshold) + 1.0) * threshold / counts
    return np.minimum(keep, 1.0).astype(np.float32)


def train(corpus: Source, *, vocab: Vocab | None = None, tree: Tree | str | None = None,
          tree_from: Model | None = None, progress: bool = True, **settings) -> Model:
    """Train word vectors on ``corpus``: a path (plain, .gz or .bz2; ``-`` for stdin)
    or a list of them, read in order (see :func:`hsw2v.reader.corpus_files`).

    Keyword settings are those of :class:`TrainSettings`. ``vocab`` skips counting;
    ``tree`` is a kind (see :class:`TrainSettings`) or a ready :class:`Tree` over that
    vocabulary. With ``tree="semantic"`` the
    tree is learned from ``tree_from`` (whose vocabulary is then used) or, without
    it, from a first training pass with a Huffman tree (one-shot mode).
    Returns the :class:`Model`, with the mean loss of each epoch in ``epoch_loss``.
    """
    if isinstance(tree, str):
        settings["tree"], tree = tree, None
    s = TrainSettings(**settings).resolved()
    if tree is not None and (kind := tree.kind.partition("-")[0]) in TREE_KINDS:
        s = replace(s, tree=kind)  # recorded with the model: the kind of the tree given
    with rereadable(corpus) as path, ExitStack() as cleanup:
        spool, type_ids = None, None
        if tree_from is not None:
            vocab = tree_from.vocab
        elif vocab is None:
            spool = cleanup.enter_context(TokenSpool()) if s.spool else None
            vocab, _, type_ids = _count(path, s.min_count, s.max_vocab, progress, spool)
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
        vectors = np.random.default_rng(s.seed).random((len(vocab), s.dim), dtype=np.float32)
        vectors -= 0.5
        vectors /= s.dim  # uniform in ±0.5/dim, as word2vec.c
        node_vectors = np.zeros((len(vocab) - 1, s.dim), dtype=np.float32)
        model = Model(vocab, tree, vectors, node_vectors, s)
        if spool is not None and not spool.usable:
            warnings.warn(f"the token spool in {tempfile.gettempdir()} could not be kept "
                          f"({spool.failure}); each epoch reads the text again", stacklevel=2)
            spool = None
        counted = vocab.total if type_ids is not None else None
        model.epoch_loss, seconds["train"] = _run_epochs(path, model, s, progress, spool, type_ids,
                                                         counted)
    check_converging(model)
    model.seconds = seconds
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
                         f"lower --alpha (it was {s.alpha:g})")


def _make_tree(path: Source, vocab: Vocab, s: TrainSettings, tree_from: Model | None,
               progress: bool) -> Tree:
    """The tree ``s.tree`` asks for; a semantic one clusters mean context vectors."""
    if s.tree != "semantic":
        if tree_from is not None:
            raise HSW2VError("--tree-from goes with --tree semantic")
        return build_tree(s.tree, vocab.counts, s.seed)
    if tree_from is None:  # one-shot: a first pass with a Huffman tree
        first = {**asdict(s), "tree": "huffman"}
        tree_from = train(path, vocab=vocab, progress=progress, **first)
    elif tree_from.dim < 1 or len(tree_from.vocab) < 2:
        raise HSW2VError("--tree-from: the model has no usable vectors")
    return semantic_tree(context_means(tree_from, path), s.split)


HOT_NODES = 1024
"""With several threads, each thread trains its own copy of the inner nodes
visited most (those near the root) and merges it every HOT_SYNC_WORDS words."""
HOT_SYNC_WORDS = 2048


def hot_inner_nodes(tree: Tree, counts: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` inner nodes on the most word tokens' paths, and each inner node's
    slot among them (-1 for the others)."""
    n_inner = len(tree) - 1
    k = min(k, n_inner)
    visits = np.bincount(tree.path_nodes, weights=np.repeat(counts, tree.depths), minlength=n_inner)
    hot = np.sort(np.argsort(-visits, kind="stable")[:k]).astype(np.int32)
    slot = np.full(n_inner, -1, dtype=np.int32)
    slot[hot] = np.arange(k, dtype=np.int32)
    return hot, slot


def _run_epochs(path: Source, model: Model, s: TrainSettings, progress: bool,
                spool: TokenSpool | None = None, type_ids: np.ndarray | None = None,
                counted: int | None = None) -> tuple[list[float], float]:
    """Stream the corpus ``s.epochs`` times through the worker threads; return each
    epoch's mean loss and the seconds from the threads' start to their end.

    ``counted``, the vocabulary's tokens when this run counted the corpus, is checked
    against each epoch read from the text: a corpus that changed since fails.

    The blocks come from ``spool`` (with ``type_ids``, see :meth:`TokenSpool.blocks`)
    if given; otherwise the text is read and encoded again each epoch."""
    vocab, tree = model.vocab, model.tree
    if spool is None:
        table = WordTable(vocab.words)
        table.encode(b"")  # loads the encoding kernel before LLVM's pages go (below)
        epoch_blocks = lambda: map(table.encode, iter_blocks(path))
    else:
        spool.warm_up()
        epoch_blocks = lambda: spool.blocks(type_ids)
    keep = keep_probabilities(vocab.counts, s.sample)
    planned = s.epochs * vocab.total
    loss_sum = [0.0] * s.epochs
    examples = [0] * s.epochs
    done = [0]
    lock = threading.Lock()
    jobs: queue.Queue = queue.Queue(maxsize=2 * s.threads)
    failures: list[BaseException] = []

    def alpha_at(words: int) -> float:
        return max(s.min_alpha, s.alpha - (s.alpha - s.min_alpha) * words / planned)

    hot_nodes, hot_slot = hot_inner_nodes(tree, vocab.counts, HOT_NODES if s.threads > 1 else 0)
    weights = Weights(model.vectors, model.node_vectors, hot_nodes, hot_slot)
    config = Config(int(s.window), bool(s.cbow_mean), s.arch == "skipgram", HOT_SYNC_WORDS)
    paths = tree.flat
    longest = int(tree.depths.max())
    states = [new_state((s.seed * 7919 + 17 * (t + 1)) % 2**64, BLOCK_BYTES // 2 + 2, s.window, longest,
                        model.node_vectors[hot_nodes]) for t in range(s.threads)]
    # Load everything this run will call, then hand LLVM's pages back (see memory.py).
    none = np.empty(0, np.int32)
    kernel = for_dim(train_block, none, np.empty(0, np.int64), 0, 0.0, 0.0, keep, weights, paths,
                     config, states[0], s.dim)
    warm_up_writer(s.dim)
    release_compiler_pages()

    def worker(state) -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if failures:
                continue
            epoch, ids, ends, a0, a1 = job
            if len(ids) > len(state.sentence):
                state = state._replace(sentence=np.empty(len(ids), dtype=np.int32),
                                       positions=np.empty(len(ids), dtype=np.int64))
            try:
                loss, n = kernel(ids, ends, len(ends), float(a0), float(a1), keep, weights, paths,
                                 config, state, s.dim)
            except BaseException as e:  # noqa: BLE001 (re-raised by the main thread)
                failures.append(e)
                continue
            with lock:
                loss_sum[epoch] += loss
                examples[epoch] += n
                done[0] += len(ids)

    threads = [threading.Thread(target=worker, args=(state,), daemon=True) for state in states]
    start = time.perf_counter()
    for t in threads:
        t.start()
    bar = progress_bar(progress, total=planned, unit="word", unit_scale=True, desc="train",
                       smoothing=0.1)
    shown = 0
    dispatched = 0
    try:
        for epoch in range(s.epochs):
            if failures:
                break
            epoch_start = dispatched
            for ids, ends in epoch_blocks():
                if len(ids) == 0:
                    continue
                if counted is not None and dispatched + len(ids) - epoch_start > counted:
                    break
                a0, a1 = alpha_at(dispatched), alpha_at(dispatched + len(ids))
                dispatched += len(ids)
                jobs.put((epoch, ids, ends, a0, a1))
                if failures:
                    break
                shown = _refresh(bar, shown, done, loss_sum, examples, alpha_at, lock)
            if counted is not None and dispatched - epoch_start != counted and not failures:
                failures.append(HSW2VError(
                    f"{describe(path)}: the corpus changed since it was counted ({counted} words in the "
                    f"vocabulary then, {dispatched - epoch_start}+ in epoch {epoch + 1})"))
    finally:
        for _ in threads:
            jobs.put(None)
        for t in threads:
            t.join()
        _refresh(bar, shown, done, loss_sum, examples, alpha_at, lock)
        bar.close()
    seconds = time.perf_counter() - start
    if failures:
        raise failures[0]
    return [loss_sum[e] / max(examples[e], 1) for e in range(s.epochs)], seconds


def _refresh(bar, shown, done, loss_sum, examples, alpha_at, lock) -> int:
    """Advance the bar to the words trained so far; show alpha and the running loss
    of the latest epoch that has trained examples."""
    with lock:
        now = done[0]
        epoch = max((e for e, n in enumerate(examples) if n), default=0)
        loss = loss_sum[epoch] / examples[epoch] if examples[epoch] else float("nan")
    if now > shown:
        bar.set_postfix(epoch=epoch + 1, alpha=f"{alpha_at(now):.5f}", loss=f"{loss:.4f}",
                        refresh=False)
        bar.update(now - shown)
    return now
