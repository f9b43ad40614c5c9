"""The trained model and its files: ``Model`` (prediction, neighbours; writing the
model file, ``.npz``), reading model and vectors files, never unpickled
(``reading``), word2vec text and binary vectors files
(``word2vec_format``, with their formatting kernels in ``text_rows``), fastText's
``.bin`` model file (``fasttext_format``), ``Vectors``,
their fast-loading copies in the user's cache directory (``vectors_cache``), and the
default output names.

May import: every layer below ``hsw2v.settings`` and the settings."""
