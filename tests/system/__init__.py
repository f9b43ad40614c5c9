"""Tests of :mod:`hsw2v.system`: compiling the first run's training kernel ahead in a
forked child, and the same bits whether the kernels compile or load; files, memory,
threads, and seeing numba compile."""
