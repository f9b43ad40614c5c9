"""fastText's model file (``.bin``, format version 12), written so that fastText
(``fasttext.load_model``) and gensim (``load_facebook_vectors``,
``load_facebook_model``) read an hsw2v model as one of fastText's: its settings,
its vocabulary with counts, the input matrix (the words' rows, then the n-gram
buckets', hashed as fastText hashes them: :mod:`hsw2v.subwords.ngrams`) and the
output matrix. fastText recomputes each word's n-grams from ``minn``, ``maxn``
and ``bucket`` when it loads the file, so a word's vector there is the mean of the
same rows as here, for unseen words too. A model without subwords is written
with no n-grams (``maxn`` 0): its words' vectors are their rows.

The output matrix is the inner nodes' vectors where fastText would rebuild the
same tree from the counts (Huffman's tree of the counts, no node biases), so
that its ``predict`` and further training read them; else zeros (fastText's
hierarchical softmax knows no other tree)."""
from __future__ import annotations

import struct
from typing import IO, Any

import numpy as np

from ..training.kinds import model_kind
from ..trees.tree import huffman

MAGIC = 793712314
VERSION = 12
CBOW, SKIPGRAM = 1, 2  # fastText's model_name
HS = 1  # its loss_name
WORD = 0  # its entry_type


def write_fasttext(f: IO[bytes], model: Any) -> None:
    """Write ``model`` (an :class:`hsw2v.model.model.Model`) as fastText's ``.bin``
    into an open binary file: fastText's skip-gram for a kind whose examples are
    (target, context word) pairs, else its CBOW."""
    s = model.settings
    pairs = model_kind(s.arch).examples_per_context_word  # (skip-gram's examples)
    subwords = model.ngram_vectors is not None
    minn, maxn, buckets = (s.minn, s.maxn, s.buckets) if subwords else (0, 0, 0)
    f.write(struct.pack("<ii", MAGIC, VERSION))
    f.write(struct.pack("<12id", model.dim, s.window, s.epochs, s.min_count, 5, 1, HS,
                        SKIPGRAM if pairs else CBOW, buckets, minn, maxn, 100,
                        s.sample))
    words, counts = model.vocab.words, model.vocab.counts
    f.write(struct.pack("<iiiqq", len(words), len(words), 0, int(counts.sum()), -1))
    for word, count in zip(words, counts.tolist()):
        f.write(word.encode("utf-8") + b"\0" + struct.pack("<qb", count, WORD))
    _write_matrix(f, model.vectors, *(() if model.ngram_vectors is None
                                      else (model.ngram_vectors,)))
    _write_matrix(f, _output_matrix(model))


def _write_matrix(f: IO[bytes], *parts: np.ndarray) -> None:
    """fastText's ``DenseMatrix::save`` of ``parts`` one after another (the input
    matrix's words and buckets, not joined in memory), after the quantization flag
    (none)."""
    rows = sum(len(p) for p in parts)
    f.write(struct.pack("<?qq", False, rows, parts[0].shape[1]))
    for part in parts:
        f.write(np.ascontiguousarray(part, dtype="<f4").data)


def _output_matrix(model: Any) -> np.ndarray:
    """fastText's output matrix for hierarchical softmax: a row for each of the V−1
    inner nodes of the Huffman tree it builds from the counts, and one spare."""
    out = np.zeros((len(model.vocab), model.dim), dtype=np.float32)
    tree = model.tree
    if (tree.max_codes == 1 and not model.settings.node_bias
            and np.array_equal(tree.children, huffman(model.vocab.counts).children)):
        out[:len(model.vocab) - 1] = model.node_vectors[:, :model.dim]
    return out
