"""Training settings: the one home of every default, choice and check of
``hsw2v train`` (fastText's args.cc). The CLI builds its options from these fields."""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .errors import HSW2VError, param
from .system.memory import parse_size  # noqa: F401 (the CLI and scripts take it from here)
from .training.kinds import POSITION_WEIGHTS, model_kinds
from .trees.registry import tree_builders
from .trees.tree import SPLITS

ARCHS = tuple(model_kinds)
SAMPLE = 1e-3
"""The subsampling threshold of kinds that set none of their own."""
MAX_DIM = 10_000
MAX_WINDOW = 1_000  # skip-gram keeps (2·window)² floats a thread
MAX_EPOCHS = 100_000

TREE_KINDS = tuple(tree_builders)
COUNT_TREE_KINDS = tuple(k for k, b in tree_builders.items() if b.from_counts)
CHECKPOINT_MINUTES = 30.0
"""Minutes between checkpoints (``--checkpoint-every``); one is also saved after each epoch."""


ENGINES = ("local", "dask")
CONNECT_SECONDS = 10
"""How long ``--scheduler`` waits for the scheduler to answer, and a run for its first worker."""


COUNT_MEMORY_HELP = ("Memory for counting (K, M, G or T bytes, binary) [a quarter of RAM]; "
                      "past it, partial counts spill to $TMPDIR and merge exactly.")


KIND_DEFAULTS: dict[str, Any] = {
    "sample": SAMPLE, "node_bias": False, "window": 5, "tree": "huffman",
    "alpha": None,  # (the kind's ModelKind.alpha)
    "split": "balanced", "epsilon": 0.0, "epochs": 5,
    "tree_epochs": lambda s: (s.epochs if s.tree in tree_builders
                              and tree_builders[s.tree].learns_from_model else None),
}
"""The settings whose default a model kind may set (:attr:`ModelKind.defaults`),
with the default of the kinds that set none, in the order they are filled in (a
value, or a function of the settings filled in before it)."""


def _defaults(name: str) -> str:
    """The defaults of setting ``name`` for the CLI's help: the common one, and each
    kind's own (``5; lbl 12``)."""
    common = KIND_DEFAULTS[name]
    own = [f"{k.name} {getattr(value, 'shown', value)}" for k in model_kinds.values()
           if (value := k.defaults.get(name)) is not None
           and (not callable(value) or hasattr(value, "shown"))]
    shown = "--epochs with a semantic tree" if callable(common) else str(common)
    return "; ".join([shown, *own])


def _opt(default, help: str, **extra) -> field:
    """A setting's default, with its help text (and choices) for the CLI."""
    return field(default=default, metadata={"help": help, **extra})


