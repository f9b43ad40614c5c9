"""numba helpers: compile options (``JIT``, ``KERNEL``, ``EXACT``, ``IEEE``), word2vec.c's
random generator, FNV-1a hashing, cache-prefetch intrinsics, and ``for_dim``, which
compiles a kernel for one vector size.

May import: numpy, numba and llvmlite only; nothing from the package (pynndescent's
``utils.py``)."""
