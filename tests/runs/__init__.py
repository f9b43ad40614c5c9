"""Tests of :mod:`hsw2v.runs`: the local engine end to end (the trainer), checkpoints
and resuming, the kernels' setup, and growing a model's vocabulary."""
