"""Held-out scoring: the mean −log P(target | context) of a model on a corpus, and
its perplexity."""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ..counting.corpus import WordTable
from ..errors import HSW2VError, param
from ..softmax.search import word_log_prob
from ..jit.helpers import KERNEL
from ..settings import MAX_WINDOW, available_cores, most_threads
from ..system.parallel import ordered_map
from ..system.parallel import read_ahead
from ..text.reader import as_source, corpus_files, describe, iter_blocks
from ..training.kinds import model_kind
from ..training.kind_dispatch import context_rows
from ..training.walk import make_walk

LARGEST_EXPONENT = math.log(np.finfo(np.float64).max)
"""A mean −log P above this many nats (709.78) has an infinite perplexity in float64."""


class HeldOutScore(NamedTuple):
    """The walk's visitor when scoring: the kind's config, the model's weights,
    ``H``, scratch for the context matrix (2·window rows), and ``token_loss``, where
    each example adds its −log P at its token's index in the block."""

    config: Any
    syn0: np.ndarray
    syn1: np.ndarray
    paths: Any
    H: np.ndarray
    extra: tuple  # the kind's other matrices
    token_loss: np.ndarray  # float64, one a token of the block


@njit(**KERNEL, inline="always")
def _score_example(v, target, ctx, n_ctx, position, dim):
    """−log P(target | h) for each row h of the kind's context matrix."""
    n = context_rows(v.config, v.syn0, v.extra, ctx, n_ctx, v.H, dim)
    loss = 0.0
    for k in range(n):
        loss -= word_log_prob(v.H[k:k + 1], target, v.syn1, v.paths)
    v.token_loss[position] += loss
    return loss, n


_walk = make_walk(_score_example)


@njit(**KERNEL)
def score_block(ids, sent_ends, n_sents, keep, window, sen, sen_pos, ctx, visitor):
    """Held-out −log P over one block: the walk of training with the full window,
    and no subsampling when ``keep`` is all ones. Examples are the kind's (skip-gram:
    each centre/context pair; CBOW: each word with a context). Adds each example's
    −log P to ``visitor.token_loss`` at its token. Returns (sum of −log P, number
    of examples)."""
    loss, n, _ = _walk(ids, sent_ends, n_sents, keep, window, False, np.uint64(0), sen,
                            sen_pos, ctx, visitor, visitor.syn0.shape[1])
    return loss, n


class LineScore(NamedTuple):
    """One line of a language model's held-out text, as KenLM's ``query`` counts it."""

    log10_prob: float
    """log10 P of its tokens, ``</s>`` included, each given the words before it."""
    tokens: int
    """Its tokens with ``</s>``."""
    oov: int
    """Its tokens outside the vocabulary (each scored as ``<unk>``)."""


class BlockScore(NamedTuple):
    """What scoring one block gives: its ids, sentence ends, −log P a token, the
    sum and the number of examples."""

    ids: np.ndarray
    ends: np.ndarray
    token_loss: np.ndarray
    loss: float
    examples: int


def _scorer(model, window: int):
    """A function scoring one block of text (:class:`BlockScore`), with scratch of its
    own: one a thread."""
    config = model_kind(model.arch).config_of(model.settings)._replace(window=window)
    table = WordTable.of_vocab(model.vocab)
    keep = np.ones(len(model.vocab), dtype=np.float32)
    H = np.empty((2 * window, model.dim), dtype=np.float32)
    ctx = np.empty(2 * window, dtype=np.int32)

    vectors = model.word_vectors  # (with subwords, each word's composed vector)

    def run(block: bytes) -> BlockScore:
        ids, ends = table.encode(block)
        token_loss = np.zeros(len(ids), dtype=np.float64)
        visitor = HeldOutScore(config, vectors, model.node_vectors, model.tree.flat, H,
                               model.extra_matrices, token_loss)
        loss, n = score_block(ids, ends, len(ends), keep, window, np.empty_like(ids),
                              np.empty(len(ids), dtype=np.int64), ctx, visitor)
        return BlockScore(ids, ends, token_loss, loss, n)
    return run


SCORE_BLOCK_BYTES = 1 << 18
"""Blocks of a quarter of training's (lines longer than half of one, 128 KiB, are
scored in parts): a held-out file of a few MB still gives every thread blocks."""


def _scored_blocks(model, corpus, window: int, threads: int) -> Iterator[tuple[bytes, BlockScore]]:
    """Each block of ``corpus`` with its score, in order; ``threads`` score blocks at once."""
    return ordered_map(lambda: _scorer(model, window),
                       read_ahead(iter_blocks(corpus, SCORE_BLOCK_BYTES), depth=2 + threads), threads)


def _line_scores(scored: BlockScore, unknown: int, end: int, pending: list
                 ) -> Iterator[LineScore]:
    """The lines a block ends (``pending``: [nats, tokens, oov] of a line that an
    earlier block began; a line longer than a block is scored in parts, its
    context starting again in each)."""
    ids, ends, token_loss = scored.ids, scored.ends, scored.token_loss
    if len(ends) == 0:
        return
    starts = np.concatenate(([0], ends[:-1]))
    nats = np.add.reduceat(token_loss, starts)
    oov = np.add.reduceat((ids == unknown).astype(np.int64), starts)
    for k in range(len(ends)):
        pending[0] += nats[k]
        pending[1] += int(ends[k] - starts[k])
        pending[2] += int(oov[k])
        if ids[ends[k] - 1] == end:
            yield LineScore(-pending[0] / LN10, pending[1], pending[2])
            pending[:] = [0.0, 0, 0]


