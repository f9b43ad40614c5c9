"""The trained model and its files: ``Model`` (prediction, neighbours), the model
file (``.npz``, never unpickled), word2vec text and binary vectors files
(``word2vec_format``), ``Vectors``, and the default output names.

May import: every layer below ``hsw2v.settings`` and the settings."""
