"""Training on a Dask cluster (``hsw2v train --engine dask``): data-parallel,
synchronous rounds with parameter averaging.

- **Shards.** The corpus's files (or URLs); workers read them themselves, and no
  text passes through the client.
- **Counting.** One ``count-shard`` task per file (the bounded, exact counting of
  :func:`hsw2v.corpus.count_words`), merged by a binary tree of ``merge-counts``
  tasks on the workers; the client receives only the vocabulary, and builds the
  tree and scatters both.
- **Training.** Each epoch's text is cut into slices of about ``round_words``
  words (byte ranges of uncompressed local files; a compressed file or a URL is
  one slice). A
  round gives each worker one slice: ``train-round`` trains a replica from the
  global weights with the local trainer's threads and returns what it changed;
  ``combine`` tasks sum the changes pairwise in a fixed tree, and ``apply`` moves
  each row by that sum, scaled down towards the replicas' mean change for rows
  they all updated many times (see :func:`apply`). Local Hogwild threads add
  their steps to shared weights, and the sum does that for most rows; but P
  replicas' changes of a frequent row, each made from the same start, overshoot
  when added (4 workers diverged), while the mean of every row, as Spark's
  Word2Vec takes it, divides the rare rows' steps by P (see README, "Beyond one
  machine"). The new global weights are made on a worker and stay there; the
  next round's tasks fetch them from it. The client receives a few numbers a
  round, and the weights only at the end.
- **Faults.** Every task is a pure function of its inputs (weights, slice,
  schedule position, seed), so a task lost with its worker is run again
  elsewhere with the same result.
"""
from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from .checkpoint import Checkpoints, Position, load_checkpoint
from .cluster import connect, task_key, tree_reduce
from .corpus import WordCounts, WordTable, count_words
from .counter import merge_two
from .errors import HSW2VError
from .model import Model
from .progress import progress_bar
from .reader import COMPRESSED, Slice, corpus_files, describe, is_url
from .settings import ROUND_WORDS, TrainSettings, available_cores
from .softmax import subtree_totals
from .tokens import TypeArrays
from .trainer import (
    _carried,
    _run_epochs,
    check_converging,
    check_vocab,
    initial_weights,
    keep_probabilities,
)
from .tree import Tree, build_tree
from .vocab import Vocab

SHARD_SHIFT = 44
"""First-occurrence keys of shard i start at ``i << SHARD_SHIFT``: ties in count keep
the order of the shards' concatenation (a shard holds < 2**20 blocks, 1 TiB)."""


# --- tasks (run on the workers) ---------------------------------------------------

def list_shards(corpus: list[str]) -> list[str]:
    """The files that CORPUS names, as the workers see them."""
    files = corpus_files(corpus)
    if "-" in files:
        raise HSW2VError("--engine dask reads files or URLs, not stdin (-)")
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
    if path.endswith(COMPRESSED) or is_url(path):
        return counts.tokens, -1
    return counts.tokens, os.path.getsize(path)


def merge_shard_counts(a: WordCounts, b: WordCounts) -> WordCounts:
    """Two shards' (or subtrees') counts as one."""
    types, n = merge_two(TypeArrays(a.word_bytes, a.offsets, a.counts, a.first),
                         TypeArrays(b.word_bytes, b.offsets, b.counts, b.first))
    return WordCounts(*types, a.tokens + b.tokens, n)


def vocabulary(counts: WordCounts, min_count: int, max_vocab: int | None) -> tuple[Vocab, int, int]:
    """The vocabulary kept, the corpus's tokens and its distinct words."""
    return counts.to_vocab(min_count, max_vocab), counts.tokens, counts.n_types


@dataclass
class Job:
    """What every ``train-round`` task shares (scattered once): the vocabulary, tree
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
    below = np.empty(len(vocab) - 1, dtype=np.float64)
    subtree_totals(tree.children, tree.inner_order, kept.astype(np.float64), below)
    pairs = s.window + 1
    return kept * pairs, below * (pairs if s.arch == "skipgram" else 1)


class Weights(NamedTuple):
    """The global weights between rounds."""

    syn0: np.ndarray
    syn1: np.ndarray


class Update(NamedTuple):
    """What replicas changed in a round (summed over them: ``syn0``, ``syn1``), and
    the round's words, loss sum, examples and number of replicas."""

    syn0: np.ndarray
    syn1: np.ndarray
    words: int
    loss_sum: float
    examples: int
    replicas: int = 1


def first_weights(job: Job) -> Weights:
    """The starting weights, as a local run with the same seed has them."""
    s = job.settings
    return Weights(*initial_weights(len(job.vocab), s.dim, s.seed))


_TABLES: dict[str, WordTable] = {}
"""The word table of the run a worker trains (built once per run, not per round)."""


