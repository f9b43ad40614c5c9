"""The data that comes with the package (as gensim's test data does), each with its
licence in ``README.md`` beside it. It imports nothing from the package.

- ``enwiki-1m``, a corpus for a first run without one's own: the first million
  words of English Wikipedia, cleaned like text8, a line every 1,000 words
  (CC BY-SA 3.0).
- The Google analogies, ``questions-words.txt`` of word2vec (Mikolov et al. 2013;
  Apache-2.0, the licence's text in ``LICENSE-questions-words.txt``): what
  ``hsw2v evaluate`` scores unless given another file.

The word-pair sets (WordSim-353, SimLex-999) state no licence that allows passing
them on: :data:`WORD_PAIR_SETS` says where to get them.

>>> import hsw2v
>>> model = hsw2v.train(hsw2v.datasets.enwiki_1m())   # train reads .gz as it is
>>> hsw2v.evaluate_analogies(model.keyed_vectors(), hsw2v.datasets.google_analogies())

From the shell, ``hsw2v example-corpus > corpus.txt`` writes the corpus out as text.
"""
from __future__ import annotations

import gzip
import shutil
from importlib import resources
from pathlib import Path
from typing import BinaryIO

ENWIKI_1M = "enwiki-1m.txt.gz"
GOOGLE_ANALOGIES = "questions-words.txt"

#: The word-pair sets that are not bundled: name -> the page to download them from.
WORD_PAIR_SETS = {
    "WordSim-353": "http://gabrilovich.com/resources/data/wordsim353/wordsim353.html",
    "SimLex-999": "https://fh295.github.io/simlex.html",
}


def _path(name: str) -> str:
    return str(Path(str(resources.files(__name__).joinpath(name))))


def enwiki_1m() -> str:
    """The path of the bundled corpus, gzip-compressed UTF-8 text (1.9 MB; 1,000,000
    words in 1,000 lines).

    Returns
    -------
    str
        A path that :func:`hsw2v.train` and ``hsw2v train`` read as it is.
    """
    return _path(ENWIKI_1M)


def google_analogies() -> str:
    """The path of the bundled Google analogy questions, word2vec's
    ``questions-words.txt`` (UTF-8 text, 604 KB: 19,544 questions in 14 sections,
    mixed case; Apache-2.0, Copyright 2013 Google Inc.).

    Returns
    -------
    str
        A path that :func:`~hsw2v.evaluation.evaluate.evaluate_analogies` (and
        gensim's ``evaluate_word_analogies``) read; ``hsw2v evaluate`` scores it by
        default.
    """
    return _path(GOOGLE_ANALOGIES)


def write_enwiki_1m(out: BinaryIO) -> None:
    """Write the bundled corpus, decompressed (5.7 MB of text), to the binary stream ``out``."""
    with gzip.open(enwiki_1m(), "rb") as f:
        shutil.copyfileobj(f, out, 1 << 20)
