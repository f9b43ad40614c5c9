"""Training settings: the one home of every default, choice and check of
``hsw2v train`` (fastText's args.cc). The CLI builds its options from these fields."""
from __future__ import annotations

import math
import os
import re
import textwrap
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from .errors import HSW2VError, param
from .system.memory import parse_size  # noqa: F401 (the CLI and scripts take it from here)
from .declared import Setting, declared
from .training.kinds import BUILT_IN_KINDS, model_kinds
from .trees.registry import BUILT_IN_TREES, tree_builders

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


def _tree_epochs(s) -> int | None:
    """As many epochs for the first pass as after it, where the tree learns from it."""
    return s.epochs if s.tree_learned else None


_tree_epochs.shown = "{epochs} with a semantic tree"  # type: ignore[attr-defined]


KIND_DEFAULTS: dict[str, Any] = {
    "sample": SAMPLE, "node_bias": False, "window": 5, "tree": "huffman",
    "alpha": None,  # (the kind's ModelKind.alpha)
    "split": "balanced", "epsilon": 0.0, "epochs": 5,
    "tree_epochs": _tree_epochs,
}
"""The settings whose default a model kind may set (:attr:`ModelKind.defaults`),
with the default of the kinds that set none, in the order they are filled in (a
value, or a function of the settings filled in before it)."""


