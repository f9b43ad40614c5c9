"""The training loop and the model kinds.

``walk`` turns a block of sentences into (target, context) examples, for training,
scoring and the semantic trees alike; ``block`` trains a block by handing each
example to the centre step of the model kind; ``cbow`` and ``skipgram`` are the
kinds' steps; ``kinds`` is the ``model_kinds`` registry and ``steps`` picks a kind's
context by the type of its config, for the callers the kinds share; ``state`` holds the shared ``Weights`` and a
thread's ``State``.

Adding a kind without losing inlining: write a module here with ``Config`` (a
NamedTuple; its type selects the kind's steps when numba compiles),
``config_of(settings)``, and ``centre`` and ``context`` compiled with
``njit(**KERNEL, inline="always")`` (a big step calls a helper that is not
inlined, as skip-gram's does); then add a ``ModelKind`` naming that module to
``kinds.model_kinds``. :func:`block.block_kernel_of` makes the kind's block
kernel, a copy of the template with the kind's steps in its globals (so numba
inlines them before typing), and :func:`block.block_kernel` compiles it for the
vector size, a constant. See :mod:`hsw2v.training.kinds` for the signatures.

May import: ``hsw2v.errors``, ``hsw2v.jit``, ``hsw2v.hs``.
"""
