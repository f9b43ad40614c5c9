"""The one training entry point, on this machine or on a Dask cluster."""
from __future__ import annotations

import contextvars
import functools
from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .errors import HSW2VError, param
from .model.model import Model
from .settings import (
    CHECKPOINT_MINUTES,
    ENGINES,
    FIELDS,
    TrainSettings,
    declared_settings,
    with_kind_defaults,
)
from .text.reader import Source
from .text.sentences import check_paths, is_paths, sentences_file
from .trees.registry import tree_builders, tree_for

if TYPE_CHECKING:
    from .counting.vocab import Vocab
    from .trees.tree import Tree

LOCAL_ONLY = ("vocab", "tree_from", "init_model", "grow")
"""Options of local training that a Dask run refuses."""


_PASSED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar("passed", default=frozenset())
"""The keyword arguments of the :func:`train` call under way, by name."""


def _noting_passed(function: Any) -> Any:
    """``function``, noting which keyword arguments each call passes: an argument
    given at its default value is still given (with ``init_model``, it replaces the
    model's own setting), which the values alone cannot tell."""
    @functools.wraps(function)
    def noted(*args: Any, **kwargs: Any) -> Any:
        token = _PASSED.set(frozenset(kwargs))
        try:
            return function(*args, **kwargs)
        finally:
            _PASSED.reset(token)
    return noted


@_noting_passed
def train(
    corpus: Source | Iterable[Any] | None = None,
    *,
    sentences: Iterable[Sequence[str] | str] | None = None,
    arch: str = "cbow",
    dim: int = 100,
    window: int | None = None,
    min_count: int = 5,
    max_vocab: int | None = None,
    sample: float | None = None,
    alpha: float | None = None,
    min_alpha: float = 1e-4,
    epochs: int | None = None,
    threads: int | None = None,
    seed: int = 1,
    tree: str | Tree | None = None,
    node_bias: bool | None = None,
    spool: bool = True,
    vocab: Vocab | None = None,
    tree_from: Model | None = None,
    init_model: Model | None = None,
    grow: bool = False,
    checkpoint: str | None = None,
    checkpoint_every: float = CHECKPOINT_MINUTES,
    resume: str | None = None,
    count_memory: int | None = None,
    progress: bool = True,
    engine: str = "local",
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    round_words: int | None = None,
    **declared: Any,
) -> Model:
    """Train word vectors on a corpus of files or on sentences in memory, in this
    process or on a Dask cluster.

    Parameters
    ----------
    corpus
        Files: a path or a list (or tuple) of paths, directories (read
        recursively, sorted), quoted globs or URLs of plain, .gz, .bz2 or .zst
        UTF-8 text; ``"-"`` for stdin. Or sentences, as gensim takes them: any
        other iterable of token lists (lists, tuples, numpy arrays of str) or of
        strings (each one sentence, split on whitespace), a generator included.
    sentences
        Sentences in memory, as in ``corpus`` (use this for a list of sentence
        *strings*, which ``corpus`` would take for paths). They are written once
        to a temporary file in $TMPDIR, which every epoch reads (see
        :mod:`hsw2v.text.sentences`): the same sentences as a text file train to
        the same vectors.
    arch
        The model kind: ``"cbow"``, ``"skipgram"`` or ``"lbl"`` (Mnih & Hinton's
        log-bilinear language model: the ``window`` preceding words predict the
        next; see :data:`hsw2v.training.kinds.model_kinds`).
    dim
        Vector size.
    window
        The widest context on each side; each position draws a width in
        1..window. For ``lbl``, exactly the number of preceding words. Default:
        [[window]].
    min_count
        Drop words rarer than this.
    max_vocab
        Keep at most this many words, the most frequent (default: no limit).
    sample
        Subsampling threshold for frequent words (0 keeps every word). Default:
        [[sample]].
    alpha
        Learning rate at the start; it falls linearly over all epochs to
        ``min_alpha``. Default, the kind's: [[alpha]].
    min_alpha
        Learning rate at the end.
    epochs
        Passes over the corpus (after the first pass that a tree learned in the
        run is learned from, see ``tree_epochs``). Default: [[epochs]].
    threads
        Training threads (default: every core this process may use); with Dask,
        threads a worker.
    seed
        Random seed; with ``threads=1`` the same input gives the same bits.
    tree
        A tree kind (a key of :data:`hsw2v.trees.registry.tree_builders`:
        ``"huffman"``, ``"balanced"``, ``"random"``, ``"fano"``, ``"classes"``,
        ``"semantic"``, ``"wordnet"``) or a ready :class:`~hsw2v.Tree` over
        ``vocab``. Default: [[tree]]; semantic with ``tree_from``.
    [[declared]]
    node_bias
        Give every inner node a trained bias. Default: [[node_bias]].
    spool
        Keep the counted tokens in an unnamed temporary file (about 2 bytes a
        token), so that epochs do not read and split the text again.
    vocab
        A vocabulary to use instead of counting (local only).
    tree_from
        A model whose context vectors a semantic tree clusters (its vocabulary is
        used), or a WordNet tree's wide nodes are split by (local only).
    init_model
        A model to train further on ``corpus``, keeping its vocabulary, tree and
        structural settings (local only).
    grow
        With ``init_model``: first add the words of ``corpus`` that reach
        ``min_count`` to its vocabulary, each as a new leaf of its tree; every old
        word keeps its vector and its code as a prefix of its new one (local only).
    checkpoint
        Save the run's full state to this file every ``checkpoint_every`` minutes
        and after each epoch.
    checkpoint_every
        Minutes between two checkpoints.
    resume
        Continue the run saved in this checkpoint, on the same corpus.
    count_memory
        Bytes for counting (default: a quarter of RAM); past it, partial counts
        spill to $TMPDIR and merge exactly.
    progress
        Show progress bars (in Jupyter, as widgets).
    engine
        ``"local"`` (threads in this process) or ``"dask"``.
    client
        With ``engine="dask"``: a ``distributed.Client``, used as it is and never
        closed (give one of ``client``, ``scheduler`` and ``workers``).
    scheduler
        With ``engine="dask"``: a scheduler's address.
    workers
        With ``engine="dask"``: a number of worker processes for a new LocalCluster.
    round_words
        With ``engine="dask"``: the words each worker trains between two
        combinations of the weights (default: the model kind's).
    **declared
        The settings of model kinds and trees registered beyond the built-in ones,
        by the names they declare (:func:`hsw2v.settings.declared_settings`); the
        built-in ones' are the keywords above that say whose they are.

    Returns
    -------
    Model
        The trained model, with each epoch's mean loss in ``epoch_loss``.

    Raises
    ------
    HSW2VError
        Bad settings, an unreadable or empty corpus, bad sentences, or a failed
        cluster; the message names the parameter.

    Notes
    -----
    With ``init_model`` or ``resume``, the settings not passed (or passed as
    ``None``) keep the saved model's or checkpoint's; one passed at its default
    value is that value.
    """
    given = checked_arguments(train, {**locals(), **declared})
    tree, tree_from, init_model = given["tree"], given["tree_from"], given["init_model"]
    corpus, vocab = given["corpus"], given["vocab"]
    defaults = TrainSettings()
    passed = _PASSED.get()
    settings = {name: given[name] for name in FIELDS
                if name != "tree" and name in given
                and (name in passed and given[name] is not None
                     or given[name] != getattr(defaults, name))}  # (None: not given)
    settings.update({k: v for k, v in declared.items() if k not in FIELDS})
    # (TrainSettings.given refuses a name no kind or tree declares)
    if isinstance(tree, str):
        settings["tree"] = tree
    options = {"vocab": vocab, "tree_from": tree_from, "init_model": init_model,
               "checkpoint": given["checkpoint"], "checkpoint_every": given["checkpoint_every"],
               "resume": given["resume"], "count_memory": given["count_memory"],
               "progress": progress, **({"grow": True} if given["grow"] else {})}
    if tree is not None and not isinstance(tree, str):
        options["tree"] = tree
    return train_with(corpus, settings, sentences=sentences, engine=engine, client=client,
                      scheduler=scheduler, workers=given["workers"],
                      round_words=given["round_words"], **options)



