"""Held-out scoring: the mean −log P(target | context) of a model on a corpus, and
its perplexity."""
from __future__ import annotations

import math
import os
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from ..counting.corpus import WordTable
from ..errors import HSW2VError, param
from ..hs.codes import word_log_prob
from ..jit.helpers import JIT
from ..settings import MAX_WINDOW
from ..text.reader import as_source, corpus_files, iter_blocks
from ..training.kinds import model_kind
from ..training.steps import context_rows
from ..training.walk import make_walk

LARGEST_EXPONENT = math.log(np.finfo(np.float64).max)
"""A mean −log P above this many nats (709.78) has an infinite perplexity in float64."""


class HeldOutScore(NamedTuple):
    """The walk's visitor when scoring: the kind's config, the model's weights, and
    ``H``, scratch for the context matrix (2·window rows)."""

    config: Any
    syn0: np.ndarray
    syn1: np.ndarray
    paths: Any
    H: np.ndarray
    extra: tuple  # the kind's other matrices


@njit(**JIT, inline="always")
def _score_example(v, target, ctx, n_ctx, position, dim):
    """−log P(target | h) for each row h of the kind's context matrix."""
    n = context_rows(v.config, v.syn0, v.extra, ctx, n_ctx, v.H, dim)
    loss = 0.0
    for k in range(n):
        loss -= word_log_prob(v.H[k:k + 1], target, v.syn1, v.paths)
    return loss, n


_walk = make_walk(_score_example)


@njit(**JIT)
def score_block(ids, sent_ends, n_sents, keep, window, sen, sen_pos, ctx, visitor):
    """Held-out −log P over one block: the walk of training with the full window,
    and no subsampling when ``keep`` is all ones. Examples are the kind's (skip-gram:
    each centre/context pair; CBOW: each word with a context). Returns (sum of
    −log P, number of examples)."""
    loss, n, _ = _walk(ids, sent_ends, n_sents, keep, window, False, np.uint64(0), sen,
                            sen_pos, ctx, visitor, visitor.syn0.shape[1])
    return loss, n


def score(model, corpus: str | os.PathLike, window: int | None = None) -> dict:
    """Mean −log P(target | context) and perplexity of ``model`` on held-out ``corpus``.

    Uses the window at full width (no random shrink) and no subsampling, so that
    models are comparable on the same file. Words outside the vocabulary are
    dropped, as in training.

    Parameters
    ----------
    model
        A trained :class:`Model`.
    corpus
        A path of plain, .gz, .bz2 or .zst text.
    window
        The context's width (default: the model's).

    Returns
    -------
    dict
        ``loss`` (mean −log P per example), ``perplexity``, ``examples`` (the
        model kind's examples: skip-gram's (centre, context) pairs, CBOW's words
        with a context, LBL's tokens: every word of the vocabulary is predicted),
        ``words`` (the tokens in the vocabulary), ``dropped`` (the tokens outside
        it, dropped before contexts form, as in training), ``window`` and ``arch``.
    """
    corpus = as_source(corpus)
    if isinstance(corpus, str):  # (what train reads, and refuses, score does too)
        corpus = corpus_files([corpus])
    window = model.settings.window if window is None else window
    if not 1 <= window <= MAX_WINDOW:
        raise HSW2VError(f"{param('window')} must lie in 1..{MAX_WINDOW}, got {window}")
    if "window" in model_kind(model.arch).structural and window != model.settings.window:
        raise HSW2VError(f"a {model.arch} model predicts from its {model.settings.window} "
                         f"preceding words; drop {param('window', window)}")
    config = model_kind(model.arch).config_of(model.settings)._replace(window=window)
    table = WordTable(model.vocab.words)
    visitor = HeldOutScore(config, model.vectors, model.node_vectors, model.tree.flat,
                           np.empty((2 * window, model.dim), dtype=np.float32),
                           model.extra_matrices)
    keep = np.ones(len(model.vocab), dtype=np.float32)
    ctx = np.empty(2 * window, dtype=np.int32)
    loss, examples, words, tokens = 0.0, 0, 0, 0
    for block in iter_blocks(corpus):
        ids, ends = table.encode(block)
        words += len(ids)
        tokens += len(block.split())
        block_loss, n = score_block(ids, ends, len(ends), keep, window, np.empty_like(ids),
                                    np.empty(len(ids), dtype=np.int64), ctx, visitor)
        loss += block_loss
        examples += n
    if examples == 0:
        raise HSW2VError(f"{corpus}: no word of the vocabulary has a context to score")
    mean = loss / examples
    perplexity = math.exp(mean) if mean < LARGEST_EXPONENT else math.inf  # (exp overflows past it)
    return {"loss": mean, "perplexity": perplexity, "examples": examples, "words": words,
            "dropped": tokens - words, "window": window, "arch": model.arch}
