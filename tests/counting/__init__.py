"""Tests of :mod:`hsw2v.counting`: the counting pass, its tables and spool, and the
vocabulary."""
