"""Word vectors: a vocabulary and a float32 matrix, with cosine neighbours."""
from __future__ import annotations

import difflib
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import HSW2VError, UnknownWordError, param


def word_list(value: Any, name: str) -> list[str]:
    """``value``, a word or an iterable of words, as a list of ``str``; anything else
    (bytes, numbers, None among the words) is an HSW2VError naming ``name``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise HSW2VError(f"{param(name)} must be a word or a list of words (str), "
                         f"got {type(value).__name__}")
    words = list(value)
    for w in words:
        if not isinstance(w, str):
            raise HSW2VError(f"{param(name)} must hold words (str), got {w!r}")
    return words


def positive_count(value: Any, name: str) -> int:
    """``value`` as a positive ``int``, or an HSW2VError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise HSW2VError(f"{param(name)} must be a whole number, got {value!r}")
    if value <= 0:
        raise HSW2VError(f"{param(name)} must be positive, got {value}")
    return int(value)


class Vectors:
    """Word vectors in index order (most frequent first, as written by hsw2v).

    ``words[i]`` is the word of row ``matrix[i]``. ``unseen``, where given, builds the
    vector of a word outside them (a subword model's, from its character n-grams),
    or returns None where it cannot.
    """

    def __init__(self, words: Sequence[str], matrix: np.ndarray,
                 unseen: Callable[[str], np.ndarray | None] | None = None):
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise HSW2VError(
                f"vectors: {len(words)} words but a matrix of shape {matrix.shape}"
            )
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():
            row = int(np.argmin(finite))
            raise HSW2VError(f"the vector of {words[row]!r} (row {row + 1}) holds NaN or infinity")
        self.words: list[str] = list(words)
        self.matrix = matrix
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        self._unit: np.ndarray | None = None
        self.unseen = unseen

    def __repr__(self) -> str:
        return f"Vectors<vocab={len(self.words)}, vector_size={self.matrix.shape[1]}>"

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        """Whether ``word`` has a vector (``"king" in vectors``), as in gensim."""
        return word in self.index

    def __getitem__(self, word: str) -> np.ndarray:
        """The vector of ``word`` (``vectors["king"]``), or of an unseen word where
        ``unseen`` builds one; an unknown word raises
        :class:`~hsw2v.errors.UnknownWordError`, a KeyError naming close spellings."""
        if word not in self.index and self.unseen is not None:
            built = self.unseen(word)
            if built is not None:
                return built
        return self.matrix[self.index_of(word)]

    def _unit_query(self, word: str) -> tuple[np.ndarray, int | None]:
        """The unit vector of a query word and its row (None for a built one)."""
        if word not in self.index and self.unseen is not None:
            built = self.unseen(word)
            if built is not None:
                norm = np.linalg.norm(built)
                return (built / norm if norm > 0 else built).astype(np.float32), None
        row = self.index_of(word)
        return self.unit[row], row

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    @property
    def unit(self) -> np.ndarray:
        """Rows scaled to unit length (zero rows stay zero). Each row is first divided
        by its largest magnitude, so that finite values near float32's limit (3e38)
        do not overflow the norm."""
        if self._unit is None:
            biggest = np.abs(self.matrix).max(axis=1, keepdims=True)
            biggest[biggest == 0] = 1.0
            unit = self.matrix / biggest  # float32 throughout
            norms = np.linalg.norm(unit, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            unit /= norms
            self._unit = unit
        return self._unit

    def index_of(self, word: str) -> int:
        """Row of ``word``; an unknown word raises HSW2VError naming close spellings."""
        try:
            return self.index[word]
        except KeyError:
            raise UnknownWordError(unknown_word_message(word, self.words)) from None

    def most_similar(
        self,
        positive: Sequence[str] = (),
        negative: Sequence[str] = (),
        topn: int = 10,
        restrict: int | None = None,
    ) -> list[tuple[str, float]]:
        """Nearest words by cosine to the mean of unit positive minus unit negative vectors.

        This is gensim's ``most_similar`` (3CosAdd): the query words are excluded.
        A word outside the vocabulary counts by the vector ``unseen`` builds, if any.

        Parameters
        ----------
        positive
            A word or words whose unit vectors are added.
        negative
            A word or words whose unit vectors are subtracted.
        topn
            How many neighbours.
        restrict
            Search only the first ``restrict`` (most frequent) words.

        Returns
        -------
        list[tuple[str, float]]
            (word, cosine), nearest first.
        """
        positive = word_list(() if positive is None else positive, "positive")
        negative = word_list(() if negative is None else negative, "negative")
        if not positive and not negative:
            raise HSW2VError("give at least one word")
        topn = positive_count(topn, "topn")
        if restrict is not None:
            restrict = positive_count(restrict, "restrict")
        queries = [self._unit_query(w) for w in positive + negative]
        rows = [r for _, r in queries if r is not None]
        weights = [1.0] * len(positive) + [-1.0] * len(negative)
        unit = self.unit if restrict is None else self.unit[:restrict]
        query = np.zeros(self.dim, dtype=np.float32)
        for (vector, _), wgt in zip(queries, weights):
            query += wgt * vector
        qn = np.linalg.norm(query)
        if not qn > 1e-6:  # (x --negative x, or words whose vectors are zero)
            raise HSW2VError("the query's words cancel out (their vectors sum to zero): "
                             "nothing is similar to it")
        query /= qn
        sims = unit @ query
        exclude = [r for r in rows if r < len(unit)]
        sims[exclude] = -np.inf
        k = min(topn, len(unit) - len(set(exclude)))
        if k <= 0:
            return []
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(self.words[i], float(sims[i])) for i in top]


def unknown_word_message(word: str, vocabulary: Sequence[str], limit: int = 3) -> str:
    """One line saying ``word`` is unknown, with up to ``limit`` close spellings."""
    close = difflib.get_close_matches(word, _candidates(word, vocabulary), n=limit, cutoff=0.7)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return f"unknown word {word!r}{hint}"


def _candidates(word: str, vocabulary: Sequence[str]) -> list[str]:
    """Words of similar length: cheap prefilter before difflib's ratio."""
    n = len(word)
    return [w for w in vocabulary if abs(len(w) - n) <= 2]