LN10 = math.log(10)


def score(model, corpus: str | os.PathLike, window: int | None = None, threads: int | None = None,
          lines: Callable[[LineScore], None] | None = None) -> dict:
    """Held-out −log P of ``model`` on ``corpus``, and its perplexity.

    Uses the window at full width (no random shrink) and no subsampling, so that
    models are comparable on the same file. A language model (``arch="lbl"``)
    counts as KenLM's ``query`` does: every line ends with a predicted ``</s>``,
    and a word outside the vocabulary is ``<unk>``, scored like any word (models
    saved before these conventions drop such words, and predict no ``</s>``). The
    embedding kinds drop words outside the vocabulary, as in training.

    Parameters
    ----------
    model
        A trained :class:`Model`.
    corpus
        A path of plain, .gz, .bz2 or .zst text.
    window
        The context's width (default: the model's).
    threads
        Blocks scored at once (default: every core).
    lines
        Called with each line's :class:`LineScore`, in order, as the text streams
        (a language model with ``</s>`` only).

    Returns
    -------
    dict
        ``loss`` (mean −log P per example, in nats), ``perplexity``, ``examples``
        (the model kind's examples: skip-gram's (centre, context) pairs, CBOW's
        words with a context, LBL's tokens), ``window`` and ``arch``. A language
        model with ``</s>`` adds KenLM's figures: ``tokens`` (``</s>`` counted),
        ``oov``, ``log10_prob`` (the total), ``perplexity`` with the OOVs and
        ``perplexity_without_oov`` (their log-probabilities and count left out),
        and ``lines``. Otherwise ``words`` (the tokens in the vocabulary) and
        ``dropped`` (the tokens outside it).
    """
    model, window, threads = _checked(model, corpus, window, threads)
    corpus = as_source(corpus)
    if isinstance(corpus, str):  # (what train reads, and refuses, score does too)
        corpus = corpus_files([corpus])
    window = model.settings.window if window is None else window
    if not 1 <= window <= MAX_WINDOW:
        raise HSW2VError(f"{param('window')} must lie in 1..{MAX_WINDOW}, got {window}")
    if "window" in model_kind(model.arch).structural and window != model.settings.window:
        raise HSW2VError(f"a {model.arch} model predicts from its {model.settings.window} "
                         f"preceding words; drop {param('window', window)}")
    marked = model.vocab.markers
    if lines is not None and not marked:
        raise HSW2VError(f"{param('lines')} needs a language model whose lines end with </s> "
                         f"(--arch lbl, trained by this version)")
    threads = threads or available_cores()
    unknown, end = model.vocab.unknown_id, model.vocab.end_id
    loss, examples, ids_seen, tokens, oov, oov_nats, n_lines = 0.0, 0, 0, 0, 0, 0.0, 0
    pending = [0.0, 0, 0]
    for block, scored in _scored_blocks(model, corpus, window, threads):
        loss += scored.loss
        examples += scored.examples
        ids_seen += len(scored.ids)
        if marked:
            is_oov = scored.ids == unknown
            oov += int(is_oov.sum())
            oov_nats += float(scored.token_loss[is_oov].sum())
            n_lines += int((scored.ids == end).sum())
            if lines is not None:
                for line in _line_scores(scored, unknown, end, pending):
                    lines(line)
        else:
            tokens += len(block.split())
    if examples == 0:
        named = describe(corpus)
        if not (tokens or ids_seen):
            raise HSW2VError(f"{named}: the text is empty (no words to score)")
        raise HSW2VError(f"{named}: no word of the vocabulary has a context to score")
    mean = loss / examples
    result = {"loss": mean, "perplexity": _exp(mean), "examples": examples, "window": window,
              "arch": model.arch}
    if not marked:
        return {**result, "words": ids_seen, "dropped": tokens - ids_seen}
    kept = examples - oov
    return {**result, "tokens": examples, "oov": oov, "log10_prob": -loss / LN10,
            "perplexity_without_oov": _exp((loss - oov_nats) / kept) if kept else math.nan,
            "lines": n_lines}


def _checked(model: Any, corpus: Any, window: Any, threads: Any) -> tuple[Any, Any, Any]:
    """:func:`score`'s arguments checked, each wrong one an HSW2VError naming it; a
    model given as its file's path is loaded."""
    from ..model.model import Model
    from ..model.reading import load_model

    if isinstance(model, (str, os.PathLike)):
        model = load_model(os.fspath(model))
    elif not isinstance(model, Model):
        raise HSW2VError(f"{param('model')} must be a Model or the path of a model file, "
                         f"got {type(model).__name__}")
    if not isinstance(corpus, (str, os.PathLike)):
        raise HSW2VError(f"{param('corpus')} must be a path (a file, or '-' for stdin), "
                         f"got {type(corpus).__name__}")
    for name, value, high in (("window", window, MAX_WINDOW), ("threads", threads, most_threads())):
        if value is None:
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise HSW2VError(f"{param(name)} must be a whole number, got {value!r}")
        if not 1 <= value <= high:
            raise HSW2VError(f"{param(name)} must lie in 1..{high}, got {value}")
    return model, None if window is None else int(window), None if threads is None else int(threads)


def _exp(mean: float) -> float:
    """A perplexity: e^mean, infinite past float64's range."""
    return math.exp(mean) if mean < LARGEST_EXPONENT else math.inf
