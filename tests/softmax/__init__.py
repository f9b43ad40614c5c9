"""Tests of :mod:`hsw2v.softmax`: the step along a word's path and the exact search, for words
with several codes."""
