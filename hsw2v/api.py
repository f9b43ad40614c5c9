"""The one training entry point, on this machine or on a Dask cluster."""
from __future__ import annotations

from typing import Any

from hsw2v.errors import HSW2VError
from hsw2v.model.model import Model
from hsw2v.settings import ENGINES
from hsw2v.text.reader import Source

LOCAL_ONLY = ("vocab", "tree_from", "init_model")
"""Options of local training that a Dask run refuses."""


def train(corpus: Source, *, engine: str = "local", client: Any = None, scheduler: str | None = None,
          workers: int | None = None, round_words: int | None = None, **options) -> Model:
    """Train word vectors on ``corpus``: with ``engine="local"``, in this process
    (see :func:`hsw2v.runs.trainer.train` for the options); with ``engine="dask"``, on a
    Dask cluster: ``client`` (used as it is, never closed), ``scheduler`` (an
    address) or a new LocalCluster of ``workers`` processes, averaging the
    workers' replicas every ``round_words`` words each (default by architecture, see
    :func:`hsw2v.distributed.driver.train_on_dask`)."""
    if engine == "local":
        given = [name for name, value in (("client", client), ("scheduler", scheduler),
                                          ("workers", workers)) if value is not None]
        if given or round_words is not None:
            raise HSW2VError(f"--{(given or ['round-words'])[0]} goes with --engine dask")
        from hsw2v.runs.trainer import train as train_here

        return train_here(corpus, **options)
    if engine != "dask":
        raise HSW2VError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if sum(x is not None for x in (client, scheduler, workers)) > 1:
        raise HSW2VError("give one of --scheduler, --workers (or a client), not several")
    local_only = [k for k in LOCAL_ONLY if options.get(k) is not None]
    if local_only:
        raise HSW2VError(f"--{local_only[0].replace('_', '-')} is not available with --engine dask")
    from hsw2v.distributed.driver import train_on_dask

    options = {k: v for k, v in options.items() if k not in LOCAL_ONLY}
    return train_on_dask([corpus] if isinstance(corpus, str) else list(corpus), client=client,
                         scheduler=scheduler, workers=workers, round_words=round_words, **options)
