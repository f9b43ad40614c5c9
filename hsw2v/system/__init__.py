"""The process and its files: Ctrl-C, SIGTERM and SIGHUP handling (``signals``),
memory handed back to the OS (``memory``), progress bars (``progress``), numba's
compiles counted and announced (``compiling``), atomic writes with
both-or-neither outputs (``files``), work on a stream in threads, in order
(``parallel``), and a kernel compiled by a forked child meanwhile (``ahead``).

May import: ``hsw2v.errors`` only."""
