"""Tests of :mod:`hsw2v.distributed`: training on a real Dask cluster, the cluster's
plumbing, and a round as the workers run it."""
