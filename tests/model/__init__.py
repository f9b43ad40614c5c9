"""Tests of :mod:`hsw2v.model`: model files, vectors files and their cache, default
files, and files written by older versions."""
