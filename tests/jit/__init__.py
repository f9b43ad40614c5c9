"""Tests of :mod:`hsw2v.jit`: what numba's cache holds, and when it is stale; the numba
helpers against plain Python."""
