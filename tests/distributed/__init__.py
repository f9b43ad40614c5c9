"""Tests of :mod:`hsw2v.distributed`: training on a real Dask cluster."""
