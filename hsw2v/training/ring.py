"""The window's ring of subword sums: how CBOW with subwords reads and writes each
word's rows once while it is in the window, not at every example it is a context of.

A word's rows (its own and its n-grams') are summed when its position first enters
a context, into one of the ring's 2·window + 2 slots; each step then moves the
slot's sum as it moves the rows (every row by the step g: a sum of n rows by n·g)
and keeps the step pending; the pending steps go to the rows when the slot is
reused by a later position, at a sentence's start and at a block's end. One read
and one write of a word's dozen rows, against one of each at every one of the
(about six) examples it is a context of. What a step sees differs from adding
every step at once only where two words of one window share an n-gram's row: one
does not see the other's steps until it leaves the window, as a thread does not
see another's (Hogwild)."""
from __future__ import annotations

from numba import njit

from ..jit.helpers import KERNEL
from .walk import shrunk_window


@njit(**KERNEL, inline="always")
def add_pending(syn0, offsets, sub_rows, step, word, dim):
    """Add ``step`` to each of ``word``'s rows."""
    add_to_rows(syn0, sub_rows, offsets[word], offsets[word + 1], step, dim)


@njit(**KERNEL, inline="always")
def add_to_rows(syn0, sub_rows, lo, hi, step, dim):
    """Add ``step`` to rows ``sub_rows[lo:hi]`` of ``syn0``, four rows a pass (one
    load of each step value serves four)."""
    j = lo
    while j + 4 <= hi:
        r0, r1, r2, r3 = syn0[sub_rows[j]], syn0[sub_rows[j + 1]], syn0[sub_rows[j + 2]], \
            syn0[sub_rows[j + 3]]
        for d in range(dim):
            s = step[d]
            r0[d] += s
            r1[d] += s
            r2[d] += s
            r3[d] += s
        j += 4
    while j < hi:
        row = syn0[sub_rows[j]]
        for d in range(dim):
            row[d] += step[d]
        j += 1


@njit(**KERNEL, inline="always")
def sum_rows(syn0, sub_rows, lo, hi, out, dim):
    """``out`` = the sum of rows ``sub_rows[lo:hi]`` of ``syn0``, four rows a pass
    (one load and store of ``out`` serves four)."""
    out[:] = 0.0
    j = lo
    while j + 4 <= hi:
        r0, r1, r2, r3 = syn0[sub_rows[j]], syn0[sub_rows[j + 1]], syn0[sub_rows[j + 2]], \
            syn0[sub_rows[j + 3]]
        for d in range(dim):
            out[d] += (r0[d] + r1[d]) + (r2[d] + r3[d])
        j += 4
    while j < hi:
        row = syn0[sub_rows[j]]
        for d in range(dim):
            out[d] += row[d]
        j += 1


@njit(**KERNEL, inline="always")
def flush_ring(syn0, offsets, sub_rows, pending, ring_pos, ring_word, dim):
    """Add each occupied slot's pending step to its word's rows, and empty the ring;
    nothing where the ring has no slots (without subwords)."""
    for k in range(len(ring_pos)):
        if ring_pos[k] >= 0:
            add_pending(syn0, offsets, sub_rows, pending[k], ring_word[k], dim)
            ring_pos[k] = -1


@njit(**KERNEL, inline="always")
def slot_of(t, position, dim):
    """The ring slot of the word at ``position`` of the current sentence, filled with
    the sum of its rows if it was not there (adding the pending step of the position
    it replaces to that one's rows first). ``t``: the block's visitor."""
    held = t.ring_pos
    slot = position % len(held)
    if held[slot] != position:
        inputs, offsets, their_rows = t.syn0, t.sub_offsets, t.sub_rows
        total, pending = t.ring[0, slot], t.ring[1, slot]
        if held[slot] >= 0:
            add_pending(inputs, offsets, their_rows, pending, t.ring_word[slot], dim)
        word = t.sentence[position]
        sum_rows(inputs, their_rows, offsets[word], offsets[word + 1], total, dim)
        pending[:] = 0.0
        held[slot] = position
        t.ring_word[slot] = word
    return slot


@njit(**KERNEL, inline="always")
def context_positions(config, sen, i, m, window, shrink, r, ctx):
    """:func:`hsw2v.training.walk.example_context` with the context's positions in
    the sentence in ``ctx``, not its words (the same draws of the generator)."""
    if shrink:
        lo, hi, r = shrunk_window(i, m, window, r)
    else:
        lo, hi = max(0, i - window), min(m, i + window + 1)
    n = 0
    for j in range(lo, hi):
        if j != i:
            ctx[n] = j
            n += 1
    return n, r

