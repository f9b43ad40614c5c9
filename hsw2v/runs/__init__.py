"""Local orchestration and checkpoints: the threads and the epoch loop
(``trainer``), the learning-rate schedule and the epoch-loss account shared with
Dask (``schedule``), what the threads share (``kernels``), and checkpoints
(``checkpoint``).

May import: every layer up to ``hsw2v.evaluation``."""
