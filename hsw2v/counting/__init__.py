"""Counting and the token spool: the counting pass with bounded memory and exact
merging (``counter``, ``corpus.count_words``), the vocabulary (``vocab``), the
token spool that later epochs read instead of the text, and ``WordTable``, which
encodes text into a vocabulary's ids.

May import: ``hsw2v.errors``, ``hsw2v.jit``, ``hsw2v.system``, ``hsw2v.text``."""
