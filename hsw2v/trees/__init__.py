"""Tree structure and tree builders: ``Tree`` (``tree``), the builders over word
counts (Huffman, balanced, random, Fano, classes), semantic trees from context
vectors (``semantic``), the WordNet tree (``wordnet``), the ``tree_builders``
registry (``registry``), new leaves
for new words (``grow``) and pictures (``plot``).

May import: ``hsw2v.errors``, ``hsw2v.declared``, ``hsw2v.jit``, ``hsw2v.system``,
``hsw2v.text``, ``hsw2v.counting``, ``hsw2v.softmax``, ``hsw2v.training``."""
