"""hsw2v.training.ring: the window's ring of subword sums, against numpy."""
import numpy as np
import pytest
from numba import njit

from hsw2v.training.ring import add_to_rows, context_positions, flush_ring, sum_rows
from hsw2v.training.walk import example_context


@njit
def _positions_and_words(sen, m, window, shrink, seed, ctx_a, ctx_b):
    r_a = r_b = seed
    out = []
    for i in range(m):
        n_a, r_a = context_positions(None, sen, i, m, window, shrink, r_a, ctx_a)
        n_b, r_b = example_context(None, sen, i, m, window, shrink, r_b, ctx_b)
        same = n_a == n_b and r_a == r_b
        for k in range(n_a):
            same = same and sen[ctx_a[k]] == ctx_b[k] and ctx_a[k] != i
        out.append(same)
    return out


@pytest.mark.parametrize("shrink", [True, False])
def test_context_positions_are_where_the_context_words_are(shrink):
    """The positions hold, in order, the words the usual context holds, with the
    same draws of the generator."""
    sen = np.random.default_rng(0).integers(0, 9, 57).astype(np.int32)
    flags = _positions_and_words(sen, len(sen), 4, shrink, np.uint64(7), np.empty(8, np.int32),
                                 np.empty(8, np.int32))
    assert all(flags)


@njit
def _sum(syn0, rows, lo, hi, out):
    sum_rows(syn0, rows, lo, hi, out, syn0.shape[1])


@njit
def _add(syn0, rows, lo, hi, step):
    add_to_rows(syn0, rows, lo, hi, step, syn0.shape[1])


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 9])
def test_rows_are_summed_and_moved_as_numpy_does(n):
    """Four rows a pass and the rest one at a time, a row listed twice counted
    twice: numpy's sum and ``np.add.at``."""
    rng = np.random.default_rng(n)
    syn0 = rng.normal(size=(6, 10)).astype(np.float32)
    rows = np.r_[rng.integers(0, 6, n), [0]].astype(np.int32)  # (a row after the span)
    out = np.full(10, 99.0, np.float32)
    _sum(syn0, rows, 0, n, out)
    np.testing.assert_allclose(out, syn0[rows[:n]].sum(axis=0), rtol=1e-5, atol=1e-6)
    step = rng.normal(size=10).astype(np.float32)
    expected = syn0.copy()
    np.add.at(expected, rows[:n], step)
    _add(syn0, rows, 0, n, step)
    np.testing.assert_allclose(syn0, expected, rtol=1e-6, atol=1e-6)


@njit
def _flush(syn0, offsets, rows, pending, ring_pos, ring_word):
    flush_ring(syn0, offsets, rows, pending, ring_pos, ring_word, syn0.shape[1])


def test_flushing_adds_each_held_words_pending_step_and_empties_the_ring():
    offsets = np.array([0, 2, 5, 6], np.int32)
    rows = np.array([0, 3, 1, 3, 4, 2], np.int32)  # word 0: rows 0, 3; word 1: 1, 3, 4 …
    syn0 = np.zeros((5, 4), np.float32)
    pending = np.array([[1] * 4, [10] * 4, [100] * 4], np.float32)
    ring_pos = np.array([5, -1, 9], np.int64)  # slot 1 empty: its step is not added
    ring_word = np.array([1, 0, 2], np.int32)
    _flush(syn0, offsets, rows, pending, ring_pos, ring_word)
    assert syn0[:, 0].tolist() == [0, 1, 100, 1, 1]  # word 1's rows once, word 2's row
    assert ring_pos.tolist() == [-1, -1, -1]
