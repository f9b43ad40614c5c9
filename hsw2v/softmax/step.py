"""The SGD step a kernel takes along a target's path: the one-code update
(:mod:`hsw2v.softmax.one_code`) or, when the tree's paths are a :class:`FlatCodes`,
for each target the one-code or the several-codes update
(:mod:`hsw2v.softmax.several_codes`) by its number of codes (:func:`codes_of`);
copied for node vectors with a bias column or without and for word2vec.c's edge
or without (:func:`step_for`). In numba code a kernel's steps call
:func:`target_step`, a stand-in for the copy it needs.
"""
from __future__ import annotations

from typing import Any

from numba import njit, types
from numba.extending import overload

from ..jit.helpers import KERNEL, specialised
from .branch import EDGE_SIGMOID
from .flat import FlatCodes, FlatPaths
from .one_code import one_code_step
from .several_codes import multi_code_step

NODE_BIAS: bool
"""Whether the node vectors hold a bias column (``--node-bias``): a compile-time
constant of each copy of the steps that read it (:func:`step_copy`), so that
numba drops the other case before typing it (a tenth of a first run's compile).
Not defined here: a step compiled without a copy's constant fails to compile."""


def step_copy(fn, bias: bool, edge: bool = False):
    """A copy of the ``inline="always"`` numba function ``fn`` for node vectors with
    a bias column or without (``bias``; see :data:`NODE_BIAS`), and of the inlined
    functions it calls that read it; with ``edge``, they read
    :data:`~hsw2v.softmax.branch.EDGE_SIGMOID` as :data:`~hsw2v.softmax.branch.SIGMOID`
    (word2vec.c's edge). Its name says which (numba caches it apart)."""
    copy = specialised(fn, NODE_BIAS=bias, **({"SIGMOID": EDGE_SIGMOID} if edge else {}))
    copy.py_func.__qualname__ += "_with_node_bias" if bias else "_without_node_bias"
    copy.py_func.__qualname__ += "_edge" if edge else ""
    return copy


def _has_codes(paths) -> bool:
    """Whether numba type ``paths`` is a :class:`FlatCodes` (else a :class:`FlatPaths`)."""
    return isinstance(paths, types.BaseNamedTuple) and paths.instance_class is FlatCodes


def codes_of(paths: FlatPaths | FlatCodes, word: int) -> int:
    """How many codes ``word`` has; always 1 in a :class:`FlatPaths`, and in numba
    code a constant then."""
    if isinstance(paths, FlatCodes):
        return int(paths.leaf_offsets[word + 1] - paths.leaf_offsets[word])
    return 1


@overload(codes_of, jit_options=KERNEL)
def _codes_of(paths, word):
    if _has_codes(paths):
        return lambda paths, word: paths.leaf_offsets[word + 1] - paths.leaf_offsets[word]
    return lambda paths, word: 1


@njit(**KERNEL, inline="always")
def any_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """The SGD step for predicting ``target`` from ``h`` when ``paths`` is a
    :class:`FlatCodes`: :func:`one_code_step` for a word with one code,
    :func:`multi_code_step` for a word with several (same arguments; both read
    :data:`NODE_BIAS`, see :func:`step_for`)."""
    if codes_of(paths, target) > 1:
        return multi_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h,
                               scratch, dim)
    return one_code_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch,
                         dim)


_steps: dict[tuple[bool, bool, bool], Any] = {}


def step_for(codes: bool, bias: bool, edge: bool = False) -> Any:
    """The SGD step (an ``inline="always"`` numba function) for paths with several
    codes a word (:func:`any_code_step`) or one (:func:`one_code_step`), for node
    vectors with a bias column or without, and with word2vec.c's edge or without
    (see :func:`step_copy`). Made once."""
    if (codes, bias, edge) not in _steps:
        _steps[codes, bias, edge] = step_copy(any_code_step if codes else one_code_step,
                                                   bias, edge)
    return _steps[codes, bias, edge]


def target_step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim):
    """The SGD step for predicting ``target`` from ``h``: :func:`step_for` ``paths``
    and ``syn1``'s columns.

    In numba code, a stand-in: a kernel gets its own copy of the steps that call it,
    with the step it needs in its place (:func:`hsw2v.jit.helpers.specialised`), so
    that it compiles only that step."""
    step = step_for(isinstance(paths, FlatCodes), syn1.shape[1] > dim)
    return step(h, target, alpha, syn1, hot_slot, hot_rows, paths, grad_h, scratch, dim)