@dataclass
class TrainSettings:
    """Hyper-parameters of a training run (word2vec.c / gensim defaults)."""

    arch: str = _opt("cbow", " ".join(k.help for k in model_kinds.values()), choices=ARCHS)
    cbow_mean: bool = _opt(True, "CBOW context vector: mean or sum of the context word vectors.",
                           flag="--cbow-mean/--cbow-sum")
    dim: int = _opt(100, "Vector dimension.")
    window: int | None = _opt(None, "Maximum context distance; each position draws a width in "
                              "1..window (lbl: exactly this many preceding words) ["
                              + _defaults("window") + "].", type=int)
    min_count: int = _opt(5, "Drop words rarer than this.")
    max_vocab: int | None = _opt(None, "Keep only the N most frequent words.", type=int)
    sample: float | None = _opt(None, "Subsampling threshold for frequent words (0 disables) ["
                                + ", ".join(f"{k.defaults.get('sample', SAMPLE):g} {k.name}"
                                            for k in model_kinds.values()) + "].", type=float)
    alpha: float | None = _opt(None, "Starting learning rate [" + ", ".join(
        f"{k.alpha:g} {k.name}" for k in model_kinds.values()) + "; lbl: 0.025 on a semantic tree, 0.01 with full "
        "position weights].",
                               type=float)
    min_alpha: float = _opt(1e-4, "Learning rate at the end; it falls linearly over all epochs.")
    epochs: int | None = _opt(None, "Passes over the corpus (after --tree-epochs, with a tree "
                              "learned in this run) [" + _defaults("epochs") + "].", type=int)
    threads: int | None = _opt(None, "Worker threads [all cores].", type=int)
    seed: int = _opt(1, "Random seed.")
    tree: str | None = _opt(None, "How words are arranged in the tree [" + _defaults("tree")
                            + "; with --tree-from, semantic].", choices=TREE_KINDS, type=str)
    split: str | None = _opt(None, "semantic (and wordnet with --tree-from): halve each node's "
                             "words, or send each word to its likelier mixture component ["
                             + _defaults("split") + "].", choices=SPLITS, type=str)
    epsilon: float | None = _opt(None, "semantic, adaptive split: a word whose responsibility lies "
                                 "within this of ½ goes to both sides and gets several codes "
                                 "(Mnih & Hinton's ADAPTIVE(ε); 0: one code a word) ["
                                 + _defaults("epsilon") + "].", type=float)
    tree_epochs: int | None = _opt(None, "semantic, learned in this run (no --tree-from): the "
                                   "epochs of the first pass, on a Huffman tree, whose predictions "
                                   "the tree is learned from; the run then starts from that pass's "
                                   "word vectors [" + _defaults("tree_epochs") + "].", type=int)
    max_codes: int = _opt(4, "With --epsilon: the most codes a word may get.")
    huffman_levels: int = _opt(0, "semantic: keep Huffman's tree down to this depth and group "
                               "words by meaning only below it (10 lowers skip-gram's held-out "
                               "perplexity a little).")
    wordnet: str | None = _opt(None, "wordnet: the WordNet database's directory [$WNHOME/dict, "
                               "/usr/share/wordnet, or NLTK's corpora/wordnet].", type=str)
    wordnet_rest: str = _opt("huffman", "wordnet: the tree over the words WordNet lacks.",
                             choices=COUNT_TREE_KINDS)
    node_bias: bool | None = _opt(None, "Give every inner node a trained bias: P(branch) = "
                                  "σ(α + h·u) (Mnih & Hinton's node model) [off; always on for lbl].",
                                  flag="--node-bias/--no-node-bias", type=bool)
    position_weights: str = _opt("diagonal", "lbl: each position's weights on its word's "
                                 "vector, a D-vector (diagonal) or a D×D matrix (full).",
                                 choices=POSITION_WEIGHTS)
    spool: bool = _opt(True, "Keep the counted tokens in an unnamed temporary file (about 2 "
                       "bytes a token, in $TMPDIR), so that epochs do not read and split the text "
                       "again.",
                       flag="--spool/--no-spool")

    def resolved(self) -> TrainSettings:
        """A copy with defaults filled in and every value checked."""
        s = TrainSettings(**asdict(self))
        if s.arch not in model_kinds:
            raise HSW2VError(f"{param('arch')} must be one of {', '.join(model_kinds)}, got {s.arch!r}")
        kind = model_kinds[s.arch]
        s = s.filled()
        if s.threads is None:
            s.threads = available_cores()
        checks = [
            (s.tree in TREE_KINDS, f"{param('tree')} must be one of {', '.join(TREE_KINDS)}, got {s.tree!r}"),
            (s.split in SPLITS, f"{param('split')} must be one of {', '.join(SPLITS)}, got {s.split!r}"),
            (s.position_weights in POSITION_WEIGHTS, (f"{param('position_weights')} must be one of "
                                                      f"{', '.join(POSITION_WEIGHTS)}, "
                                                      f"got {s.position_weights!r}")),
            (0 <= s.epsilon < 0.5, f"{param('epsilon')} must lie in [0, 0.5), got {s.epsilon}"),
            (0 <= s.seed < 2**64, f"{param('seed')} must lie in 0..2**64-1, got {s.seed}"),
            (0 <= s.sample <= 1, f"{param('sample')} must lie in 0..1 (a share of the corpus; "
                                 f"word2vec.c's useful range is 1e-5 to 1e-3), got {s.sample}"),
            (s.alpha > 0 and math.isfinite(s.alpha), f"{param('alpha')} must be positive, got {s.alpha}"),
            (0 <= s.min_alpha <= s.alpha, f"{param('min_alpha')} must lie between 0 and {param('alpha')}"),
        ]
        most_threads = max(4 * available_cores(), 16)
        for name, value, low, high in [
            ("dim", s.dim, 1, MAX_DIM), ("window", s.window, 1, MAX_WINDOW),
            ("min_count", s.min_count, 1, 2**62), ("max_vocab", s.max_vocab, 2, 2**31 - 1),
            ("epochs", s.epochs, 1, MAX_EPOCHS), ("threads", s.threads, 1, most_threads),
            ("tree_epochs", s.tree_epochs, 1, MAX_EPOCHS),
            ("huffman_levels", s.huffman_levels, 0, 2**31 - 1), ("max_codes", s.max_codes, 1, 64),
        ]:
            checks.append((value is None or low <= value <= high,
                           f"{param(name)} must lie in {low}..{high}, got {value}"))
        for ok, message in checks:
            if not ok:
                raise HSW2VError(message)
        builder = tree_builders[s.tree]
        defaults = TrainSettings()
        for registry, option, chosen in ((tree_builders, "tree", s.tree),
                                         (model_kinds, "arch", s.arch)):
            for f in fields(s):  # a setting only some entries read, given with another
                users = [k for k, entry in registry.items() if f.name in entry.settings]
                unset = (replace(s, **{f.name: None}).filled() if f.name in KIND_DEFAULTS
                         else defaults)  # (what it would be, left unset)
                given = getattr(s, f.name) != getattr(unset, f.name)
                if users and given and chosen not in users:
                    value = getattr(s, f.name)  # (a yes/no setting: as its flag is spelt)
                    named = (param(f.name, value, option_of(f.name, value))
                             if isinstance(value, bool) else param(f.name))
                    raise HSW2VError(f"{named} goes with "
                                     f"{' or '.join(param(option, u) for u in users)}")
        for problem in (builder.check(s), kind.check(s)):
            if problem:
                raise HSW2VError(problem)
        return s

    def filled(self) -> TrainSettings:
        """A copy with the settings left unset (None) at their model kind's defaults,
        else at :data:`KIND_DEFAULTS`' (in that order: a default may depend on the
        settings before it); nothing checked."""
        s = replace(self)
        kind = model_kinds.get(s.arch)
        if kind is None:
            return s
        for name, fallback in KIND_DEFAULTS.items():
            if getattr(s, name) is None:
                fallback = kind.alpha if name == "alpha" else fallback
                value = kind.default(name, s, fallback)
                setattr(s, name, value(s) if callable(value) else value)
        return s

    def other_kinds_settings(self) -> TrainSettings:
        """A copy with the settings that only other model kinds read at their
        defaults (a file written before such a setting was refused with another
        kind, ``cbow_mean`` with skip-gram, still loads)."""
        mine = model_kinds[self.arch].settings if self.arch in model_kinds else ()
        theirs = {name for k in model_kinds.values() for name in k.settings} - set(mine)
        defaults = TrainSettings()
        return replace(self, **{name: getattr(defaults, name) for name in theirs})

    @classmethod
    def from_record(cls, record: dict) -> TrainSettings:
        """The settings saved in a model file; other keys (results) are ignored.

        Files written before the tree kind had its own field name it
        ``semantic-balanced`` or ``semantic-adaptive`` here."""
        if not isinstance(record, dict):
            raise HSW2VError("model settings must be a JSON object")
        known = {f.name: record[f.name] for f in fields(cls) if f.name in record}
        tree = known.get("tree")
        if isinstance(tree, str) and tree.startswith("semantic-"):
            known["tree"], known["split"] = "semantic", tree[len("semantic-"):]
        for f in fields(cls):
            expected = type(f.default) if f.default is not None else f.metadata.get("type")
            if known.get(f.name) is not None:
                known[f.name] = _typed(f.name, known[f.name], expected)
        return cls(**known).other_kinds_settings()

    def record(self) -> dict:
        """A JSON-serialisable dict of these settings (see :meth:`from_record`)."""
        return asdict(self)


