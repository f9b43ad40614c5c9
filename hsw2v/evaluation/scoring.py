"""Held-out scoring: the mean −log P(target | context) of a model on a corpus, and
its perplexity."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hsw2v.counting.corpus import WordTable
from hsw2v.errors import HSW2VError
from hsw2v.hs.codes import word_log_prob
from hsw2v.hs.softmax import context_mean, gather_context
from hsw2v.jit.helpers import JIT
from hsw2v.settings import MAX_WINDOW
from hsw2v.text.reader import iter_blocks


@njit(**JIT)
def score_block(ids, sent_ends, n_sents, syn0, syn1, paths, window, skipgram, cbow_mean, h, ctx):
    """Held-out −log P over one block: the full window, no shrink, no subsampling.

    Examples are as in training (skip-gram: each centre/context pair; CBOW: each
    word with a context). ``h`` is (1, D) and ``ctx`` 2·window scratch. Returns
    (sum of −log P, number of examples).
    """
    loss = 0.0
    n = 0
    start = 0
    for s in range(n_sents):
        end = sent_ends[s]
        for i in range(start, end):
            n_ctx = gather_context(ids, max(start, i - window), min(end, i + window + 1), i, ctx)
            if n_ctx == 0:
                continue
            if skipgram:
                for k in range(n_ctx):
                    loss -= word_log_prob(syn0[ctx[k]:ctx[k] + 1], ids[i], syn1, paths)
                n += n_ctx
            else:
                context_mean(syn0, ctx, n_ctx, cbow_mean, h[0], syn0.shape[1])
                loss -= word_log_prob(h, ids[i], syn1, paths)
                n += 1
        start = end
    return loss, n


def score(model, corpus: str, window: int | None = None) -> dict:
    """Mean −log P(target | context) and perplexity of ``model`` on held-out ``corpus``.

    Uses the model's window at full width (no random shrink) and no subsampling,
    so that models are comparable on the same file. Words outside the vocabulary
    are dropped, as in training.
    """
    window = window or model.settings.window
    if not 1 <= window <= MAX_WINDOW:
        raise HSW2VError(f"--window must lie in 1..{MAX_WINDOW}, got {window}")
    skipgram = model.arch == "skipgram"
    table = WordTable(model.vocab.words)
    h = np.empty((1, model.dim), dtype=np.float32)
    ctx = np.empty(2 * window, dtype=np.int32)
    loss, examples, words = 0.0, 0, 0
    for block in iter_blocks(corpus):
        ids, ends = table.encode(block)
        words += len(ids)
        block_loss, n = score_block(ids, ends, len(ends), model.vectors, model.node_vectors,
                                    model.tree.flat, window, skipgram, model.settings.cbow_mean,
                                    h, ctx)
        loss += block_loss
        examples += n
    if examples == 0:
        raise HSW2VError(f"{corpus}: no word of the vocabulary has a context to score")
    mean = loss / examples
    return {"loss": mean, "perplexity": math.exp(mean), "examples": examples, "words": words,
            "window": window, "arch": model.arch}
