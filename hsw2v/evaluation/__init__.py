"""Evaluation and scoring: analogies and word-pair correlations (``evaluate``),
and held-out mean −log P and perplexity (``scoring``).

May import: every layer up to ``hsw2v.model``."""