@dataclass
class EngineSettings:
    """Where ``hsw2v train`` runs (see :func:`hsw2v.api.train`)."""

    engine: str = _opt("local", "Train here, or on a Dask cluster (pip install 'dask[distributed]').",
                       choices=ENGINES)
    scheduler: str | None = _opt(None, "dask: the address of an existing cluster's scheduler "
                                 "(tcp://host:8786).", type=str)
    workers: int | None = _opt(None, "dask: start a LocalCluster of this many worker processes, "
                               "each training with --threads threads.", type=int)
    round_words: int | None = _opt(None, "dask: words each worker trains between two combinations "
                                   "of the weights [" + ", ".join(f"{k.round_words:,} {k.name}"
                                   for k in model_kinds.values()) + "].", type=int)


def option_of(name: str, value: Any) -> str:
    """How ``hsw2v train`` spells the setting ``name`` at ``value``: ``--dim 50``, or a
    flag of its own for a yes/no setting (``--no-node-bias``, ``--cbow-sum``)."""
    f = next((f for c in (TrainSettings, EngineSettings) for f in fields(c) if f.name == name), None)
    flag = f.metadata.get("flag") if f is not None else None
    if flag and isinstance(value, bool):
        on, _, off = flag.partition("/")
        return on if value else off
    return f"--{name.replace('_', '-')} {value}"


def _typed(name: str, value, expected: type):
    """``value`` as ``expected`` (bool, int, float or str), or HSW2VError naming the field."""
    if expected is bool:
        ok = isinstance(value, bool)
    elif expected in (int, float):
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
              and (expected is float or float(value).is_integer()))
    else:
        ok = isinstance(value, expected)
    if not ok:
        raise HSW2VError(f"model settings: {name} must be {expected.__name__}, got {value!r}")
    return expected(value)


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
