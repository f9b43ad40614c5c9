"""The process and its files: Ctrl-C, SIGTERM and SIGHUP handling (``signals``),
memory handed back to the OS (``memory``), progress bars (``progress``), numba's
compiles counted and announced (``compiling``), and atomic writes with
both-or-neither outputs (``files``).

May import: ``hsw2v.errors`` only."""
