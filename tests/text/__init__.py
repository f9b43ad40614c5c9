"""Tests of :mod:`hsw2v.text`: reading text files and sources, and sentences given from
Python."""
