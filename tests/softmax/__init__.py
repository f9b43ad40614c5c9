"""Tests of :mod:`hsw2v.softmax`: the step along a word's path for words with several
codes, and the exact best-first search (the one-code step's tests sit with the block
kernel's, in tests/training/test_block.py)."""
