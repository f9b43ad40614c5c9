"""Reading and tokenizing text: corpus sources (files, directories, globs, URLs,
stdin; plain, .gz, .bz2, .zst), 1 MiB blocks that end on whitespace (``reader``),
and the numba word hash table that turns a block into word ids (``tokens``).

May import: ``hsw2v.errors``, ``hsw2v.jit``, ``hsw2v.system``."""
