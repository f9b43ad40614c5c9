"""Tests of :mod:`hsw2v.runs`: the local engine end to end (the trainer), and
checkpoints and resuming."""
