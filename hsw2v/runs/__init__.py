"""Local orchestration and checkpoints: the local engine (``trainer``: counting,
vocabulary, tree, weights), its epochs in threads (``epochs``, which Dask's
workers run on their slices too), what both engines share (``common``: starting
weights, continued settings, the vocabulary and convergence checks; ``schedule``:
the learning rate and the epoch-loss account), what the threads share
(``kernel_setup``, whose first kernel a forked child compiles while a first run counts),
and checkpoints (``checkpoint``).

May import: every layer up to ``hsw2v.evaluation``."""
