"""Tests of :mod:`hsw2v.trees`: trees, their builders, semantic trees, WordNet, pictures and
growing."""
