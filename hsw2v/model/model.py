"""A trained model (vocabulary, tree, word vectors, inner-node vectors and the
settings that made them) and writing its file (:mod:`hsw2v.model.reading` reads it).

Model file (``.npz``, written with :func:`numpy.savez`, read with
``allow_pickle=False``, so loading never runs code). Its arrays:

=================  ==============  ================================================
``meta``           uint8           UTF-8 JSON: ``{"format": "hsw2v-model",
                                   "version": 1, "tree": kind, "settings": {…}}``;
                                   the settings also hold ``epoch_loss`` and timings
``words``          uint8           the words' UTF-8 bytes, concatenated
``word_offsets``   int64 (V+1)     word ``i`` is ``words[word_offsets[i]:word_offsets[i+1]]``
``counts``         int64 (V)       corpus counts, descending
``children``       int32 (L-1, 2)  the tree over L leaves (see :mod:`hsw2v.trees.tree`)
``vectors``        float32 (V, D)  input (word) vectors
``node_vectors``   float32 (L-1, D) inner-node vectors; with ``node_bias`` in the
                   or (L-1, D+1)   settings a last column holds each node's bias α
``ngram_vectors``  float32 (B, D)  only with ``subwords``: the rows of the B
                                   buckets that character n-grams hash into
``extra_leaves``   int32 (L-V)     only when words have several codes (ADAPTIVE(ε)):
                                   the word of each leaf past the first V
``weights_NAME``   float32         the model kind's other matrices, with the shapes
                                   its registry entry declares (none for CBOW and
                                   skip-gram)
=================  ==============  ================================================

Without ``extra_leaves``, L = V: one code a word, as every model before it.
"""
from __future__ import annotations

import json
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from ..counting.vocab import SENTENCE_END, UNKNOWN, Vocab, pack_words
from ..errors import HSW2VError, UnknownWordError, param
from ..settings import TrainSettings
from ..system.files import atomic_write
from ..system.memory import release_free_memory
from ..training.kinds import model_kind
from ..trees.tree import Tree
from .vectors import Vectors, positive_count, unknown_word_message, word_list
from .word2vec_format import vector_format, write_vectors, write_vectors_to

MODEL_FORMAT = "hsw2v-model"
MODEL_VERSION = 2
"""The newest format this hsw2v reads and writes: 2 for a tree whose words have
several codes (``extra_leaves``), which hsw2v before it cannot read; a one-code
model is still written as version 1, which every hsw2v reads."""


NPY_CHUNK = 1 << 20
"""Bytes a contiguous array is written in by :func:`write_npy`."""


def write_npy(f: IO[bytes], array: np.ndarray) -> None:
    """``array`` in ``.npy`` format (numpy's own bytes), written from its memory a
    megabyte at a time: numpy's writer copies 16 MB chunks into new bytes objects,
    which took a subword model's save above fastText's peak memory."""
    if not array.flags.c_contiguous or array.dtype.hasobject:
        np.lib.format.write_array(f, array, allow_pickle=False)
        return
    np.lib.format.write_array_header_1_0(f, np.lib.format.header_data_from_array_1_0(array))
    data = memoryview(array.reshape(-1)).cast("B")
    for start in range(0, len(data), NPY_CHUNK):
        f.write(data[start:start + NPY_CHUNK])


