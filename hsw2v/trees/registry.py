"""The tree builders, by name (``--tree``): the extension point for trees.

A builder takes :class:`TreeInputs` (the vocabulary's words and counts, the run's
settings, and, for builders that learn from vectors, a source model and the text
its context vectors are averaged over) and returns a :class:`~hsw2v.trees.tree.Tree`
over the vocabulary. A :class:`TreeBuilder` also says which settings belong to it,
checks them, whether it learns from a source model (``--tree-from``; without one,
the trainer first trains a model on the builder's ``first_pass`` tree: one-shot), and whether it can
run on a Dask cluster.

To add a tree: write ``build(inputs) -> Tree`` in a module of this subpackage and
add an entry to :data:`tree_builders`. The CLI's ``--tree`` choices, the settings'
checks, the trainer, the Dask driver and the tests all loop over this registry.
Heavy modules load inside ``build``, so importing the registry (and ``hsw2v
--help``) stays fast.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..errors import HSW2VError, param
from ..declared import Setting
from .tree import SPLITS, Tree, balanced, classes, fano, huffman, random_tree


class TreeInputs(NamedTuple):
    """What a builder may use."""

    words: list[str]  # the vocabulary, most frequent first
    counts: np.ndarray  # int64 (V): their counts, descending
    settings: Any  # the run's TrainSettings (seed, split, epsilon, ...)
    source: Any = None  # a Model whose context vectors a learned tree clusters
    corpus: Any = None  # the text those context vectors are averaged over
    tokens: Any = None  # where the run has them (its token spool), a function giving
    # the corpus's blocks as (word ids, sentence ends): then the text is not encoded again


@dataclass(frozen=True)
class TreeBuilder:
    """A tree kind: how to build it, and what it needs."""

    build: Callable[[TreeInputs], Tree]
    help: str
    settings: tuple[Setting, ...] = ()
    """The settings only this builder reads, declared here: given with another tree,
    they are an error (see :mod:`hsw2v.declared`)."""
    check: Callable[[Any], str | None] = lambda settings: None
    """A problem with the settings as one line (option names), or None."""
    learns_from_model: bool = False
    """Built from a source model's context vectors (``--tree-from``, or one-shot)."""
    model_optional: bool = False
    """Uses a source model's context vectors when ``--tree-from`` gives one, and
    builds without one otherwise (no one-shot pass)."""
    from_counts: bool = False
    """Built from the counts alone (no words, model or files): usable for a part
    of the vocabulary, as the WordNet tree's words WordNet lacks."""
    on_dask: bool = True
    """Whether ``--engine dask`` can build it (on the client, from word counts)."""
    ready: Callable[[Any], None] = lambda settings: None
    """Raises HSW2VError when something the build reads is missing (a database),
    so that a run fails before it reads the corpus."""
    first_pass: str | None = None
    """For a builder that learns from a model: the tree kind of the first pass that a
    run trains for it without ``--tree-from`` (one-shot), and that Dask, which
    does not build it, trains on instead."""
    compile_kernels: Callable[[Any], None] | None = None
    """Loads, or compiles into numba's cache, the kernels the build calls for a
    source model of a model's kind and vector size (given that model): on a first
    run, what this process does while a child compiles the training kernel."""

    @property
    def takes_model(self) -> bool:
        """Whether ``--tree-from`` goes with this tree."""
        return self.learns_from_model or self.model_optional


SPLIT = Setting("split", None, "semantic (and wordnet with --tree-from): halve each node's "
                "words, or send each word to its likelier mixture component", type=str,
                choices=SPLITS)
"""A setting of the semantic and WordNet trees."""


def _semantic(inputs: TreeInputs) -> Tree:
    from .semantic import context_means, semantic_below, semantic_tree

    s, source = inputs.settings, inputs.source
    if source.dim < 1 or len(source.vocab) < 2:
        raise HSW2VError("tree_from: the model has no usable vectors")
    X = context_means(source, inputs.corpus, s.threads, inputs.tokens)
    if s.huffman_levels:
        return semantic_below(X, inputs.counts, s.huffman_levels, s.split)
    return semantic_tree(X, s.split, epsilon=s.epsilon, max_codes=s.max_codes, threads=s.threads)


def _semantic_kernels(model: Any) -> None:
    from .semantic import compile_kernels

    compile_kernels(model)


def _semantic_check(s: Any) -> str | None:
    if s.epsilon and s.split != "adaptive":
        return f"{param('epsilon')} goes with {param('tree', 'semantic')} {param('split', 'adaptive')}"
    if s.epsilon and s.huffman_levels:
        return f"{param('epsilon')} and {param('huffman_levels')} do not go together"
    if s.epsilon and s.max_codes == 1:
        return f"{param('epsilon')} needs {param('max_codes')} of 2 or more"
    return None


def _wordnet(inputs: TreeInputs) -> Tree:
    from .wordnet import find_database, load_database, wordnet_tree

    s = inputs.settings
    database = load_database(find_database(s.wordnet))
    rest = tree_builder(s.wordnet_rest)
    vectors = None
    if inputs.source is not None:
        from .semantic import context_means
        vectors = context_means(inputs.source, inputs.corpus, inputs.settings.threads,
                                inputs.tokens)
    tree = wordnet_tree(inputs.words, inputs.counts, database,
                        lambda counts: rest.build(TreeInputs([], counts, s)), vectors, s.split)
    covered, total = tree.details["covered_tokens"], int(inputs.counts.sum())
    if covered < WORDNET_FLOOR * total:
        raise HSW2VError(f"WordNet covers {tree.details['covered_words']} of {len(inputs.words)} "
                         f"words ({covered / total:.1%} of the tokens), below the floor of "
                         f"{WORDNET_FLOOR:.0%}: is the corpus English, and the database whole?")
    return tree


