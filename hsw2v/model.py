"""A trained model: vocabulary, tree, word vectors and inner-node vectors."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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

    def save(self, path: str) -> None:
        """Write the full model (see :mod:`hsw2v.formats`), atomically."""
        from .formats import save_model

        save_model(path, self)

    def save_vectors(self, path: str, binary: bool = False) -> None:
        """Write the word vectors in word2vec text (or binary) format, atomically."""
        from .formats import write_vectors

        write_vectors(path, self.vocab.words, self.vectors, binary)


def load_model(path: str) -> Model:
    """Load a model file written by :meth:`Model.save` (no pickle)."""
    from .formats import load_model as _load

    return _load(path)
