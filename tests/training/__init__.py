"""Tests of :mod:`hsw2v.training`: the model kinds' block kernels against numpy
references, and the language model."""
