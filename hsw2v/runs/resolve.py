"""A run's settings, resolved once: the one function that the local trainer, the
Dask driver and the CLI's early check (before any reading) call, so that each
rule about what may run where has one home."""
from __future__ import annotations

import warnings
from dataclasses import asdict, replace
from typing import Any

from ..errors import HSW2VError, HSW2VWarning, param
from ..model.model import Model
from ..settings import TREE_KINDS, TrainSettings
from ..training.kinds import SUBWORD_SETTINGS, model_kind
from ..trees.registry import tree_builder, tree_builders
from ..trees.tree import Tree
from .common import CONTINUED, carried_settings
from .grow import GROWN, check_growable


def run_settings(settings: dict[str, Any], engine: str = "local",
                 init_model: Model | None = None, grow: bool = False,
                 tree: Tree | None = None) -> TrainSettings:
    """The settings a run trains with.

    Parameters
    ----------
    settings
        The settings given, by name (those left out take their defaults).
    engine
        ``"local"`` or ``"dask"``: on Dask, a default tree that only a local run
        builds gives way to its builder's ``first_pass`` tree, said in one
        :class:`~hsw2v.errors.HSW2VWarning`; a tree asked for is refused, and so
        are subwords.
    init_model
        A model trained further: its settings, with only those a continued (or,
        with ``grow``, grown) run may change taken from ``settings``.
    grow
        Whether the run grows ``init_model``'s vocabulary.
    tree
        A ready tree given instead of a kind: the settings record its kind.

    Returns
    -------
    TrainSettings
        Filled in and checked; a tree's missing inputs (a database) are refused
        here, before any reading.
    """
    if grow and init_model is None:
        raise HSW2VError(f"{param('grow')} grows the vocabulary of {param('init_model')}: "
                         "give the model")
    if init_model is not None:
        structural = model_kind(init_model.arch).structural
        s = carried_settings(replace(init_model.settings, threads=None), settings,
                             tuple(k for k in CONTINUED + (GROWN if grow else ())
                                   if k not in structural),
                             f"{param('init_model')} keeps the model's")
        if grow:
            check_growable(init_model)
    else:
        s = _on_engine(TrainSettings.given(settings).resolved(), settings, engine)
    if engine == "dask" and s.value("subwords"):
        raise HSW2VError(f"{param('engine', 'dask')} does not train "
                         f"{param('subwords', True, '--subwords')}: the n-gram rows would go to "
                         f"every worker each round; train with {param('engine', 'local')}")
    if tree is not None and tree.builder in TREE_KINDS:
        s = replace(s, tree=tree.builder)  # recorded with the model: the kind of the tree given
    if tree is None and init_model is None:
        tree_builder(s.tree).ready(s)  # (a missing database fails before any reading)
    return s


def _on_engine(s: TrainSettings, given: dict[str, Any], engine: str) -> TrainSettings:
    """``s``, or on Dask, where its tree is not built there, the same run on its
    builder's first-pass tree if the tree was the kind's default."""
    builder = tree_builders[s.tree]
    if engine != "dask" or builder.on_dask:
        return s
    if given.get("tree") is None and builder.first_pass is not None:
        warnings.warn(HSW2VWarning(
            f"{param('engine', 'dask')} trains {s.arch} on a {builder.first_pass.capitalize()} "
            f"tree: its "
            f"default {s.tree} tree is learned only with {param('engine', 'local')}"),
            stacklevel=4)
        return TrainSettings.given({**given, "tree": builder.first_pass}).resolved()
    here = [k for k, b in tree_builders.items() if b.on_dask]
    raise HSW2VError(f"{param('engine', 'dask')} builds these trees: {', '.join(here)}; "
                     f"{param('tree', s.tree)} is built locally")


def first_pass_settings(s: TrainSettings) -> TrainSettings:
    """The settings of the first pass that a tree learned in the run learns from:
    the run's, on its builder's ``first_pass`` tree, for ``tree_epochs``, at the
    kind's rate, with the tree's own settings at their defaults, and without
    subwords: the tree groups words by the contexts of the words' own vectors
    (:func:`hsw2v.runs.trainer._starting_model` then adds the n-gram rows)."""
    builder = tree_builders[s.tree]
    defaults = TrainSettings()
    return TrainSettings.given({
        **asdict(s), "tree": builder.first_pass, "epochs": s.tree_epochs, "alpha": None,
        **{x.name: defaults.value(x.name) for x in builder.settings},
        **{x.name: x.default for x in SUBWORD_SETTINGS if x in model_kind(s.arch).settings}
        }).resolved()
