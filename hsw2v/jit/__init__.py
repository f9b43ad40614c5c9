"""numba helpers: compile options (``JIT``, ``KERNEL``, ``EXACT``, ``IEEE``), word2vec.c's
random generator, FNV-1a hashing, cache-prefetch intrinsics, ``for_dim``, which
compiles a kernel for one vector size, ``specialised``, which makes a kernel's copy
of the steps it needs, a fix for numba's inliner (:mod:`.inlining`), the kernels'
cache in the user's cache directory (never in the installed package; a private
one under $TMPDIR where that cannot be written) and cache keys that cover the
files a kernel inlines (:mod:`.cache`), all applied here, before any kernel loads.

May import: numpy, numba and llvmlite only; nothing from the package (pynndescent's
``utils.py``)."""
from .cache import ensure_cache_dir, guard_cache_writes, stamp_kernel_sources
from .inlining import at_first_compile

ensure_cache_dir()
stamp_kernel_sources()
guard_cache_writes()
at_first_compile()