def train_slice(job: Job, weights: Weights, part: str | Slice | list, epoch: int,
                words_before: int, words: int, index: int) -> Update:
    """Train a replica of ``weights`` on slice number ``index`` of the epoch, with the
    learning rate of words ``words_before..words_before+words`` of the run; its update."""
    s = replace(job.settings, epochs=epoch + 1)
    table = _TABLES.get(job.token)
    if table is None:  # (a worker running two tasks at once may build it twice)
        table = WordTable(job.vocab.words)
        _TABLES.clear()
        _TABLES[job.token] = table
    model = Model(job.vocab, job.tree, weights.syn0.copy(), weights.syn1.copy(), s)
    seeds = np.random.SeedSequence([s.seed, epoch, index]).generate_state(s.threads, np.uint64)
    position = Position(max(words, 1), exact=False, epoch=epoch, words=words_before,
                        loss_sum=[0.0] * (epoch + 1), examples=[0] * (epoch + 1),
                        rng=[int(x) for x in seeds])
    _run_epochs(part, model, s, False, position, schedule=job.schedule, table=table)
    model.vectors -= weights.syn0
    model.node_vectors -= weights.syn1
    return Update(model.vectors, model.node_vectors, position.words - words_before,
                  position.loss_sum[epoch], position.examples[epoch])


def warm_up(job: Job) -> None:
    """Build the word table and load the kernels (a slice of nothing), so that the
    first round does not wait for them."""
    train_slice(job, first_weights(job), [], 0, 0, 1, 0)


def combine(a: Update, b: Update) -> Update:
    """Two updates as one (sums)."""
    return Update(a.syn0 + b.syn0, a.syn1 + b.syn1, a.words + b.words, a.loss_sum + b.loss_sum,
                  a.examples + b.examples, a.replicas + b.replicas)


MEAN_VISITS = 2000
"""A row that the replicas of a round update about this many times in all moves by
about the midpoint of their summed and their mean change (see :func:`apply`)."""


def apply(weights: Weights, update: Update, job: Job) -> Weights:
    """The next global weights. Each row moves by the replicas' summed change times
    ``1/P + (1 - 1/P) / (1 + P·v / MEAN_VISITS)``, where P is the number of
    replicas and v the number of times each updated the row, as expected from the
    word counts. A row updated a few times takes the sum of the steps, as a local
    run's Hogwild threads add theirs; a row updated thousands of times (frequent
    words, the nodes near the root) takes the mean of the replicas' changes, each
    an estimate of one move made from the same start: their sum overshoots (with
    4 workers, CBOW diverged when only rows past 10,000 updates took the mean)."""
    p, out = update.replicas, []
    for w, change, visits in ((weights.syn0, update.syn0, job.visits[0]),
                              (weights.syn1, update.syn1, job.visits[1])):
        together = visits * update.words  # updates of the row by all the replicas
        share = (1 / p + (1 - 1 / p) / (1 + together / MEAN_VISITS)).astype(np.float32)
        out.append(w + change * share[:, None])
    return Weights(*out)


def round_totals(u: Update) -> tuple[int, float, int]:
    """A round's words, loss sum and examples (the client's only per-round data)."""
    return u.words, u.loss_sum, u.examples


