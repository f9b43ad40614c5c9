"""The one training entry point, on this machine or on a Dask cluster."""
from __future__ import annotations

from typing import Any

from .errors import HSW2VError, param
from .model.model import Model
from .settings import ENGINES
from .text.reader import Source

LOCAL_ONLY = ("vocab", "tree_from", "init_model")
"""Options of local training that a Dask run refuses."""


def train(corpus: Source, *, engine: str = "local", client: Any = None, scheduler: str | None = None,
          workers: int | None = None, round_words: int | None = None, **options) -> Model:
    """Train word vectors on ``corpus``, in this process or on a Dask cluster.

    Parameters
    ----------
    corpus
        A path or a list of paths: files, directories (read recursively, sorted),
        quoted globs or URLs of plain, .gz, .bz2 or .zst UTF-8 text; ``-`` for stdin.
    engine
        ``"local"`` (threads in this process) or ``"dask"``.
    client, scheduler, workers
        With ``engine="dask"``, one of: a ``distributed.Client`` (used as it is,
        never closed), a scheduler's address, or a number of worker processes for
        a new LocalCluster.
    round_words
        With ``engine="dask"``: the words each worker trains between two
        combinations of the weights (default: the model kind's).
    **options
        The settings of :class:`hsw2v.TrainSettings` (``arch``, ``dim``,
        ``window``, ``epochs``, ``tree``, …) and the options of
        :func:`hsw2v.runs.trainer.train_locally` (``vocab``, ``tree_from``,
        ``init_model``, ``checkpoint``, ``resume``, ``count_memory``,
        ``progress``).

    Returns
    -------
    Model
        The trained model, with each epoch's mean loss in ``epoch_loss``.

    Raises
    ------
    HSW2VError
        Bad settings, an unreadable or empty corpus, or a failed cluster; the
        message names the parameter.
    """
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
