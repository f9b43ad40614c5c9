"""The one walk from a block of sentences to (target, context) examples, shared by
training, held-out scoring and the semantic trees' context sums.

For each sentence, the words that survive subsampling are visited in order; each
one's context is the window around it (randomly shrunk, as word2vec.c does, when
training; at full width when scoring), without crossing the sentence's ends. What
happens to an example depends on the *visitor* the walk is given: a named tuple
whose functions :func:`make_walk` puts into a walk of its own (training's centre
step, scoring's −log P, the semantic trees' sums). The walk is inlined into each
caller, so every visitor's steps are inlined too and the vector size stays a
compile-time constant.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from ..jit.helpers import KERNEL, lcg_next, lcg_uniform, with_globals
from .kinds import kind_of_config


@njit(**KERNEL, inline="always")
def subsample(ids, start, end, keep_prob, r, sen, sen_pos):
    """Copy the words of ``ids[start:end]`` that survive subsampling into ``sen``.

    ``sen_pos`` gets each kept word's index in ``ids``. Returns (kept, rng state).
    """
    m = 0
    for k in range(start, end):
        w = ids[k]
        pk = keep_prob[w]
        if pk < 1.0:
            r = lcg_next(r)
            if lcg_uniform(r) >= pk:
                continue
        sen[m] = w
        sen_pos[m] = k
        m += 1
    return m, r


@njit(**KERNEL, inline="always")
def shrunk_window(i, m, window, r):
    """word2vec.c's context span [lo, hi) around word ``i`` of an ``m``-word sentence:
    the window shrunk by a random b in [0, window). Returns (lo, hi, rng state)."""
    r = lcg_next(r)
    b = np.int64(r >> np.uint64(16)) % window
    return max(0, i - window + b), min(m, i + window - b + 1), r


def visit_example(visitor, target, ctx, n_ctx, position, dim):
    """What a walk does with one example: the ``visit`` given to :func:`make_walk`.

    It handles the context words ``ctx[:n_ctx]`` of the word ``target`` at
    ``position`` in the block and returns (sum of −log P, number of examples)."""
    raise NotImplementedError("a stand-in: make_walk puts the visitor's function here")


def before_word(visitor, sen, i, m, dim, tick):
    """What a walk does before the ``i``-th kept word of a sentence of ``m``, with or
    without a context: the ``before`` given to :func:`make_walk`. ``tick`` is a count
    it keeps across the block's words (0 at the block's start); returns the new one."""
    raise NotImplementedError("a stand-in: make_walk puts the visitor's function here")


@njit(**KERNEL, inline="always")
def _nothing_before(visitor, sen, i, m, dim, tick):
    return tick


@njit(**KERNEL, inline="always")
def gather_context(words, lo, hi, i, ctx):
    """Copy the context of ``words[i]``, ``words[lo:hi]`` without it, into ``ctx``;
    return its length."""
    n = 0
    for j in range(lo, hi):
        if j != i:
            ctx[n] = words[j]
            n += 1
    return n


@njit(**KERNEL, inline="always")
def example_context(config, sen, i, m, window, shrink, r, ctx):
    """The context of ``sen[i]`` in a sentence of ``m`` words, copied into ``ctx``
    (the same for every kind's ``config``):
    the window shrunk at random (:func:`shrunk_window`) if ``shrink``, else at full
    width. Returns (its length, rng state)."""
    if shrink:
        lo, hi, r = shrunk_window(i, m, window, r)
    else:
        lo, hi = max(0, i - window), min(m, i + window + 1)
    return gather_context(sen, lo, hi, i, ctx), r


def kind_context_words(kind_module):
    """The ``context_words`` of a kind's module, or :func:`example_context`."""
    return getattr(kind_module, "context_words", example_context)


def context_words(config, sen, i, m, window, shrink, r, ctx):
    """The context of ``sen[i]`` as ``config``'s kind takes it (see
    :func:`kind_context_words`). Returns (its length, rng state) (numba only)."""
    raise NotImplementedError("numba only")


@overload(context_words, jit_options=KERNEL, prefer_literal=True, inline="always")
def _context_words(config, sen, i, m, window, shrink, r, ctx):
    take = kind_context_words(kind_of_config(config.instance_class).steps())

    def impl(config, sen, i, m, window, shrink, r, ctx):
        return take(config, sen, i, m, window, shrink, r, ctx)
    return impl


def walk_block(ids, sent_ends, n_sents, keep_prob, window, shrink, r, sen, sen_pos, ctx, visitor,
               dim):
    """Walk the block ``ids`` (sentences ending at ``sent_ends[:n_sents]``): subsample
    each sentence with ``keep_prob`` into ``sen`` (``sen_pos``: each kept word's
    index in the block), take each kept word's context as the kind of
    ``visitor.config`` takes it (:func:`context_words`), and hand every example with
    a context to the visitor's ``visit``. ``r``: the generator's state. Returns
    (sum of −log P, number of examples, rng state). The template of
    :func:`make_walk`'s walks; not compiled itself."""
    loss = 0.0
    n_examples = 0
    start = 0
    tick = 0
    for s in range(n_sents):
        end = sent_ends[s]
        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)
        start = end
        for i in range(m):
            tick = before_word(visitor, sen, i, m, dim, tick)
            n_ctx, r = context_words(visitor.config, sen, i, m, window, shrink, r, ctx)
            if n_ctx == 0:
                continue
            step_loss, step_examples = visit_example(visitor, sen[i], ctx, n_ctx, sen_pos[i], dim)
            loss += step_loss
            n_examples += step_examples
    return loss, n_examples, r


def make_walk(visit, before=None, context=None):
    """The walk of :func:`walk_block` with the numba functions ``visit``, ``before``
    (see :func:`visit_example` and :func:`before_word`) and ``context`` (a kind's
    ``context_words``; by default chosen by the config's type) in place of its
    stand-ins, compiled ``inline="always"``.

    The functions are put into the walk's globals, not passed as values, so numba
    inlines them, and the walk into its caller, before it types anything: the
    kernel holds one body, compiled once (a function chosen by its argument's type
    is compiled on its own first, then again inlined). Make each walk once.
    """
    names = {"visit_example": visit, "before_word": _nothing_before if before is None else before}
    if context is not None:
        names["context_words"] = context
    return njit(**KERNEL, inline="always")(with_globals(walk_block, **names))
