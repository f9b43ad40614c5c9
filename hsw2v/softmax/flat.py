"""A tree as the numba kernels take it: each leaf's root-first path in CSR form,
one value (pynndescent's ``FlatTree``)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class FlatPaths(NamedTuple):
    """Every leaf's root-first path in CSR form, as one value for numba kernels:
    leaf ``k``'s inner nodes are ``nodes[offsets[k]:offsets[k+1]]``, its branches
    ``codes[...]`` (0 or 1). What the training kernels take when every word has one
    code (:attr:`Tree.training_paths`)."""

    offsets: np.ndarray  # int64 (L+1)
    nodes: np.ndarray  # int32
    codes: np.ndarray  # uint8


class FlatCodes(NamedTuple):
    """:class:`FlatPaths` plus each word's codes: word ``w``'s leaves are
    ``leaves[leaf_offsets[w]:leaf_offsets[w+1]]``, the first of them ``w`` itself;
    ``leaf_words`` maps back."""

    offsets: np.ndarray  # int64 (L+1)
    nodes: np.ndarray  # int32
    codes: np.ndarray  # uint8
    leaf_offsets: np.ndarray  # int64 (V+1)
    leaves: np.ndarray  # int32 (L)
    leaf_words: np.ndarray  # int32 (L): the word of each leaf
