"""Hierarchical softmax, by job: a tree as the kernels take it (``flat``:
``FlatPaths``, ``FlatCodes``); the SGD step along a target's path, from what both
updates share (``branch``: the loss and slope of one branch) to the update for a
word with one code (``one_code``) or several (``several_codes``) and the step a
kernel takes (``step``: the copies and the ``target_step`` stand-in); and exact
prediction by best-first search with the paths' log-probabilities (``search``),
as fastText's loss.cc keeps them.

May import: ``hsw2v.jit`` only."""
