"""The training loop and the model kinds.

``walk`` turns a block of sentences into (target, context) examples, for training,
scoring and the semantic trees alike. ``cbow`` and ``skipgram`` are the kinds' centre
steps, ``block`` the kernel that trains a block, and ``kinds`` the ``model_kinds``
registry that names them.

May import: ``hsw2v.errors``, ``hsw2v.jit``, ``hsw2v.hs``."""