# --- the client ----------------------------------------------------------------------

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
                  workers: int | None = None, round_words: int = ROUND_WORDS,
                  count_memory: int | None = None, progress: bool = True,
                  checkpoint: str | None = None, checkpoint_every: float = 30.0,
                  resume: str | None = None, **settings) -> Model:
    """Train on a Dask cluster (see the module's notes); the settings are those of
    :func:`hsw2v.trainer.train`, with ``threads`` per worker (default: a
    LocalCluster's share of the cores, or the workers' own thread count).
    ``checkpoint`` saves the global weights and the run's position between rounds
    (gathered to the client every ``checkpoint_every`` minutes and after each
    epoch); ``resume`` continues such a run, with the same result."""
    saver = Checkpoints(checkpoint, checkpoint_every) if checkpoint else None
    state = load_checkpoint(resume) if resume else None
    if state and not state[1].round_slices:
        raise HSW2VError(f"{resume}: a checkpoint of a local run; resume it without --engine dask")
    if round_words < 1:
        raise HSW2VError(f"--round-words must be at least 1, got {round_words}")
    local_threads = max(1, available_cores() // workers) if workers and not scheduler else None
    threads = settings.pop("threads", None) or local_threads
    with connect(client, scheduler, None if client is not None else workers) as c:
        if threads is None:
            threads = min(w["nthreads"] for w in c.scheduler_info()["workers"].values())
        if state:
            s = _carried(state[0].settings, {**settings, "threads": threads}, ("threads",),
                         f"{resume}: a resumed run keeps the checkpoint's")
        else:
            s = TrainSettings(threads=threads, **settings).resolved()
        if s.tree == "semantic":
            raise HSW2VError("--engine dask builds huffman, balanced, random or fano trees; "
                             "learn a semantic tree locally and train with --init-model")
        pending: list = []
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


def _train(c: Any, corpus: list[str], s: TrainSettings, round_words: int, count_memory: int | None,
           progress: bool, pending: list, saver: Checkpoints | None,
           state: tuple[Model, Position] | None) -> Model:
    """Count, build the tree, train in rounds (see :func:`train_on_dask`)."""
    start = time.perf_counter()
    shards = c.submit(list_shards, corpus, key=task_key("list-shards")).result()
    counts = [c.submit(count_shard, path, i, s.threads, count_memory, key=task_key("count-shard"))
              for i, path in enumerate(shards)]
    sizes = [c.submit(shard_size, path, n, key=task_key("shard-size")) for path, n in zip(shards, counts)]
    pending += counts + sizes
    total = tree_reduce(c, merge_shard_counts, counts, "merge-counts")
    vocab, tokens, _ = c.submit(vocabulary, total, s.min_count, s.max_vocab,
                                key=task_key("vocabulary")).result()
    sizes = c.gather(sizes)
    del counts, total
    pending.clear()
    if tokens == 0:
        raise HSW2VError(f"{describe(shards)}: the corpus is empty (no words)")
    check_vocab(vocab, s.min_count, describe(shards))
    if state and (vocab.words != state[0].words or list(vocab.counts) != list(state[0].vocab.counts)):
        raise HSW2VError(f"{describe(shards)}: the corpus changed since the checkpoint was saved")
    tree = state[0].tree if state else build_tree(s.tree, vocab.counts, s.seed)
    per_epoch = vocab.total
    slices = epoch_slices(shards, sizes, round_words, per_epoch / tokens)
    plan = Job(uuid.uuid4().hex, vocab, tree, s, s.epochs * per_epoch, row_visits(vocab, tree, s))
    [job] = c.scatter([plan], broadcast=True)
    if state:
        [weights] = c.scatter([Weights(state[0].vectors, state[0].node_vectors)])
    else:
        weights = c.submit(first_weights, job, key=task_key("first-weights"))
    c.gather([c.submit(warm_up, job, key=task_key("warm-up"), workers=[w], pure=False)
              for w in c.scheduler_info()["workers"]])
    seconds = {"count": time.perf_counter() - start}
    start = time.perf_counter()
    at = state[1] if state else Position(per_epoch, False, loss_sum=[0.0] * s.epochs,
                                         examples=[0] * s.epochs)
    loss_sum, examples, done = at.loss_sum, at.examples, at.words
    bar = progress_bar(progress, total=s.epochs * per_epoch, initial=done, unit="word",
                       unit_scale=True, desc="train", smoothing=0.1)
    rounds: list = []  # (epoch, totals future) of rounds submitted, not yet counted

    def account(epoch: int, totals) -> None:
        nonlocal done
        n, loss, ex = totals.result()
        loss_sum[epoch] += loss
        examples[epoch] += ex
        done += n
        alpha = max(s.min_alpha, s.alpha - (s.alpha - s.min_alpha) * done / (s.epochs * per_epoch))
        bar.set_postfix(alpha=f"{alpha:.5f}", loss=f"{loss_sum[epoch] / max(examples[epoch], 1):.4f}",
                        workers=len(c.scheduler_info()["workers"]), refresh=False)
        bar.update(min(n, bar.total - bar.n))

    # Slices a round: fixed (and kept in checkpoints), so that a lost worker
    # changes where the tasks run, never what they compute.
    width = at.round_slices or len(c.scheduler_info()["workers"])

    def save(epoch: int, next_slice: int) -> None:  # every round submitted, counted
        while rounds:
            account(*rounds.pop(0))
        w = weights.result()
        saver.save(Model(vocab, tree, w.syn0, w.syn1, s),
                   Position(per_epoch, False, epoch, next_slice, 0, done, loss_sum, examples,
                            [], width))

    try:
        for epoch in range(at.epoch, s.epochs):
            first = at.blocks if epoch == at.epoch else 0
            before = epoch * per_epoch + sum(words for _, words in slices[:first])
            for r in range(first, len(slices), width):
                names = list(c.scheduler_info()["workers"]) or [None]
                replicas = []
                for k in range(r, min(r + width, len(slices))):
                    part, words = slices[k]
                    where = {"workers": [names[(k - r) % len(names)]], "allow_other_workers": True}
                    replicas.append(c.submit(train_slice, job, weights, part, epoch, before, words,
                                             k, key=task_key("train-round"),
                                             **(where if names[0] else {})))
                    before += words
                update = tree_reduce(c, combine, replicas, "combine")
                weights = c.submit(apply, weights, update, job, key=task_key("apply"))
                rounds.append((epoch, c.submit(round_totals, update, key=task_key("round-totals"))))
                pending[:] = [weights, update, *replicas]
                if len(rounds) > 1:  # the client stays one round behind the workers
                    account(*rounds.pop(0))
                if saver and r + width < len(slices) and saver.due():
                    save(epoch, r + width)
            if saver:
                save(epoch + 1, 0)
        while rounds:
            account(*rounds.pop(0))
        final = weights.result()
    finally:
        bar.close()
    model = Model(vocab, tree, np.array(final.syn0), np.array(final.syn1), s)
    model.epoch_loss = [loss_sum[e] / max(examples[e], 1) for e in range(s.epochs)]
    model.seconds = {**seconds, "train": time.perf_counter() - start}
    check_converging(model)
    return model
