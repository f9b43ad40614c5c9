"""Subword vectors, as fastText builds them (Bojanowski et al., 2017): each word's
character n-grams, hashed exactly as fastText hashes them into its buckets
(``ngrams``), and a word's vector as the mean of its own row and its n-grams'
rows (``compose``).

May import: ``hsw2v.errors``, ``hsw2v.jit``."""
