"""The corpus that comes with the package, for a first run without a corpus of
one's own (as gensim's test data does): ``enwiki-1m``, the first million words of
English Wikipedia, cleaned like text8, a line every 1,000 words (CC BY-SA 3.0;
its attribution is ``README.md`` beside it). It imports nothing from the package.

>>> import hsw2v
>>> model = hsw2v.train(hsw2v.datasets.enwiki_1m())   # train reads .gz as it is

From the shell, ``hsw2v example-corpus > corpus.txt`` writes it out as text.
"""
from __future__ import annotations

import gzip
import shutil
from importlib import resources
from pathlib import Path
from typing import BinaryIO

ENWIKI_1M = "enwiki-1m.txt.gz"


def enwiki_1m() -> str:
    """The path of the bundled corpus, gzip-compressed UTF-8 text (1.9 MB; 1,000,000
    words in 1,000 lines).

    Returns
    -------
    str
        A path that :func:`hsw2v.train` and ``hsw2v train`` read as it is.
    """
    return str(Path(str(resources.files(__name__).joinpath(ENWIKI_1M))))


def write_enwiki_1m(out: BinaryIO) -> None:
    """Write the bundled corpus, decompressed (5.7 MB of text), to the binary stream ``out``."""
    with gzip.open(enwiki_1m(), "rb") as f:
        shutil.copyfileobj(f, out, 1 << 20)
