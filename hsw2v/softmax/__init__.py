"""Hierarchical softmax: a tree as the kernels take it (``flat``: ``FlatPaths``,
``FlatCodes``), the SGD step along a word's path and, beside it, the exact
best-first search and path log-probabilities, for words with one code
(``one_code``) and with several (``several_codes``), as fastText's loss.cc keeps
them.

May import: ``hsw2v.jit`` only."""