@dataclass(repr=False)
class Model:
    """Everything training produced, and how: ``settings``, the mean loss of each
    epoch, the seconds spent building the tree and training, and the words skipped."""

    vocab: Vocab
    tree: Tree
    vectors: np.ndarray
    node_vectors: np.ndarray
    settings: TrainSettings = field(default_factory=TrainSettings)
    epoch_loss: list[float] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, int] | None = None
    """When training continued a model on new text: the ``tokens`` and ``types`` of
    that text outside the model's vocabulary."""
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    """The model kind's matrices beyond the word and inner-node vectors, by name
    (see :attr:`hsw2v.training.kinds.ModelKind.matrices`); none for CBOW and skip-gram."""
    history: list[dict] = field(default_factory=list)
    """Each growth of the vocabulary (``grow``), oldest first: ``from_words``, the
    vocabulary's size before it, and ``words``, the words it added."""
    ngram_vectors: np.ndarray | None = None
    """With ``subwords``: the rows of the buckets that the words' character n-grams
    hash into (float32 (buckets, D)); :attr:`vectors` then holds each word's own
    row, and a word's vector is the mean of its rows (:attr:`word_vectors`)."""

    @property
    def subwords(self) -> Any:
        """Each word's input rows, its own and its n-grams'
        (:class:`hsw2v.subwords.ngrams.SubwordTable`); empty for a model without
        subwords."""
        from ..subwords.ngrams import NO_SUBWORDS, subword_table  # (numba loads where needed)

        if self.ngram_vectors is None:
            return NO_SUBWORDS
        key = (id(self.vocab), len(self.vocab))
        if getattr(self, "_subwords_of", None) != key:
            s = self.settings
            self._subwords = subword_table(self.vocab.words, s.minn, s.maxn, s.buckets)
            self._subwords_of = key
        return self._subwords

    def input_matrix(self) -> np.ndarray:
        """The rows training reads and writes, as one C-contiguous matrix: the words'
        own rows, then with subwords the n-gram buckets' (fastText's layout).
        :attr:`vectors` and :attr:`ngram_vectors` are views of it from then on."""
        if self.ngram_vectors is None:
            return self.vectors
        base = self.vectors.base
        n, b = len(self.vectors), len(self.ngram_vectors)
        if (base is not None and self.ngram_vectors.base is base and base.flags.c_contiguous
                and base.shape == (n + b, self.dim) and self.vectors.ctypes.data == base.ctypes.data
                and self.ngram_vectors.ctypes.data == base[n:].ctypes.data):
            return base
        matrix = np.concatenate([self.vectors, self.ngram_vectors]).astype(np.float32, copy=False)
        self.vectors, self.ngram_vectors = matrix[:n], matrix[n:]
        return matrix

    @property
    def word_vectors(self) -> np.ndarray:
        """Each word's vector as a user sees it: with subwords the mean of its own row
        and its n-grams' rows (fastText's), else :attr:`vectors` itself."""
        if self.ngram_vectors is None:
            return self.vectors
        from ..subwords.compose import composed_vectors

        return composed_vectors(self.vectors, self.ngram_vectors, self.subwords)

    def unseen_vector(self, word: str) -> np.ndarray | None:
        """The vector of a word outside the vocabulary, the mean of its n-grams' rows
        (fastText's); None without subwords, or for a word with no n-gram."""
        if self.ngram_vectors is None or not isinstance(word, str):
            return None
        from ..subwords.compose import mean_of_rows
        from ..subwords.ngrams import unseen_rows

        s = self.settings
        rows = unseen_rows(word, len(self.vocab), s.minn, s.maxn, s.buckets)
        return mean_of_rows(self.vectors, self.ngram_vectors, rows) if len(rows) else None

    @property
    def extra_matrices(self) -> tuple[np.ndarray, ...]:
        """:attr:`extra` in the kind's order, as the kernels take it."""
        return tuple(self.extra[name] for name in self.extra)

    @property
    def words(self) -> list[str]:
        """The vocabulary in index order (most frequent first)."""
        return self.vocab.words

    @property
    def dim(self) -> int:
        return self.vectors.shape[1]

    @property
    def arch(self) -> str:
        return self.settings.arch

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        """A summary, as gensim's ``Word2Vec<vocab=…, vector_size=…>`` (a notebook
        cell showing a model prints this, not every vector)."""
        grown = f", grown={len(self.history)}" if self.history else ""
        subwords = (f", subwords={self.settings.minn}-{self.settings.maxn}"
                    if self.ngram_vectors is not None else "")
        return (f"Model<arch={self.arch}, vocab={len(self.vocab)}, vector_size={self.dim}, "
                f"tree={self.tree.kind}, epochs={len(self.epoch_loss)}{subwords}{grown}>")

    def __contains__(self, word: object) -> bool:
        """Whether ``word`` is in the vocabulary (``"king" in model``), as in gensim."""
        return word in self.vocab

    def __getitem__(self, word: str) -> np.ndarray:
        """The vector of ``word`` (``model["king"]``, a view of :attr:`vectors`, as
        gensim's ``KeyedVectors`` gives; with subwords a new array, the mean of its
        rows, and for a word outside the vocabulary the mean of its n-grams' rows);
        an unknown word raises HSW2VError naming close spellings."""
        try:
            i = self.vocab.index[word]
        except (KeyError, TypeError):
            built = self.unseen_vector(word)
            if built is not None:
                return built
            raise UnknownWordError(unknown_word_message(str(word), self.vocab.words)) from None
        if self.ngram_vectors is None:
            return self.vectors[i]
        from ..subwords.compose import mean_of_rows

        table = self.subwords
        return mean_of_rows(self.vectors, self.ngram_vectors,
                            table.rows[table.offsets[i]:table.offsets[i + 1]])

    def keyed_vectors(self) -> Vectors:
        """The word vectors, for similarity queries and evaluation (with subwords, a
        word outside the vocabulary has the vector :meth:`unseen_vector` builds)."""
        return Vectors(self.vocab.words, self.word_vectors,
                       self.unseen_vector if self.ngram_vectors is not None else None)

    def to_gensim(self) -> Any:
        """The word vectors as a gensim ``KeyedVectors``: the same words in the same
        order, their counts (``get_vecattr(word, "count")``) and vectors.

        Returns
        -------
        gensim.models.KeyedVectors
            For ``most_similar``, ``evaluate_word_analogies`` or gensim's formats.

        Raises
        ------
        HSW2VError
            gensim is not installed (``pip install gensim``).
        """
        try:
            from gensim.models import KeyedVectors
        except ImportError:
            raise HSW2VError("to_gensim needs gensim: pip install gensim") from None
        kv = KeyedVectors(self.dim, count=0, dtype=np.float32)
        kv.add_vectors(self.vocab.words, self.word_vectors)
        kv.allocate_vecattrs(["count"], [np.int64])
        kv.expandos["count"][:] = self.vocab.counts
        return kv

    def most_similar(self, positive=(), negative=(), topn: int = 10) -> list[tuple[str, float]]:
        """Cosine neighbours of ``positive`` minus ``negative`` (see :meth:`Vectors.most_similar`).

        Parameters
        ----------
        positive
            A word or words whose vectors are added.
        negative
            A word or words whose vectors are subtracted.
        topn
            How many neighbours.

        Returns
        -------
        list[tuple[str, float]]
            (word, cosine), nearest first.
        """
        return self.keyed_vectors().most_similar(positive, negative, topn)

    def context_matrix(self, context: Sequence[str] | str) -> np.ndarray:
        """The context as rows h_c, as the model kind builds it: one row (mean or sum)
        for CBOW, one per word for skip-gram, one (r̂ of the last words, in order) for
        LBL.

        Unknown words are skipped with a warning; if none is known, HSW2VError. A
        language model's vocabulary with ``<unk>`` takes them as ``<unk>``.
        """
        context = word_list(context, "context")
        if self.vocab.markers:
            context = [w if w in self.vocab.index else UNKNOWN for w in context]
        known = [self.vocab.index[w] for w in context if w in self.vocab.index]
        unknown = [w for w in context if w not in self.vocab.index]
        if not known and (unknown or not model_kind(self.arch).language_model):
            raise HSW2VError("no known context word" + (f" (unknown: {' '.join(unknown)})" if unknown else ""))
        if unknown:
            warnings.warn(f"skipping unknown context words: {' '.join(unknown)}", stacklevel=3)
        rows = np.array(known, dtype=np.int32)
        H = np.empty((max(len(rows), 1), self.dim), dtype=np.float32)
        config = model_kind(self.arch).config_of(self.settings)
        from ..training.kind_dispatch import (
            context_of_words,  # (numba loads where it is needed)
        )

        return np.ascontiguousarray(H[:context_of_words(config, self.word_vectors, self.extra_matrices,
                                                        rows, H)])

    def predict(self, context: Sequence[str] | str, topn: int = 10) -> list[tuple[str, float]]:
        """The ``topn`` most probable words given the context, most probable first.

        Exact, by best-first search over the tree (see :mod:`hsw2v.softmax.search`).

        Parameters
        ----------
        context
            The context words (unknown ones are skipped with a warning).
        topn
            How many words.

        Returns
        -------
        list[tuple[str, float]]
            (word, probability); for skip-gram the value is Π_c P(word | c) over
            the context words.
        """
        topn = positive_count(topn, "topn")
        H = self.context_matrix(context)
        from ..softmax.search import best_first, best_first_codes, search_buffers

        topn = min(topn, len(self.vocab))
        words = np.empty(topn, dtype=np.int64)
        logp = np.empty(topn, dtype=np.float64)
        tree = self.tree
        if tree.max_codes > 1:
            found, _ = best_first_codes(H, self.node_vectors, tree.children, tree.root, tree.flat,
                                        tree.max_codes, topn, words, logp,
                                        search_buffers(tree.n_leaves, tree.n_words, len(H)))
        else:
            keys = np.empty(tree.n_leaves + 2, dtype=np.float64)
            items = np.empty(tree.n_leaves + 2, dtype=np.int64)
            found, _ = best_first(H, self.node_vectors, tree.children, tree.root, topn, words,
                                  logp, keys, items)
        return [(self.vocab.words[w], float(np.exp(lp))) for w, lp in zip(words[:found], logp[:found])]

    def predict_many(self, contexts: Sequence[Sequence[str]], topn: int = 10
                     ) -> list[list[tuple[str, float]]]:
        """:meth:`predict` for many contexts at once, searched in parallel in numba."""
        from ..softmax.search import best_first_batch

        if isinstance(contexts, (str, bytes)):
            raise HSW2VError(f"contexts is a sequence of contexts, each a list of words; got the "
                             f"string {contexts!r} (for one context, use predict)")
        topn = positive_count(topn, "topn")
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
        tree = self.tree
        best_first_batch(Hs, rows, self.node_vectors, tree.children, tree.root, tree.flat,
                         tree.max_codes, topn, words, logp, expanded)
        return [[(self.vocab.words[w], float(np.exp(lp))) for w, lp in zip(ws, lps)]
                for ws, lps in zip(words, logp)]

    def log_prob(self, words: str | Sequence[str], context: Sequence[str] | str | None = None
                 ) -> float:
        """Natural log of P(word | context) along the word's path; or, without a
        context, of a language model's P(sentence).

        Parameters
        ----------
        words
            With ``context``: a word of the vocabulary. Without: one sentence (a
            list of words, or a string split on whitespace), scored as a line of
            ``hsw2v score``: each word given the words before it from the line's
            start, then ``</s>``; a word outside the vocabulary is ``<unk>``.
        context
            The context words.

        Returns
        -------
        float
            log P(word | context), for skip-gram Σ_c log P(word | c); or
            log P(sentence ``</s>``) (KenLM's ``Model.score(sentence)`` is this
            divided by ln 10).
        """
        from ..softmax.search import word_log_prob

        if context is None:
            return self._sentence_log_prob(words.split() if isinstance(words, str)
                                           else word_list(words, "words"))
        word = words
        if not isinstance(word, str):
            raise HSW2VError(f"{param('words')} must be a word (str) with a context, got {word!r}")
        if word not in self.vocab.index:
            raise HSW2VError(unknown_word_message(word, self.vocab.words))
        return float(word_log_prob(self.context_matrix(context), self.vocab.index[word],
                                   self.node_vectors, self.tree.flat))

    def _sentence_log_prob(self, words: list[str]) -> float:
        """:meth:`log_prob` of one sentence."""
        if not self.vocab.markers:
            raise HSW2VError("log_prob(words) without a context needs a language model whose "
                             "lines end with </s> (arch='lbl', trained by this version)")
        from ..softmax.search import word_log_prob

        tokens = [w if w in self.vocab.index else UNKNOWN for w in words] + [SENTENCE_END]
        window = self.settings.window
        total = 0.0
        for i, word in enumerate(tokens):
            H = self.context_matrix(tokens[max(0, i - window):i])
            total += word_log_prob(H, self.vocab.index[word], self.node_vectors, self.tree.flat)
        return float(total)

    def all_log_probs(self, context: Sequence[str] | str) -> np.ndarray:
        """log P(w | context) for every word, by visiting every inner node (brute
        force); a word with several codes sums their probabilities per context row."""
        from ..softmax.search import all_log_probs

        H, tree = self.context_matrix(context), self.tree
        out = np.empty(tree.n_leaves, dtype=np.float64)
        if tree.n_leaves == tree.n_words:
            all_log_probs(H, self.node_vectors, tree.children, tree.inner_order, out)
            return out
        total = np.zeros(tree.n_words)
        for row in H:
            all_log_probs(row[None], self.node_vectors, tree.children, tree.inner_order, out)
            per_word = np.full(tree.n_words, -np.inf)
            np.logaddexp.at(per_word, tree.leaf_words, out)
            total += per_word
        return total

    def save(self, path: str) -> None:
        """Write the full model (see the module's docstring), atomically.

        Parameters
        ----------
        path
            The ``.npz`` file to write; :func:`load_model` reads it back.
        """
        with atomic_write(path, "wb") as f:
            self.write(f)

    def write(self, f: IO[bytes], extra: dict[str, bytes] | None = None) -> None:
        """Write the model file's bytes into an open binary file; ``extra`` adds zip
        members (name: bytes) that loading a model ignores."""
        word_bytes, offsets = pack_words(self.vocab.words)
        record = {**self.settings.record(), "epoch_loss": self.epoch_loss,
                  **{f"{k}_seconds": v for k, v in self.seconds.items()}}
        several = self.tree.max_codes > 1
        meta = {"format": MODEL_FORMAT, "version": 2 if several else 1, "tree": self.tree.kind,
                "tree_builder": self.tree.builder, "settings": record}
        if self.vocab.markers:
            meta["sentence_markers"] = True  # (<unk> and </s>: see hsw2v.counting.vocab.Vocab)
        if self.tree.details:
            meta["tree_details"] = self.tree.details
        if self.history:
            meta["history"] = self.history
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
                  "words": word_bytes, "word_offsets": offsets, "counts": self.vocab.counts,
                  "children": self.tree.children, "vectors": self.vectors,
                  "node_vectors": self.node_vectors}
        if several:
            arrays["extra_leaves"] = self.tree.extra_leaves
        if self.ngram_vectors is not None:
            arrays["ngram_vectors"] = self.ngram_vectors
        for name, matrix in self.extra.items():
            arrays[KIND_MATRIX + name] = matrix
        # np.savez's layout, but the zip is closed even when a write fails (older
        # numpy left that to the garbage collector, which printed a traceback).
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, array in arrays.items():
                with z.open(name + ".npy", "w", force_zip64=True) as member:
                    write_npy(member, array)
            for name, data in (extra or {}).items():
                z.writestr(name, data)

    def save_vectors(self, path: str, binary: bool = False, cache: bool = False,
                     format: str | None = None) -> None:
        """Write the word vectors in word2vec format, atomically.

        Parameters
        ----------
        path
            The file to write (gensim's ``load_word2vec_format`` reads it).
        binary
            word2vec's binary format instead of text: ``format="binary"``.
        cache
            Also keep a copy that loads in milliseconds in the user's cache directory
            (:mod:`hsw2v.model.vectors_cache`).
        format
            A name of :data:`hsw2v.model.word2vec_format.vector_formats` (``"text"``,
            ``"binary"``, or ``"fasttext"``: fastText's ``.bin`` model file, see
            :mod:`hsw2v.model.fasttext_format`); by default text, or binary with ``binary``.
        """
        release_free_memory()
        chosen = vector_format(_format(format, binary))
        if chosen.write_model is not None:
            with atomic_write(path, "wb") as f:
                chosen.write_model(f, self)
            return
        write_vectors(path, self.vocab.words, self.word_vectors, chosen.name, cache)

    def write_vectors(self, f: IO[bytes], binary: bool = False, format: str | None = None) -> None:
        """The word vectors in word2vec format into an open binary file (see
        :meth:`save_vectors`)."""
        release_free_memory()
        chosen = vector_format(_format(format, binary))
        if chosen.write_model is not None:
            chosen.write_model(f, self)
            return
        write_vectors_to(f, self.vocab.words, self.word_vectors, chosen.name)


KIND_MATRIX = "weights_"
"""The members holding a model kind's other matrices are named this plus the
matrix's name (see :attr:`hsw2v.training.kinds.ModelKind.matrices`)."""

def _format(format: str | None, binary: bool) -> str:
    """The vector format a caller asks for: ``format``, or ``binary``'s (its synonym)."""
    if format is not None and binary and format != "binary":
        raise HSW2VError(f"{param('binary', True)} is {param('format', 'binary')}: "
                         f"not with {param('format', format)}")
    return format or ("binary" if binary else "text")
