"""Tests of :mod:`hsw2v.softmax`: the step along a word's path for words with one code
and for words with several, and the exact best-first search."""
