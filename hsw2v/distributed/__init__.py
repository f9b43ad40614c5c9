"""Training on a Dask cluster: clients and task plumbing (``cluster``), a round as a
worker trains it (``rounds``), the quantized changes that travel (``quantize``), a
worker's spool of its slices (``spool``), and the client's driver (``driver``).

May import: every layer up to ``hsw2v.runs``; dask only inside functions."""
