"""The model kinds' numba functions that callers shared by every kind (scoring, the
semantic trees, ``predict``) choose by the type of a kind's config when they
compile: its context matrix (``context_rows``) and the context matrix of a list of
words (``context_of_words``); and ``centre_step``, the name each kind's block
kernel fills with its centre step (see :mod:`hsw2v.training.kinds`)."""
from __future__ import annotations

from numba import njit
from numba.extending import overload

from ..jit.helpers import JIT, KERNEL
from .kinds import kind_of_config


def centre_step(t, target, ctx, n_ctx, alpha, dim):
    """The centre step of a kind (``t``: a block's
    :class:`~hsw2v.training.block.BlockTraining`): (−log P, examples). A stand-in:
    :func:`hsw2v.training.block.block_kernel_of` puts the kind's ``centre`` in its
    place in each kind's kernel."""
    raise NotImplementedError("a stand-in: each kind's kernel holds the kind's centre")


def context_rows(config, syn0, extra, ctx, n_ctx, H, dim):
    """The context matrix of ``config``'s kind, from the word vectors ``syn0`` and its
    other matrices ``extra``, in ``H``; returns its rows (numba only)."""
    raise NotImplementedError("numba only")


@overload(context_rows, jit_options=KERNEL, prefer_literal=True, inline="always")
def _context_rows(config, syn0, extra, ctx, n_ctx, H, dim):
    context = kind_of_config(config.instance_class).steps().context

    def impl(config, syn0, extra, ctx, n_ctx, H, dim):
        return context(config, syn0, extra, ctx, n_ctx, H, dim)
    return impl


@njit(**JIT)
def context_of_words(config, syn0, extra, words, H):
    """The context matrix of ``config``'s kind for the context ``words`` (word ids),
    in the first rows of ``H`` (as many rows as words); returns its rows."""
    return context_rows(config, syn0, extra, words, len(words), H, syn0.shape[1])