WORDNET_FLOOR = 0.05
"""A WordNet tree must cover at least this share of the corpus's tokens (English
Wikipedia: 75%); less means another language or a damaged database."""


def _wordnet_check(s: Any) -> str | None:
    if not tree_builders[s.wordnet_rest].from_counts:
        kinds = [k for k, b in tree_builders.items() if b.from_counts]
        return f"{param('wordnet_rest')} must be one of {', '.join(kinds)}, got {s.wordnet_rest!r}"
    return None


def _wordnet_ready(s: Any) -> None:
    from .wordnet import find_database

    find_database(s.wordnet)


tree_builders: dict[str, TreeBuilder] = {
    "huffman": TreeBuilder(lambda i: huffman(i.counts),
                           "Huffman coding of the counts: frequent words get short paths.",
                           from_counts=True),
    "balanced": TreeBuilder(lambda i: balanced(len(i.counts)), "A balanced tree.", from_counts=True),
    "random": TreeBuilder(lambda i: random_tree(len(i.counts), i.settings.seed),
                          "A balanced tree over the words in random order (--seed).",
                          from_counts=True),
    "fano": TreeBuilder(lambda i: fano(i.counts), "Shannon-Fano splits of the counts.",
                        from_counts=True),
    "classes": TreeBuilder(lambda i: classes(i.counts),
                           "Frequency classes (Goodman 2001): a Huffman tree over about √V classes.",
                           from_counts=True),
    "semantic": TreeBuilder(
        _semantic, "Mnih & Hinton's trees, by recursive 2-means of context vectors.",
        settings=(SPLIT, Setting(
            "epsilon", None, "semantic, adaptive split: a word whose responsibility lies within "
            "this of ½ goes to both sides and gets several codes (Mnih & Hinton's ADAPTIVE(ε); "
            "0: one code a word)", type=float), Setting(
            "max_codes", 4, "With --epsilon: the most codes a word may get."), Setting(
            "huffman_levels", 0, "semantic: keep Huffman's tree down to this depth and group "
            "words by meaning only below it (10 lowers skip-gram's held-out perplexity a little)."),
            Setting("tree_epochs", None, "semantic, learned in this run (no --tree-from): the "
                    "epochs of the first pass, on a Huffman tree, whose predictions the tree is "
                    "learned from; the run then starts from that pass's word vectors", type=int)),
        check=_semantic_check, compile_kernels=_semantic_kernels,
        learns_from_model=True, first_pass="huffman", on_dask=False),
    "wordnet": TreeBuilder(
        _wordnet, "Morin & Bengio's tree: WordNet's IS-A hierarchy made binary (--wordnet DIR; "
        "with --tree-from, wide nodes split by meaning).",
        settings=(Setting("wordnet", None, "wordnet: the WordNet database's directory "
                          "[$WNHOME/dict, /usr/share/wordnet, or NLTK's corpora/wordnet].", type=str),
                  Setting("wordnet_rest", "huffman", "wordnet: the tree over the words WordNet "
                          "lacks.", choices=lambda: tuple(k for k, b in tree_builders.items()
                                                          if b.from_counts)), SPLIT),
        check=_wordnet_check, model_optional=True,
        ready=_wordnet_ready),
}
"""Every tree kind, by the name ``--tree`` takes."""

BUILT_IN_TREES = tuple(tree_builders)
"""The trees of the package itself (see :data:`hsw2v.training.kinds.BUILT_IN_KINDS`)."""


def tree_builder(kind: str) -> TreeBuilder:
    """The builder named ``kind``, or an HSW2VError listing the kinds."""
    if kind not in tree_builders:
        raise HSW2VError(f"tree: unknown kind {kind!r}; choose from {', '.join(tree_builders)}")
    return tree_builders[kind]


def tree_for(tree: str | None, tree_from: bool) -> str | None:
    """The tree kind a run builds (the one home of this rule): ``tree`` if given;
    else, with a source model (``tree_from``), the first builder that learns from
    one; else None, the model kind's default (:mod:`hsw2v.settings`). A source model
    with a tree that takes none is an error."""
    kind = tree or (next(k for k, b in tree_builders.items() if b.learns_from_model)
                    if tree_from else None)
    if tree_from and not tree_builder(kind).takes_model:
        takers = [k for k, b in tree_builders.items() if b.takes_model]
        raise HSW2VError(f"{param('tree_from')} goes with "
                         f"{' or '.join(param('tree', k) for k in takers)}")
    return kind


def build_tree(kind: str, inputs: TreeInputs) -> Tree:
    """A tree of ``kind`` (a key of :data:`tree_builders`) from ``inputs``; its
    :attr:`~hsw2v.trees.tree.Tree.builder` is ``kind``."""
    tree = tree_builder(kind).build(inputs)
    tree.builder = kind
    return tree
