"""Tests of :mod:`hsw2v.model`: model files, vectors files and their cache, default
files, files written by older versions, word vectors and their text rows."""
