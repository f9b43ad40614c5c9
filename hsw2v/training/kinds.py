"""The model kinds, by name (``--arch``): the extension point for models.

A :class:`ModelKind` declares its module of numba steps, its default learning rate
and Dask round length, and the parameter matrices it trains beyond the word
vectors and the inner-node vectors. Its module holds:

- ``Config``: a NamedTuple of what its kernels read, with at least ``window``,
  ``sync_every`` and ``fast_rows`` (set from :attr:`ModelKind.fast_rows`); the
  *type* of a config value selects the kind's steps when a kernel compiles;
- ``config_of(settings) -> Config``;
- ``centre(t, target, ctx, n_ctx, alpha, dim) -> (loss, examples)``: the SGD step
  of one example, where ``t`` is the block's
  :class:`~hsw2v.training.block.BlockTraining` (the weights, the kind's ``extra``
  matrices, the thread's scratch);
- ``context(config, syn0, extra, ctx, n_ctx, H, dim) -> rows``: the context matrix
  H that ``predict``, ``score`` and the semantic trees use;
- optionally ``context_words(config, sen, i, m, window, shrink, r, ctx) -> (n, r)``: the
  context words of ``sen[i]``, for a kind whose examples are not the symmetric
  window (see :func:`hsw2v.training.walk.context_words`).

How to add a kind (written here only): write that module in this subpackage,
with ``centre``, ``context`` and every numba function they call as
``njit(**KERNEL, inline="always")``, and add a :class:`ModelKind` to
:data:`model_kinds`, declaring the settings only it reads as
:class:`~hsw2v.declared.Setting` s in its ``settings`` (they become
options, API keywords and model-file settings on their own). (A floating-point step called, not inlined, exists twice: compiled
on its own and linked into the kernel; a process that compiled it calls the first, a
process that loaded the kernel from numba's cache the second, and fastmath lets
them round differently: the same seed would give other bits after a fresh compile.
Call the SGD step as :func:`hsw2v.softmax.step.target_step`: each kernel gets the one
its paths need.) Each kind gets a block kernel of its
own (:func:`hsw2v.training.block.block_kernel_of`): a copy of the kernel's
template with the kind's ``centre`` and ``context_words`` in its globals, so numba
inlines them before typing; the kernel holds that kind's steps and nothing of the
others, with the vector size a compile-time constant. Callers shared by the kinds
(scoring, semantic trees, ``predict``) pick the kind's ``context`` by the config's
type (:mod:`hsw2v.training.kind_dispatch`). The ``--arch`` choices, the settings' defaults, ``Weights``, the model
file, checkpoints, Dask and the tests loop over :data:`model_kinds`; nothing else
compares a kind's name. This module imports no numba: a kind's module loads when a
kernel needs it, so ``hsw2v --help`` stays fast.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from ..errors import HSW2VError, param
from ..system.memory import total_memory
from ..declared import Setting


@dataclass(frozen=True)
class ModelKind:
    """A model kind: what ``--arch NAME`` trains."""

    name: str
    help: str
    module: str
    """The module with its ``Config``, ``config_of``, ``centre`` and ``context``
    (relative to this subpackage: ``.cbow``)."""
    alpha: float
    """Default starting learning rate."""
    round_words: int
    """Default words each Dask worker trains a round."""
    examples_per_context_word: bool
    """Whether an example is each (target, context word) pair (skip-gram) rather
    than each target (CBOW): how often a step visits the target's path."""
    matrices: Callable[[int, int, Any], dict[str, tuple[int, ...]]] = lambda n_words, dim, s: {}
    """The parameter matrices beyond the word vectors and inner-node vectors, by
    name, with their shapes, for ``n_words`` words, vectors of ``dim`` and a run's
    settings: what ``Weights.extra``, the model file, checkpoints and Dask's anchors
    and changes carry, in this order."""
    language_model: bool = False
    """Whether the context is the words before the target in its line, so that an
    empty context (a line's first word) is a context too."""
    settings: tuple[Setting, ...] = ()
    """The settings only this kind reads, declared here: given with another kind,
    they are an error (see :mod:`hsw2v.declared`)."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """The kind's own defaults of settings left unset (any of
    :data:`hsw2v.settings.KIND_DEFAULTS`, ``alpha`` beyond :attr:`alpha`), each a
    value or a function of the settings filled in before it; the others' are
    there."""
    hot_nodes: int = 1024
    """With several threads, how many of the inner nodes visited most (those near the
    root) each thread trains in rows of its own (see
    :func:`hsw2v.training.block.sync_hot_rows`); the others are shared (Hogwild)."""
    hot_sync_words: int = 2048
    """With several threads, each thread merges its private hot rows every this many
    of its words (a multiple of :data:`hsw2v.training.block.FAST_SYNC_WORDS`)."""
    fast_rows: int = 0
    """With several threads, how many of the hot inner nodes (the most visited
    first) merge every :data:`hsw2v.training.block.FAST_SYNC_WORDS` words rather
    than every :attr:`hot_sync_words`."""
    private_words: int = 0
    """With several threads, how many of the most frequent words' input vectors each
    thread trains in rows of its own, merged every
    :data:`hsw2v.training.block.FAST_SYNC_WORDS` words
    (:func:`hsw2v.training.block.sync_word_rows`); the kind's steps read them."""
    thread_parts: bool = False
    """Whether, with several threads, each trains its own contiguous part of each
    epoch (word2vec.c's and fastText's order; :mod:`hsw2v.runs.epochs`) rather than
    the blocks in turn. Only from the counting pass's token spool, and not in a run
    that saves checkpoints (a resumed run reads the text in order)."""
    edge: bool = False
    """Whether the steps skip a node whose score is beyond ±6, as word2vec.c does
    (:data:`hsw2v.softmax.branch.EDGE`)."""
    structural: tuple[str, ...] = ()
    """Settings that shape the kind's matrices: fixed when a model trains further,
    and when it is scored."""
    check: Callable[[Any], str | None] = lambda settings: None
    """A problem with the (resolved) settings as one line (parameter names), or None."""
    initial: Callable[[str, tuple[int, ...], Any], np.ndarray] | None = None
    """The starting value of matrix ``name`` of ``shape`` for a run's settings (its
    ``seed``, ...); zeros if None."""
    context_settings: dict[str, Any] = field(default_factory=dict)
    """Settings that the context vectors a learned tree clusters are computed with,
    in place of the run's (CBOW: their mean, whatever ``cbow_mean``)."""

    def default(self, name: str, settings: Any, fallback: Any) -> Any:
        """The kind's default of setting ``name`` for ``settings``, else ``fallback``."""
        value = self.defaults.get(name, fallback)
        return value(settings) if callable(value) else value

    def extra_weights(self, n_words: int, dim: int, settings: Any) -> dict[str, np.ndarray]:
        """The starting values of the kind's other matrices (float32, C order)."""
        out = {}
        for name, shape in self.matrices(n_words, dim, settings).items():
            value = (np.zeros(shape, dtype=np.float32) if self.initial is None
                     else self.initial(name, shape, settings))
            out[name] = np.ascontiguousarray(value, dtype=np.float32)
        return out

    def steps(self) -> ModuleType:
        """The kind's module (loads numba)."""
        return importlib.import_module(self.module, __package__)

    def config_of(self, settings: Any) -> Any:
        """The config the kind's kernels read, for a run's settings."""
        return self.steps().config_of(settings)


