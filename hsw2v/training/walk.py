"""The one walk from a block of sentences to (target, context) examples, shared by
training, held-out scoring and the semantic trees' context sums.

For each sentence, the words that survive subsampling are visited in order; each
one's context is the window around it (randomly shrunk, as word2vec.c does, when
training; at full width when scoring), without crossing the sentence's ends. What
happens to an example depends on the *visitor* the walk is given: a named tuple
whose type selects, when numba compiles the walk, the functions registered for it
with :func:`register_visitor` (training's centre step, scoring's −log P, the
semantic trees' sums). The walk is inlined into each caller, so every visitor's
steps are inlined too and the vector size stays a compile-time constant.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from ..hs.softmax import gather_context
from ..jit.helpers import KERNEL, lcg_next, lcg_uniform
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


_VISITORS: dict[type, tuple] = {}


def register_visitor(visitor_type: type, visit, before=None) -> None:
    """Make ``visitor_type`` (a NamedTuple class) a visitor of :func:`walk_block`.

    ``visit(visitor, target, ctx, n_ctx, position, dim)`` handles one example (the
    context words ``ctx[:n_ctx]`` of the word ``target`` at ``position`` in the
    block) and returns (sum of −log P, number of examples). ``before(visitor, sen,
    i, m, dim, tick) -> tick``, if given, runs before the ``i``-th kept word of a
    sentence of ``m`` is looked at, whether or not it has a context; ``tick`` is a
    count it may keep across the block's words (0 at the block's start). Both are numba functions,
    inlined into the walk."""
    _VISITORS[visitor_type] = (visit, before)


def visit_example(visitor, target, ctx, n_ctx, position, dim):
    """What the walk's ``visitor`` does with one example (see :func:`register_visitor`)."""
    raise NotImplementedError("numba only")


def before_word(visitor, sen, i, m, dim, tick):
    """What the walk's ``visitor`` does before each kept word; returns the new ``tick``
    (see :func:`register_visitor`)."""
    raise NotImplementedError("numba only")


@overload(visit_example, jit_options=KERNEL, prefer_literal=True, inline="always")
def _visit_example(visitor, target, ctx, n_ctx, position, dim):
    visit = _VISITORS[visitor.instance_class][0]

    def impl(visitor, target, ctx, n_ctx, position, dim):
        return visit(visitor, target, ctx, n_ctx, position, dim)
    return impl


@overload(before_word, jit_options=KERNEL, prefer_literal=True, inline="always")
def _before_word(visitor, sen, i, m, dim, tick):
    before = _VISITORS[visitor.instance_class][1]
    if before is None:
        return lambda visitor, sen, i, m, dim, tick: tick

    def impl(visitor, sen, i, m, dim, tick):
        return before(visitor, sen, i, m, dim, tick)
    return impl


@njit(**KERNEL, inline="always")
def example_context(sen, i, m, window, shrink, r, ctx):
    """The context of ``sen[i]`` in a sentence of ``m`` words, copied into ``ctx``:
    the window shrunk at random (:func:`shrunk_window`) if ``shrink``, else at full
    width. Returns (its length, rng state)."""
    if shrink:
        lo, hi, r = shrunk_window(i, m, window, r)
    else:
        lo, hi = max(0, i - window), min(m, i + window + 1)
    return gather_context(sen, lo, hi, i, ctx), r


def context_words(config, sen, i, m, window, shrink, r, ctx):
    """The context of ``sen[i]`` as ``config``'s kind takes it: its module's
    ``context_words`` (same arguments) if it has one, else :func:`example_context`,
    the symmetric window. Returns (its length, rng state) (numba only)."""
    raise NotImplementedError("numba only")


@overload(context_words, jit_options=KERNEL, prefer_literal=True, inline="always")
def _context_words(config, sen, i, m, window, shrink, r, ctx):
    own = getattr(kind_of_config(config.instance_class).steps(), "context_words", None)
    take = example_context if own is None else own

    def impl(config, sen, i, m, window, shrink, r, ctx):
        return take(sen, i, m, window, shrink, r, ctx)
    return impl


@njit(**KERNEL, inline="always")
def walk_block(ids, sent_ends, n_sents, keep_prob, window, shrink, r, sen, sen_pos, ctx, visitor,
               dim):
    """Walk the block ``ids`` (sentences ending at ``sent_ends[:n_sents]``): subsample
    each sentence with ``keep_prob`` into ``sen`` (``sen_pos``: each kept word's
    index in the block), take each kept word's context as the kind of
    ``visitor.config`` takes it (:func:`context_words`), and hand every example with
    a context to ``visitor``. ``r``: the generator's
    state. Returns (sum of −log P, number of examples, rng state)."""
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
