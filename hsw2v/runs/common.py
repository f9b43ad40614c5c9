"""What the local engine (:mod:`hsw2v.runs.trainer`) and the Dask engine
(:mod:`hsw2v.distributed`) share: the starting weights, the settings a continued
run may change, and the checks of a run's vocabulary and convergence."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..counting.vocab import Vocab
from ..errors import HSW2VError, param
from ..model.model import Model
from ..settings import TrainSettings, option_of
from ..text.reader import Source, describe
from ..training.kinds import model_kind
from ..trees.tree import Tree


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


def initial_weights(n_words: int, n_inner: int, dim: int, seed: int,
                    node_bias: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Word vectors uniform in ±0.5/dim (as word2vec.c) and zero vectors for the
    ``n_inner`` inner nodes (with ``node_bias``, one more column: each node's bias)."""
    vectors = np.random.default_rng(seed).random((n_words, dim), dtype=np.float32)
    vectors -= 0.5
    vectors /= dim
    return vectors, np.zeros((n_inner, dim + node_bias), dtype=np.float32)


def fresh_model(vocab: Vocab, tree: Tree, s: TrainSettings) -> Model:
    """A model of ``vocab`` on ``tree`` with its starting weights (with ``subwords``,
    the n-gram buckets' rows after the words' in one matrix, started alike)."""
    buckets = s.value("buckets") if s.value("subwords") else 0
    inputs, node_vectors = initial_weights(len(vocab) + buckets, tree.n_leaves - 1, s.dim, s.seed,
                                           s.node_bias)
    v = len(vocab)
    return Model(vocab, tree, inputs[:v] if buckets else inputs, node_vectors, s,
                 extra=model_kind(s.arch).extra_weights(len(vocab), s.dim, s),
                 ngram_vectors=inputs[v:] if buckets else None)


CONTINUED = ("window", "sample", "alpha", "min_alpha", "epochs", "threads", "seed", "spool")
"""The settings a run may change when it trains a model further (``init_model``)."""


def carried_settings(base: TrainSettings, given: dict, allowed: tuple[str, ...], why: str) -> TrainSettings:
    """``base`` with the ``allowed`` settings of ``given``; any other setting given
    with a different value is an error (``why`` says whose settings are kept)."""
    for name, value in given.items():
        if name not in allowed and value != base.value(name):
            raise HSW2VError(f"{why} {param(name)} ({base.value(name)}); "
                             f"drop {param(name, value, option_of(name, value))}")
    return replace(base, **{k: v for k, v in given.items() if k in allowed}).resolved()


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
