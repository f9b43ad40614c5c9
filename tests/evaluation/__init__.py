"""Tests of :mod:`hsw2v.evaluation`: the benchmark evaluator, prediction and scoring."""
