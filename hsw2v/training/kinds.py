"""The model kinds, by name (``--arch``): the extension point for models.

A :class:`ModelKind` declares its config (a NamedTuple class of what its kernels
read; the *type* of the config value selects the kind's numba functions when the
block kernel compiles), its centre step, how it builds the context matrix H that
``predict``, ``score`` and the semantic trees use, its default learning rate and
Dask round length, and the parameter matrices it trains beyond the word vectors
and the inner-node vectors.

Adding a kind, without losing inlining:

1. write its module in this subpackage, named in the kind's ``module``: ``Config``, a NamedTuple with at least
   ``window`` and ``sync_every``; ``centre(config, target, ctx, n_ctx, alpha, syn0,
   syn1, hot_slot, hot_rows, paths, rows, pairs, path, dim) -> (loss, examples)``
   and ``context(config, syn0, ctx, n_ctx, H, dim) -> rows``, both
   ``njit(**KERNEL, inline="always")`` (call non-inlined helpers from them for big
   steps, as skip-gram does), named ``centre`` and ``context``; and ``config_of(settings)``;
2. add a :class:`ModelKind` to :data:`model_kinds`.

:func:`hsw2v.training.steps.centre_step` and ``context_rows`` are overloaded on the config's type,
so the block kernel compiled for a kind (:func:`hsw2v.training.block.block_kernel`)
contains that kind's steps inlined and nothing of the others. This module
imports no numba: the kinds' modules load when a kernel needs them, so
``hsw2v --help`` stays fast. The CLI's
``--arch`` choices, the settings' defaults, ``Weights``, the model file, Dask and
the tests all loop over :data:`model_kinds`; nothing else compares a kind's name.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from hsw2v.errors import HSW2VError, param


@dataclass(frozen=True)
class ModelKind:
    """A model kind: what ``--arch NAME`` trains."""

    name: str
    help: str
    module: str
    """The module with its ``Config``, ``config_of``, ``centre`` and ``context``."""
    alpha: float
    """Default starting learning rate."""
    round_words: int
    """Default words each Dask worker trains a round."""
    examples_per_context_word: bool
    """Whether an example is each (target, context word) pair (skip-gram) rather
    than each target (CBOW): how often a step visits the target's path."""
    matrices: Callable[[int, int, Any], dict[str, tuple[int, ...]]] = lambda n_words, dim, s: {}
    """The parameter matrices beyond the word vectors and inner-node vectors, by
    name, with their shapes, for a vocabulary of ``n_words`` and vectors of ``dim``."""

    def steps(self) -> ModuleType:
        """The kind's module (loads numba)."""
        return importlib.import_module(self.module)

    def config_of(self, settings: Any) -> Any:
        """The config the kind's kernels read, for a run's settings."""
        return self.steps().config_of(settings)


model_kinds: dict[str, ModelKind] = {
    "cbow": ModelKind(
        "cbow", "CBOW predicts a word from the mean (or sum) of its context's vectors.",
        "hsw2v.training.cbow", alpha=0.05, round_words=1_000_000,
        examples_per_context_word=False),
    "skipgram": ModelKind(
        "skipgram", "Skip-gram predicts a word from each context word's vector.",
        "hsw2v.training.skipgram", alpha=0.025, round_words=125_000,
        examples_per_context_word=True),
}
"""Every model kind, by the name ``--arch`` takes."""


def model_kind(name: str) -> ModelKind:
    """The kind named ``name``, or an HSW2VError listing the kinds."""
    if name not in model_kinds:
        raise HSW2VError(f"{param('arch')} must be one of {', '.join(model_kinds)}, got {name!r}")
    return model_kinds[name]


def kind_of_config(config_class: type) -> ModelKind:
    """The kind whose ``Config`` is ``config_class``."""
    for kind in model_kinds.values():
        if kind.steps().Config is config_class:
            return kind
    raise TypeError(f"{config_class.__name__} is no model kind's config")