POSITION_WEIGHTS = ("diagonal", "full")
"""LBL's ``--position-weights``: c_i ⊙ r (a D-vector a position) or C_i r (a D×D matrix)."""


def _lbl_matrices(n_words: int, dim: int, s: Any) -> dict[str, tuple[int, ...]]:
    rows = s.window * (dim if s.position_weights == POSITION_WEIGHTS[1] else 1)
    return {"positions": (rows, dim), "start": (1, dim)}


def _lbl_initial(name: str, shape: tuple[int, ...], s: Any) -> np.ndarray:
    """Position weights start as the identity (c_i = 1, C_i = I), so r̂ starts as the
    sum of the context rows; the start row as word2vec starts word vectors."""
    rows, dim = shape
    if name == "positions":
        if s.position_weights == POSITION_WEIGHTS[1]:
            return np.tile(np.eye(dim, dtype=np.float32), (rows // dim, 1))
        return np.ones(shape, dtype=np.float32)
    rng = np.random.default_rng(s.seed)
    return ((rng.random(shape) - 0.5) / dim).astype(np.float32)


def _lbl_alpha(s: Any) -> float:
    """0.01 with full weights, whose D×D steps diverge at 0.05, on any tree. With
    diagonal ones, 0.025 on a semantic tree, whose run starts from a first pass's
    vectors (lower gave a lower perplexity there, and 0.05 diverged with 16
    preceding words: the language-model benchmark page), else 0.05."""
    if s.position_weights == POSITION_WEIGHTS[1]:
        return 0.01
    return 0.025 if s.tree_learned else 0.05


def _adaptive_on_semantic(s: Any) -> str:
    """CBOW's and an LBL's semantic trees are ADAPTIVE, one code a word (CBOW: the
    trees guide's table; LBL: ADAPTIVE(0.25) was 0.6% lower in perplexity for a
    quarter more time, the language-model benchmark page)."""
    return "adaptive" if s.tree_learned else "balanced"


def _cbow_epochs(s: Any) -> int:
    """3 on a tree learned in this run, after its one-epoch first pass: about the
    time of 5 epochs on another tree (the trees guide's table)."""
    return 3 if s.tree_learned else 5


def _lbl_epochs(s: Any) -> int:
    """2 on a tree learned in this run, after its first pass (``tree_epochs``); 3
    on another tree (the best Huffman LBL of 2, 3, 5 and 10 on 5M words)."""
    return 2 if s.tree_learned else 3


_lbl_alpha.shown = "0.025 on a semantic tree, 0.01 with full position weights (on any tree), else 0.05"  # type: ignore[attr-defined]  # noqa: E501
_adaptive_on_semantic.shown = "adaptive with a semantic tree"  # type: ignore[attr-defined]  (for --help)
_cbow_epochs.shown = "3 on a semantic tree, else 5"  # type: ignore[attr-defined]
_lbl_epochs.shown = "2 on a semantic tree, else 3"  # type: ignore[attr-defined]


def half_the_memory() -> int:
    """Half of the memory this process may use (its cgroup's limit, inside a
    container), in bytes: the most LBL's full position matrices may take (N·D²
    floats), since Dask and checkpoints copy them."""
    return total_memory() // 2


def _lbl_check(s: Any) -> str | None:
    if not s.node_bias:
        return (f"{param('arch', 'lbl')} always trains node biases; drop "
                f"{param('node_bias', False, '--no-node-bias')}")  # (as the flag is typed)
    size, most = s.window * s.dim * s.dim * 4, half_the_memory()
    if s.position_weights == POSITION_WEIGHTS[1] and size > most:
        return (f"{param('position_weights', 'full')} at {param('dim')} {s.dim} and "
                f"{param('window')} {s.window} needs {size / 2**30:.1f} GiB of position matrices "
                f"(N·D² floats), more than half of the memory this process may use "
                f"({most / 2**30:.1f} GiB): lower {param('dim')} or use "
                f"{param('position_weights', 'diagonal')}")
    return None


def _positive_int(name: str, most: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if not 1 <= value <= most:
            return f"{param(name)} must lie in 1..{most}, got {value}"
        return None
    return check


MOST_BUCKETS = 2**31 - 1
SUBWORD_SETTINGS = (
    Setting("subwords", False, "Build each word from its character n-grams, as fastText does: "
            "its vector is the mean of its own row and its n-grams' rows (hashed into "
            "--buckets rows), and unseen words get vectors too.", flag="--subwords/--no-subwords"),
    Setting("minn", 3, "subwords: the shortest n-grams, in characters.",
            check=_positive_int("minn", 100)),
    Setting("maxn", 6, "subwords: the longest n-grams, in characters (below --minn: none, "
            "only the word's own row).", check=lambda v: None if 0 <= v <= 100 else
            f"{param('maxn')} must lie in 0..100, got {v}"),
    Setting("buckets", 2_000_000, "subwords: the rows the n-grams hash into (fastText's "
            "-bucket).", check=_positive_int("buckets", MOST_BUCKETS)),
)
"""The subword settings, declared by CBOW and skip-gram alike (fastText's
``-minn``, ``-maxn`` and ``-bucket``, with its defaults)."""


def _subword_check(s: Any) -> str | None:
    """The n-gram settings go with ``subwords``."""
    if not s.subwords:
        for x in SUBWORD_SETTINGS[1:]:
            if s.value(x.name) != x.default:
                return f"{param(x.name)} goes with {param('subwords', True, '--subwords')}"
    return None


model_kinds: dict[str, ModelKind] = {
    "cbow": ModelKind(
        "cbow", "CBOW predicts a word from the mean (or sum) of its context's vectors.",
        ".cbow", alpha=0.05, round_words=1_000_000,
        examples_per_context_word=False, settings=(Setting(
            "cbow_mean", True, "CBOW context vector: mean or sum of the context word vectors.",
            flag="--cbow-mean/--cbow-sum"),) + SUBWORD_SETTINGS,
        defaults={"tree": "semantic", "split": _adaptive_on_semantic, "epochs": _cbow_epochs,
                  "tree_epochs": 1},
        hot_nodes=256, hot_sync_words=256, fast_rows=32,
        edge=True, thread_parts=True, context_settings={"cbow_mean": True},
        check=_subword_check),
    "skipgram": ModelKind(
        "skipgram", "Skip-gram predicts a word from each context word's vector.",
        ".skipgram", alpha=0.025, round_words=125_000,
        examples_per_context_word=True, settings=SUBWORD_SETTINGS, check=_subword_check),
    "lbl": ModelKind(
        "lbl", "LBL: Mnih & Hinton's log-bilinear language model predicts the next word from "
        "the --window preceding ones.",
        ".lbl", alpha=0.05, round_words=1_000_000, examples_per_context_word=False,
        language_model=True,
        matrices=_lbl_matrices, initial=_lbl_initial, settings=(Setting(
            "position_weights", "diagonal", "lbl: each position's weights on its word's vector, "
            "a D-vector (diagonal) or a D×D matrix (full).", choices=POSITION_WEIGHTS),),
        defaults={"sample": 0.0, "node_bias": True, "alpha": _lbl_alpha, "window": 16,
                  "tree": "semantic", "split": _adaptive_on_semantic, "epochs": _lbl_epochs,
                  "tree_epochs": 1},
        structural=("window", "position_weights"), private_words=64,
        check=_lbl_check),
}
"""Every model kind, by the name ``--arch`` takes."""

BUILT_IN_KINDS = tuple(model_kinds)
"""The kinds of the package itself: their settings are :class:`~hsw2v.settings.TrainSettings`
fields; a kind registered later keeps its own in ``TrainSettings.extra``."""


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
