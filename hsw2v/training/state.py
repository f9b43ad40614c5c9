"""What the training kernels share and what each thread owns: :class:`Weights`
(shared by every thread, Hogwild) and :class:`State` (one thread's generator and
scratch buffers, fastText's ``Model::State``)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


_NO_INTS = np.zeros(0, np.int32)


class Weights(NamedTuple):
    """What every thread trains: the input rows ``syn0``, inner-node
    vectors ``syn1`` and the model kind's other matrices ``extra``; ``hot_nodes`` lists the inner nodes each thread trains in
    private rows, and ``hot_slot[n]`` is node n's row among them (-1 if none). With
    subwords, ``syn0`` holds the words' own rows then the n-gram buckets', and word
    ``w``'s rows are ``sub_rows[sub_offsets[w]:sub_offsets[w + 1]]``
    (:class:`hsw2v.subwords.ngrams.SubwordTable`; empty without)."""

    syn0: np.ndarray  # float32 (V, D), or (V + buckets, D) with subwords
    syn1: np.ndarray  # float32 (V-1, D)
    hot_nodes: np.ndarray  # int32 (K)
    hot_slot: np.ndarray  # int32 (V-1)
    extra: tuple = ()  # the kind's other matrices, in its order (float32)
    sub_offsets: np.ndarray = _NO_INTS  # int32 (V+1) with subwords
    sub_rows: np.ndarray = _NO_INTS  # int32


_NO_ROWS = np.zeros((0, 1), np.float32)


class State(NamedTuple):
    """One thread's generator and buffers (fastText's ``Model::State``). The block
    kernel unpacks it once per block: a tuple of arrays passed once per word to a
    function that is not inlined costs more than the arithmetic."""

    rng: np.ndarray  # uint64 (1): word2vec.c's generator state
    sentence: np.ndarray  # int32: the current sentence's words after subsampling
    positions: np.ndarray  # int64: their indices in the block (for the learning rate)
    ctx: np.ndarray  # int32 (2·window): the current context words
    rows: np.ndarray  # float32 (2, 2·window, D): context vectors and their gradient steps
    pairs: np.ndarray  # float32 (2, 2·window, 2·window): skip-gram's Gram and cross products
    path: np.ndarray  # float32 (2, 2·window, P): scores and branch gradients (P: the
    # most nodes a step visits, all codes of a word, plus its codes)
    hot_rows: np.ndarray  # float32 (K, D): private copies of the hot inner nodes …
    hot_base: np.ndarray  # … and their values at the last merge
    extra: tuple = ()  # the kind's matrices as this thread trains them: its own copies
    # when it has hot rows (several threads), else the shared matrices themselves …
    extra_base: tuple = ()  # … and the copies' values at the last merge
    word_rows: np.ndarray = _NO_ROWS  # float32 (K, D): private copies of syn0[:K], the
    # input vectors of the K most frequent words (a kind's ``private_words``) …
    word_base: np.ndarray = _NO_ROWS  # … and their values at the last merge
    ring: np.ndarray = np.zeros((2, 0, 1), np.float32)  # float32 (2, R, D), with subwords:
    # the sums of the rows of the words at the window's R latest positions, and the
    # gradient steps not yet added to those rows (see hsw2v.training.cbow.centre_subwords)
    ring_pos: np.ndarray = np.zeros(0, np.int64)  # int64 (R): each slot's position (-1: none)
    ring_word: np.ndarray = _NO_INTS  # int32 (R): each slot's word


LINE = 64
"""Bytes of a cache line: the unit in which cores share memory."""


def _own(shape: int | tuple[int, ...], dtype: type, like: np.ndarray | None = None) -> np.ndarray:
    """An array of one thread's own, C order, that shares no cache line with any
    other array (aligned to a line, with a line spare after it): a small buffer
    next to another thread's would move between the cores at every write. A copy
    of ``like`` where given."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + 3 * LINE, dtype=np.uint8)
    at = -raw.ctypes.data % LINE + LINE
    out = raw[at:at + size].view(dtype).reshape(shape)
    if like is not None:
        out[...] = like
    return out


def new_state(seed: int, block_words: int, window: int, longest_path: int,
              hot_rows: np.ndarray, extra: tuple = (), word_rows: np.ndarray | None = None,
              subwords: bool = False) -> State:
    """A thread's state: generator ``seed``, room for ``block_words`` words a block,
    its own copy of ``hot_rows`` and, if there are hot rows, of the kind's matrices
    ``extra`` (``Weights.extra``), merged like them: every thread would otherwise
    write the same few rows (LBL's position weights) at every word. So with
    ``word_rows`` (``syn0[:K]``; none if None), the most frequent words' input vectors.
    With ``subwords``, a ring of 2·window + 2 slots (:attr:`State.ring`)."""
    dim = hot_rows.shape[1]
    width = 2 * window
    words = np.zeros((0, dim), np.float32) if word_rows is None else word_rows
    rng = _own(1, np.uint64)
    rng[0] = seed

    def copy(m: np.ndarray) -> np.ndarray:
        return _own(m.shape, np.float32, m)
    return State(
        rng, _own(block_words, np.int32), _own(block_words, np.int64), _own(width, np.int32),
        _own((2, width, dim), np.float32), _own((2, width, width), np.float32),
        _own((2, width, longest_path), np.float32), copy(hot_rows), copy(hot_rows),
        *((tuple(copy(m) for m in extra), tuple(copy(m) for m in extra)) if len(hot_rows)
          else (tuple(extra), tuple(extra))), copy(words), copy(words),
        *_ring(2 * window + 2 if subwords else 0, dim))


def _ring(slots: int, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A thread's ring of ``slots`` window positions, all empty (:attr:`State.ring`)."""
    pos = _own(slots, np.int64)
    pos[:] = -1
    return _own((2, slots, dim), np.float32), pos, _own(slots, np.int32)
