"""hsw2v: word2vec-style embeddings trained with hierarchical softmax.

>>> import hsw2v
>>> model = hsw2v.train("data/enwiki-1m.txt.gz", arch="skipgram", epochs=1)
>>> model.most_similar("three")
>>> model.save_vectors("vectors.txt")
>>> model.save("model.npz"); model = hsw2v.load_model("model.npz")

Names load lazily, so importing the package (and ``hsw2v --help``) stays fast.
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "train": "api",
    "TrainSettings": "settings",
    "build_vocab": "runs.trainer",
    "Model": "model.model",
    "load_model": "model.reading",
    "read_vectors": "model.reading",
    "Vocab": "counting.vocab",
    "Tree": "trees.tree",
    "huffman": "trees.tree",
    "Vectors": "model.vectors",
    "write_vectors": "model.word2vec_format",
    "score": "evaluation.scoring",
    "plot_tree": "trees.plot",
    "evaluate_analogies": "evaluation.evaluate",
    "evaluate_word_pairs": "evaluation.evaluate",
    "HSW2VError": "errors",
    "UnknownWordError": "errors",
    "datasets": "datasets",
}

__all__ = [  # noqa: RUF022 (grouped by module above)
    "HSW2VError", "Model", "Tree", "TrainSettings", "UnknownWordError", "Vectors", "Vocab", "build_vocab", "datasets",
    "evaluate_analogies", "evaluate_word_pairs", "huffman", "load_model", "plot_tree",
    "read_vectors", "score", "train", "write_vectors",
]


def __getattr__(name: str):
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        return module if _EXPORTS[name] == name else getattr(module, name)
    raise AttributeError(f"module 'hsw2v' has no attribute {name!r}")
