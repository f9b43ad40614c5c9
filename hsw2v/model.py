"""A trained model: vocabulary, tree, word vectors and inner-node vectors."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import HSW2VError
from .tree import Tree
from .vectors import Vectors
from .vocab import Vocab


@dataclass
class Model:
    """Everything training produced; ``settings`` records how (JSON-serialisable)."""

    vocab: Vocab
    tree: Tree
    vectors: np.ndarray
    node_vectors: np.ndarray
    settings: dict = field(default_factory=dict)

    @property
    def words(self) -> list[str]:
        """The vocabulary in index order (most frequent first)."""
        return self.vocab.words

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    def keyed_vectors(self) -> Vectors:
        """The word vectors, for similarity queries and evaluation."""
        return Vectors(self.vocab.words, self.vectors)

    def most_similar(self, positive=(), negative=(), topn: int = 10):
        """Cosine neighbours of ``positive`` minus ``negative``; see :meth:`Vectors.most_similar`."""
        return self.keyed_vectors().most_similar(positive, negative, topn)

    @property
    def arch(self) -> str:
        return self.settings.get("arch", "cbow")

    def context_matrix(self, context: Sequence[str] | str) -> np.ndarray:
        """The context as rows h_c: one row (mean or sum) for CBOW, one per word for skip-gram.

        Unknown words are skipped with a warning; if none is known, HSW2VError.
        """

        if isinstance(context, str):
            context = [context]
        known = [self.vocab.index[w] for w in context if w in self.vocab.index]
        unknown = [w for w in context if w not in self.vocab.index]
        if not known:
            raise HSW2VError("no known context word" + (f" (unknown: {' '.join(unknown)})" if unknown else ""))
        if unknown:
            warnings.warn(f"skipping unknown context words: {' '.join(unknown)}", stacklevel=3)
        rows = self.vectors[known]
        if self.arch == "skipgram":
            return np.ascontiguousarray(rows)
        h = rows.sum(axis=0) / (len(known) if self.settings.get("cbow_mean", True) else 1)
        return np.ascontiguousarray(h[None, :], dtype=np.float32)

    def predict(self, context: Sequence[str] | str, topn: int = 10) -> list[tuple[str, float]]:
        """The ``topn`` most probable words given the context, most probable first.

        Exact, by best-first search over the tree (see :mod:`hsw2v.predict`). For
        skip-gram the value is Π_c P(word | c) over the context words.
        """
        from .predict import best_first

        if topn <= 0:
            raise HSW2VError(f"topn must be positive, got {topn}")
        H = self.context_matrix(context)
        topn = min(topn, len(self.vocab))
        words = np.empty(topn, dtype=np.int64)
        logp = np.empty(topn, dtype=np.float64)
        keys = np.empty(len(self.vocab) + 2, dtype=np.float64)
        items = np.empty(len(self.vocab) + 2, dtype=np.int64)
        found, _ = best_first(H, self.node_vectors, self.tree.children, self.tree.root, topn,
                              words, logp, keys, items)
        return [(self.vocab.words[w], float(np.exp(lp))) for w, lp in zip(words[:found], logp[:found])]

    def predict_many(self, contexts: Sequence[Sequence[str]], topn: int = 10
                     ) -> list[list[tuple[str, float]]]:
        """:meth:`predict` for many contexts at once, searched in parallel in numba."""
        from .predict import best_first_batch

        if topn <= 0:
            raise HSW2VError(f"topn must be positive, got {topn}")
        mats = [self.context_matrix(c) for c in contexts]
        if not mats:
            return []
        topn = min(topn, len(self.vocab))
        rows = np.array([len(h) for h in mats], dtype=np.int64)
        Hs = np.zeros((len(mats), rows.max(), self.dim), dtype=np.float32)
        for b, h in enumerate(mats):
            Hs[b, :len(h)] = h
        words = np.empty((len(mats), topn), dtype=np.int64)
        logp = np.empty((len(mats), topn), dtype=np.float64)
        expanded = np.empty(len(mats), dtype=np.int64)
        best_first_batch(Hs, rows, self.node_vectors, self.tree.children, self.tree.root, topn,
                         words, logp, expanded)
        return [[(self.vocab.words[w], float(np.exp(lp))) for w, lp in zip(ws, lps)]
                for ws, lps in zip(words, logp)]

    def log_prob(self, word: str, context: Sequence[str] | str) -> float:
        """Natural log of P(word | context) along the word's path (skip-gram: Σ_c log P(word | c))."""
        from .predict import path_log_prob
        from .vectors import unknown_word_message

        if word not in self.vocab.index:
            raise HSW2VError(unknown_word_message(word, self.vocab.words))
        t = self.tree
        return float(path_log_prob(self.context_matrix(context), self.vocab.index[word],
                                   self.node_vectors, t.path_offsets, t.path_nodes, t.path_codes))

    def all_log_probs(self, context: Sequence[str] | str) -> np.ndarray:
        """log P(w | context) for every word, by visiting every inner node (brute force)."""
        from .predict import all_log_probs

        out = np.empty(len(self.vocab), dtype=np.float64)
        all_log_probs(self.context_matrix(context), self.node_vectors, self.tree.children,
                      self.tree.inner_order, out)
        return out

    def save(self, path: str) -> None:
        """Write the full model (see :mod:`hsw2v.formats`), atomically."""
        from .formats import save_model

        save_model(path, self)

    def save_vectors(self, path: str, binary: bool = False) -> None:
        """Write the word vectors in word2vec text (or binary) format, atomically."""
        from .formats import write_vectors
        from .memory import release_free_memory

        release_free_memory()
        write_vectors(path, self.vocab.words, self.vectors, binary)


def load_model(path: str) -> Model:
    """Load a model file written by :meth:`Model.save` (no pickle)."""
    from .formats import load_model as _load

    return _load(path)
