"""The training loop and the model kinds.

``walk`` turns a block of sentences into (target, context) examples, for training,
scoring and the semantic trees alike; ``block`` trains a block by handing each
example to the centre step of the model kind; ``cbow``, ``skipgram`` and ``lbl``
are the kinds' steps (with subwords too: ``ring`` holds the window's sums of
each word's rows, which CBOW's steps read and move); ``kinds`` is the
``model_kinds`` registry and
``kind_dispatch`` picks a kind's context by the type of its config, for the
callers the kinds share; ``state``
holds the shared ``Weights`` and a thread's ``State``.

How to add a kind: :mod:`hsw2v.training.kinds` (its docstring is the one place
that says it); :mod:`hsw2v.declared` holds the ``Setting`` a kind or tree declares as
its own.

May import: ``hsw2v.errors``, ``hsw2v.declared``, ``hsw2v.jit``, ``hsw2v.system``,
``hsw2v.softmax``.
"""