def _shown(value: Any) -> str:
    """A default as the help and the API reference show it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return str(getattr(value, "shown", value))


def kind_defaults(name: str, python: bool = False) -> str:
    """The default of setting ``name`` as ``--help`` and the API reference show it,
    from the registries: the common one, then each model kind's own
    (``5; lbl 16``); every kind's where there is no common one (``alpha``). A
    default that depends on other settings says how (its function's ``shown``).
    Other settings are spelt as options (``--epochs``), or with ``python`` as
    parameters (``epochs``)."""
    common = KIND_DEFAULTS[name]
    own = [(k.name, k.defaults.get(name, k.alpha if name == "alpha" else None))
           for k in model_kinds.values()]
    shown = [] if common is None else [_shown(common)]
    shown += [f"{kind} {_shown(value)}" for kind, value in own if value is not None
              and (not callable(value) or hasattr(value, "shown"))]
    spell = (lambda n: f"``{n}``") if python else (lambda n: "--" + n.replace("_", "-"))
    return "; ".join(shown).format(epochs=spell("epochs"))


def with_kind_defaults(doc: str) -> str:
    """``doc`` with a line ``[[declared]]`` replaced by a numpy-style entry for each
    setting that the built-in kinds and trees declare (:func:`declared_doc`), and
    each ``[[name]]`` of a setting in :data:`KIND_DEFAULTS` by :func:`kind_defaults`
    (``python``)."""
    doc = re.sub(r"^( *)\[\[declared\]\]$", lambda m: declared_doc(m[1]), doc, flags=re.M)
    return re.sub(r"\[\[(\w+)\]\]", lambda m: kind_defaults(m[1], python=True)
                  if m[1] in KIND_DEFAULTS else m[0], doc)


def declared_doc(indent: str = "") -> str:
    """The Parameters entries of the settings that the built-in kinds and trees
    declare, from their declarations: each one's help, options spelt as parameters
    (``--tree-from``: ``tree_from``), and its default."""
    lines = []
    for name, d in declared_settings().items():
        if name not in FIELDS:
            continue
        text = re.sub(r"--([a-z][a-z-]*)", lambda m: f"``{m[1].replace('-', '_')}``",
                      d.help.rstrip("."))
        if name in KIND_DEFAULTS:
            text += f". Default: [[{name}]]"
        elif d.default is not None:
            text += f". Default: ``{d.default!r}``"
        lines.append(indent + name)
        lines += textwrap.wrap(text + ".", 80, initial_indent=indent + "    ",
                               subsequent_indent=indent + "    ")
    return "\n".join(lines)


def _opt(default, help: str, **extra) -> field:
    """A setting's default, with its help text (and choices) for the CLI."""
    return field(default=default, metadata={"help": help, **extra})


def declared_settings() -> dict[str, Setting]:
    """The settings the registered model kinds and tree builders declare, by name."""
    return declared([model_kinds.values(), tree_builders.values()])


def _declared_field(d: Setting) -> field:
    """The field of a setting a kind or tree declares (:mod:`hsw2v.declared`):
    its default, help, type, choices and flag come from there, and a default that the
    model kind decides is shown as :func:`kind_defaults` says."""
    extra = {k: v for k, v in (("choices", d.allowed()), ("flag", d.flag), ("type", d.type))
             if v is not None}
    suffix = f" [{kind_defaults(d.name)}]." if d.name in KIND_DEFAULTS else ""
    return _opt(d.default, d.help + suffix, **extra)


def _with_declared_fields(cls: type) -> type:
    """``cls`` with a field for each setting that the built-in model kinds and tree
    builders declare (those registered later go to ``extra``): a built-in kind's
    setting lives in its declaration alone, and the CLI's option, the API's keyword
    and the model file's record follow from the field."""
    notes = cls.__dict__["__annotations__"]
    built_in = declared([[model_kinds[k] for k in BUILT_IN_KINDS],
                         [tree_builders[k] for k in BUILT_IN_TREES]])
    for name, d in built_in.items():
        notes[name] = f"{d.value_type.__name__} | None" if d.default is None else d.value_type.__name__
        setattr(cls, name, _declared_field(d))
    return cls


def owners(name: str) -> dict[str, list[str]]:
    """The option (``arch``, ``tree``) and entries that declare setting ``name``."""
    return {option: [k for k, entry in registry.items()
                     if any(x.name == name for x in entry.settings)]
            for option, registry in (("arch", model_kinds), ("tree", tree_builders))}


@dataclass
@_with_declared_fields
class TrainSettings:
    """Hyper-parameters of a training run (word2vec.c / gensim defaults); beyond the
    fields written here, one for each setting that a built-in model kind or tree
    builder declares (``cbow_mean``, ``split``, ``position_weights``, ...)."""

    arch: str = _opt("cbow", " ".join(k.help for k in model_kinds.values()), choices=ARCHS)
    dim: int = _opt(100, "Vector dimension.")
    window: int | None = _opt(None, "Maximum context distance; each position draws a width in "
                              "1..window (lbl: exactly this many preceding words) ["
                              + kind_defaults("window") + "].", type=int)
    min_count: int = _opt(5, "Drop words rarer than this.")
    max_vocab: int | None = _opt(None, "Keep only the N most frequent words.", type=int)
    sample: float | None = _opt(None, "Subsampling threshold for frequent words (0 disables) ["
                                + kind_defaults("sample") + "].", type=float)
    alpha: float | None = _opt(None, "Starting learning rate [" + kind_defaults("alpha") + "].",
                               type=float)
    min_alpha: float = _opt(1e-4, "Learning rate at the end; it falls linearly over all epochs.")
    epochs: int | None = _opt(None, "Passes over the corpus (after --tree-epochs, with a tree "
                              "learned in this run) [" + kind_defaults("epochs") + "].", type=int)
    threads: int | None = _opt(None, "Worker threads [all cores].", type=int)
    seed: int = _opt(1, "Random seed.")
    tree: str | None = _opt(None, "How words are arranged in the tree [" + kind_defaults("tree")
                            + "; with --tree-from, semantic].", choices=TREE_KINDS, type=str)
    node_bias: bool | None = _opt(None, "Give every inner node a trained bias: P(branch) = "
                                  "σ(α + h·u) (Mnih & Hinton's node model) ["
                                  + kind_defaults("node_bias") + "].",
                                  flag="--node-bias/--no-node-bias", type=bool)
    spool: bool = _opt(True, "Keep the counted tokens in an unnamed temporary file (about 2 "
                       "bytes a token, in $TMPDIR), so that epochs do not read and split the text "
                       "again.",
                       flag="--spool/--no-spool")
    extra: dict[str, Any] = field(default_factory=dict)
    """The settings declared by model kinds and trees registered beyond the built-in
    ones (:func:`declared_settings`), by name: those given."""

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
            (0 <= s.epsilon < 0.5, f"{param('epsilon')} must lie in [0, 0.5), got {s.epsilon}"),
            (0 <= s.seed < 2**64, f"{param('seed')} must lie in 0..2**64-1, got {s.seed}"),
            (0 <= s.sample <= 1, f"{param('sample')} must lie in 0..1 (a share of the corpus; "
                                 f"word2vec.c's useful range is 1e-5 to 1e-3), got {s.sample}"),
            (s.alpha > 0 and math.isfinite(s.alpha), f"{param('alpha')} must be positive, got {s.alpha}"),
            (0 <= s.min_alpha <= s.alpha, f"{param('min_alpha')} must lie between 0 and {param('alpha')}"),
        ]
        for name, value, low, high in [
            ("dim", s.dim, 1, MAX_DIM), ("window", s.window, 1, MAX_WINDOW),
            ("min_count", s.min_count, 1, 2**62), ("max_vocab", s.max_vocab, 2, 2**31 - 1),
            ("epochs", s.epochs, 1, MAX_EPOCHS), ("threads", s.threads, 1, most_threads()),
            ("tree_epochs", s.tree_epochs, 1, MAX_EPOCHS),
            ("huffman_levels", s.huffman_levels, 0, 2**31 - 1), ("max_codes", s.max_codes, 1, 64),
        ]:
            checks.append((value is None or low <= value <= high,
                           f"{param(name)} must lie in {low}..{high}, got {value}"))
        for ok, message in checks:
            if not ok:
                raise HSW2VError(message)
        s._check_declared()
        for problem in (tree_builders[s.tree].check(s), kind.check(s)):
            if problem:
                raise HSW2VError(problem)
        return s

    def _check_declared(self) -> None:
        """The one rule of the settings that kinds and trees declare: a value among
        the declared choices, passing the declared check, and given only with an
        arch and tree that declare the setting."""
        defaults = TrainSettings()
        for name, d in declared_settings().items():
            value = self.value(name)
            if value is None:
                continue
            if d.allowed() is not None and value not in d.allowed():
                raise HSW2VError(f"{param(name)} must be one of {', '.join(d.allowed())}, "
                                 f"got {value!r}")
            problem = d.check(value) if d.check else None
            if problem:
                raise HSW2VError(problem)
            if name in KIND_DEFAULTS:  # (what it would be, left unset)
                unset = getattr(replace(self, **{name: None}).filled(), name)
            else:
                unset = getattr(defaults, name, d.default)
            chosen = {"arch": self.arch, "tree": self.tree}
            for option, users in owners(name).items():
                if users and value != unset and chosen[option] not in users:
                    named = (param(name, value, option_of(name, value))  # (a yes/no setting:
                             if isinstance(value, bool) else param(name))  # as its flag is spelt)
                    raise HSW2VError(f"{named} goes with "
                                     f"{' or '.join(param(option, u) for u in users)}")

    @property
    def tree_learned(self) -> bool:
        """Whether the tree is learned from a model's context vectors (its builder's
        :attr:`~hsw2v.trees.registry.TreeBuilder.learns_from_model`): what the
        kinds' defaults of a learned tree ask."""
        return self.tree in tree_builders and tree_builders[self.tree].learns_from_model

    def value(self, name: str) -> Any:
        """Setting ``name``: a field's value, or a declared setting's in :attr:`extra`
        (its declared default when not given)."""
        if name in FIELDS:
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        return declared_settings()[name].default

    @classmethod
    def given(cls, settings: dict[str, Any]) -> TrainSettings:
        """Settings from a dict of those given: fields, and the settings that kinds
        and trees registered since declare (into :attr:`extra`); any other name is
        an error."""
        settings = dict(settings)
        earlier = settings.pop("extra", None) or {}
        known = {k: v for k, v in settings.items() if k in FIELDS}
        extra = {k: v for k, v in settings.items() if k not in FIELDS}
        unknown = [k for k in extra if k not in declared_settings()]
        if unknown:
            raise HSW2VError(f"no setting {param(unknown[0])}")
        return cls(**known, extra={**earlier, **{k: v for k, v in extra.items() if v is not None}})

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
        mine = {x.name for x in model_kinds[self.arch].settings} if self.arch in model_kinds else set()
        theirs = {x.name for k in model_kinds.values() for x in k.settings} - mine
        defaults = TrainSettings()
        return replace(self, **{n: getattr(defaults, n) for n in theirs if n in FIELDS},
                       extra={k: v for k, v in self.extra.items() if k not in theirs})

    @classmethod
    def from_record(cls, record: dict) -> TrainSettings:
        """The settings saved in a model file; other keys (results) are ignored.

        Files written before the tree kind had its own field name it
        ``semantic-balanced`` or ``semantic-adaptive`` here."""
        if not isinstance(record, dict):
            raise HSW2VError("model settings must be a JSON object")
        known = {f.name: record[f.name] for f in fields(cls) if f.name in record and f.name in FIELDS}
        tree = known.get("tree")
        if isinstance(tree, str) and tree.startswith("semantic-"):
            known["tree"], known["split"] = "semantic", tree[len("semantic-"):]
        for f in fields(cls):
            expected = type(f.default) if f.default is not None else f.metadata.get("type")
            if known.get(f.name) is not None:
                known[f.name] = _typed(f.name, known[f.name], expected)
        extra = record.get("extra", {})
        if not isinstance(extra, dict):
            raise HSW2VError("model settings: extra must be a JSON object")
        mine = declared_settings()
        for name, value in extra.items():
            if name not in mine or name in FIELDS:
                raise HSW2VError(f"model settings: no setting {name!r} (a kind or tree "
                                 "registered where the model was trained?)")
            extra[name] = _typed(name, value, mine[name].value_type)
        return cls(**known, extra=extra).other_kinds_settings()

    def record(self) -> dict:
        """A JSON-serialisable dict of these settings (see :meth:`from_record`)."""
        out = asdict(self)
        if not out["extra"]:
            del out["extra"]  # (as files before it: older hsw2v reads them)
        return out


FIELDS = {f.name for f in fields(TrainSettings)} - {"extra"}


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


def most_threads() -> int:
    """The most threads a run may ask for: four a core (at least 16). One rule for
    training and scoring: threads are made up front, each with scratch of its own."""
    return max(4 * available_cores(), 16)


def available_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
