"""Tests of :mod:`hsw2v.text`: reading text files and sources, sentences given from
Python, and the kernels that turn text into word ids."""
