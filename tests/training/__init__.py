"""Tests of :mod:`hsw2v.training`: the model kinds' block kernels against numpy
references, the walk, skip-gram, the language model, and the kinds' registry."""
