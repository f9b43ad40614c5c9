"""Growing a model's vocabulary with the words of new text (``--grow``): the words
of the text outside the model's vocabulary that reach the min-count join it, each
as a new leaf of the tree (:mod:`hsw2v.trees.grow`); every old word keeps its
vector, its code as a prefix of its new one, and every inner node its vector.
New words start as word2vec.c starts every word, new inner nodes at zero. The
vocabulary is in count order again (the counts are the old ones plus the new
text's), so word ids change; the model's ``history`` records each growth."""
from __future__ import annotations

import warnings

import numpy as np

from ..counting.corpus import WordCounts
from ..counting.vocab import Vocab
from ..errors import HSW2VError, param
from ..model.model import Model
from ..training.kinds import model_kind
from ..trees.grow import grow_tree
from ..trees.registry import tree_builders
from .common import initial_weights

GROWN = ("min_count", "max_vocab")
"""Settings a run that grows a model may change beside those of any continued run."""

def check_growable(model: Model) -> None:
    """Refuse, in one line, a model whose tree or kind cannot take new words."""
    if model.tree.max_codes > 1:
        raise HSW2VError(f"{param('grow')}: the model's tree gives words several codes "
                         f"({model.tree.kind}); a new word cannot take one of an old word's")
    kind = model_kind(model.arch)
    one, two = (kind.matrices(n, model.dim, model.settings) for n in (2, 3))
    if one != two:
        raise HSW2VError(f"{param('grow')}: {model.arch}'s matrices grow with the vocabulary")


def covered_words(model: Model) -> list[str] | None:
    """The words a WordNet tree placed by WordNet (its ``covered_words``): all the words
    it was built over, or those under its root's first side, the other holding the
    words WordNet lacks; words grown since are not. None where that count does not
    match the tree's record (a tree not built so)."""
    tree, record = model.tree, model.tree.details.get("covered_words")
    grown = {w for growth in model.history for w in growth["words"]}
    built = [w for w in model.vocab.words if w not in grown]
    if record == len(built):
        return built
    side = int(tree.children[tree.root, 0])
    stack, leaves = [side], []
    while stack:
        node = stack.pop()
        if node < tree.n_leaves:
            leaves.append(int(tree.leaf_words[node]))
        else:
            stack.extend(tree.children[node - tree.n_leaves].tolist())
    words = [model.vocab.words[w] for w in leaves if model.vocab.words[w] not in grown]
    return words if len(words) == record else None


def growth_seed(seed: int, growths: int) -> int:
    """The seed of the new words' starting vectors in a model's growth after
    ``growths`` earlier ones: a function of both, so that the k-th new word of one
    growth never starts where the k-th of another did."""
    if growths == 0:
        return seed  # (a first growth, as before)
    state = np.random.SeedSequence([seed, growths]).generate_state(1, dtype=np.uint64)[0]
    return int(state)


def grown_model(model: Model, counts: WordCounts, min_count: int, max_vocab: int | None,
                seed: int) -> Model:
    """``model`` with the words of the text counted in ``counts`` that reach
    ``min_count`` there (old words are all kept; with ``max_vocab``, at most that
    many words in all, the most frequent new ones first), untrained on that text."""
    check_growable(model)
    builder = tree_builders.get(model.tree.builder)
    if builder is not None and builder.takes_model:  # (it places words by vector or meaning)
        warnings.warn(f"new words join the {model.tree.builder} tree by their counts: before "
                      "training they have no vectors to place them by", stacklevel=2)
    vocab = model.vocab
    text = {counts.word(i): int(c) for i, c in enumerate(counts.counts.tolist())}
    seen = np.array([text.get(w, 0) for w in vocab.words], dtype=np.int64)
    first = counts.first.tolist()  # (ties: the first seen first)
    new = [(-c, first[i], w) for i, (w, c) in enumerate(text.items())
           if c >= min_count and w not in vocab.index]
    room = len(new) if max_vocab is None else max(0, max_vocab - len(vocab))
    if new and not room:
        warnings.warn(f"grow: no word was added: the vocabulary's limit, max_vocab {max_vocab}, "
                      f"leaves no room for the {len(new)} new words that reach min_count "
                      f"{min_count} (give a larger max_vocab)", stacklevel=2)
    new = sorted(new)[:room]
    merged = vocab.counts + seen
    if vocab.markers:  # the new text's words outside the grown vocabulary are <unk>
        inside = int(seen.sum() - seen[vocab.unknown_id] - seen[vocab.end_id])
        merged[vocab.unknown_id] = vocab.counts[vocab.unknown_id] + max(
            0, counts.tokens - inside - sum(-c for c, _, _ in new))
        merged[vocab.end_id] = vocab.counts[vocab.end_id] + counts.lines
    words = vocab.words + [w for _, _, w in new]
    all_counts = np.concatenate([merged, np.array([-c for c, _, _ in new], dtype=np.int64)])
    order = np.lexsort((np.arange(len(words)), -all_counts))  # count order, old words first
    ids = np.empty(len(words), dtype=np.int64)
    ids[order] = np.arange(len(words))
    grown_vocab = Vocab([words[i] for i in order], all_counts[order], markers=vocab.markers)
    tree = grow_tree(model.tree, ids[:len(vocab)], ids[len(vocab):], grown_vocab.counts).tree
    ngrams = model.ngram_vectors
    inputs = np.empty((len(words) + (0 if ngrams is None else len(ngrams)), model.dim),
                      dtype=np.float32)
    vectors = inputs[:len(words)]
    vectors[ids[:len(vocab)]] = model.vectors
    vectors[ids[len(vocab):]] = initial_weights(len(new), 0, model.dim,
                                                growth_seed(seed, len(model.history)))[0]
    if ngrams is not None:  # a new word starts from its n-grams' vector, as if unseen
        inputs[len(words):] = ngrams
        for k, (_, _, word) in enumerate(new):
            start = model.unseen_vector(word)
            if start is not None:
                vectors[ids[len(vocab) + k]] = start
    node_vectors = np.concatenate([model.node_vectors, np.zeros(
        (len(new), model.node_vectors.shape[1]), dtype=np.float32)])
    history = [*model.history, {"from_words": len(vocab), "words": [w for _, _, w in new]}]
    if "covered_tokens" in tree.details:  # (a WordNet tree: its covered words counted anew)
        covered = covered_words(model)
        if covered is not None:
            tree.details["covered_tokens"] = int(sum(
                int(grown_vocab.counts[grown_vocab.index[w]]) for w in covered))
    return Model(grown_vocab, tree, vectors, node_vectors, model.settings,
                 extra={k: m.copy() for k, m in model.extra.items()}, history=history,
                 ngram_vectors=None if ngrams is None else inputs[len(words):])
