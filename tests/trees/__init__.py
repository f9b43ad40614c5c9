"""Tests of :mod:`hsw2v.trees`: trees, their builders, WordNet, pictures and growing."""