def _with_declared_keywords(function: Any, after: str) -> None:
    """Give ``function``'s signature (what ``help()`` and a notebook's completion
    show) a keyword for each setting that the built-in kinds and trees declare,
    after parameter ``after``, with its default and type (a :class:`TrainSettings`
    field's); its ``**declared`` takes them."""
    import inspect

    signature = inspect.signature(function)
    params = list(signature.parameters.values())
    at = [p.name for p in params].index(after) + 1
    keywords = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                  annotation=f.type)
                for f in fields(TrainSettings) if f.name in declared_settings()]
    function.__signature__ = signature.replace(parameters=params[:at] + keywords + params[at:])


_with_declared_keywords(train, "tree")
train.__doc__ = with_kind_defaults(train.__doc__ or "")  # the kinds' defaults, from the registries

_PATHS = ("checkpoint", "resume", "wordnet")
"""Parameters of :func:`train` that name a file or directory: ``str`` or ``os.PathLike``."""
_MODELS = ("tree_from", "init_model")
"""Parameters that take a :class:`Model`, or the path of its file."""


def checked_arguments(function: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` of ``function`` checked against its annotations, one rule for
    every parameter: an ``int`` takes Python or numpy integers (not ``bool``), a
    ``float`` any real number, a path ``str`` or ``os.PathLike``, a model parameter
    a :class:`Model` or its file's path, ``count_memory`` a size string (``"200M"``)
    too. Returns them normalised (numpy numbers as Python's, paths as ``str``, model
    files loaded); anything else is an HSW2VError naming the parameter."""
    import inspect
    import numbers
    import os

    import numpy as np

    out = dict(arguments)
    for name, p in inspect.signature(function).parameters.items():
        if name not in arguments:  # (a declared setting not given)
            continue
        value, kinds = out.get(name), {k.strip() for k in str(p.annotation).split("|")}
        if value is None and ("None" in kinds or p.default is None):
            continue
        if name == "corpus" and isinstance(value, os.PathLike):
            out[name] = os.fspath(value)
        elif name == "corpus" and isinstance(value, (list, tuple)):
            out[name] = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
        elif name in _MODELS:
            if isinstance(value, (str, os.PathLike)):
                from .model.reading import load_model

                out[name] = load_model(os.fspath(value))
            elif not isinstance(value, Model):
                raise HSW2VError(f"{param(name)} must be a Model or the path of a model file, "
                                 f"got {type(value).__name__}")
        elif name in _PATHS:
            if not isinstance(value, (str, os.PathLike)):
                raise HSW2VError(f"{param(name)} must be a path, got {value!r}")
            out[name] = os.fspath(value)
        elif name == "count_memory" and isinstance(value, str):
            from .system.memory import parse_size

            out[name] = parse_size(value, name)
        elif "bool" in kinds:
            if not isinstance(value, (bool, np.bool_)):
                raise HSW2VError(f"{param(name)} must be True or False, got {value!r}")
            out[name] = bool(value)
        elif "int" in kinds:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
                raise HSW2VError(f"{param(name)} must be a whole number, got {value!r}")
            out[name] = int(value)
        elif "float" in kinds:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise HSW2VError(f"{param(name)} must be a number, got {value!r}")
            out[name] = float(value)
        elif "str" in kinds and "Tree" not in kinds and not isinstance(value, str):
            raise HSW2VError(f"{param(name)} must be a string, got {value!r}")
        elif "Tree" in kinds and not isinstance(value, str):
            from .trees.tree import Tree

            if not isinstance(value, Tree):
                raise HSW2VError(f"{param(name)} must be a tree kind ({', '.join(tree_builders)}) "
                                 f"or a Tree, got {value!r}")
    return out


def train_with(corpus: Source | Iterable[Any] | None, settings: dict[str, Any], *,
               sentences: Iterable[Any] | None = None, engine: str = "local", client: Any = None,
               scheduler: str | None = None, workers: int | None = None,
               round_words: int | None = None, **options: Any) -> Model:
    """:func:`train` with the settings given as a dict, holding exactly those the
    caller set (with ``init_model`` or ``resume``, the others keep the saved
    ones): what the CLI calls with the options given on its command line."""
    if options.get("tree_from") is not None:
        settings = {**settings, "tree": tree_for(settings.get("tree"), True)}
    if sentences is not None or (corpus is not None and not is_paths(corpus)):
        if sentences is not None and corpus is not None:
            raise HSW2VError(f"give {param('corpus')} or {param('sentences')}, not both")
        with sentences_file(corpus if sentences is None else sentences,
                            options.get("progress", False)) as path:
            return _train(path, engine, client, scheduler, workers, round_words, options, settings)
    if corpus is None:
        raise HSW2VError(f"give a {param('corpus')} (paths) or {param('sentences')}")
    check_paths(corpus)
    return _train(corpus, engine, client, scheduler, workers, round_words, options, settings)


def _train(corpus: Source, engine: str, client: Any, scheduler: str | None, workers: int | None,
           round_words: int | None, options: dict, settings: dict) -> Model:
    """:func:`train` on files, with the options of the engine's trainer."""
    options = {**options, **settings}
    if engine == "local":
        given = [name for name, value in (("client", client), ("scheduler", scheduler),
                                          ("workers", workers)) if value is not None]
        if given or round_words is not None:
            raise HSW2VError(f"{param((given or ['round_words'])[0])} goes with {param('engine', 'dask')}")
        from .runs.trainer import train_locally

        return train_locally(corpus, **options)
    if engine != "dask":
        raise HSW2VError(f"{param('engine')} must be one of {', '.join(ENGINES)}, got {engine!r}")
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise HSW2VError(f"give one of {param('scheduler')}, {param('workers')} (or a client), not several")
    local_only = [k for k in LOCAL_ONLY if options.get(k) is not None]
    if local_only:
        raise HSW2VError(f"{param(local_only[0])} is not available with {param('engine', 'dask')}")
    from .distributed.driver import train_on_dask

    options = {k: v for k, v in options.items() if k not in LOCAL_ONLY}
    return train_on_dask([corpus] if isinstance(corpus, str) else list(corpus), client=client,
                         scheduler=scheduler, workers=workers, round_words=round_words, **options)
