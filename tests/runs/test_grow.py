"""hsw2v.runs.grow: a model grown by a new text's words keeps what it learned, against numpy."""
from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest

import hsw2v
from hsw2v.counting.corpus import count_words
from hsw2v.counting.vocab import Vocab
from hsw2v.errors import HSW2VError
from hsw2v.runs.common import fresh_model
from hsw2v.runs.grow import growth_seed, grown_model
from hsw2v.settings import TrainSettings
from hsw2v.trees.semantic import semantic_tree
from hsw2v.trees.tree import huffman

from tests.trees.test_grow import halves  # noqa: F401  (the module's two texts)


def _probabilities(model, context: list[str]) -> np.ndarray:
    """P(w | context) of every word of a CBOW model, in numpy: the context vectors'
    mean, then each word's path product of σ(±h·u)."""
    h = model.vectors[[model.vocab.index[w] for w in context]].mean(axis=0).astype(np.float64)
    tree, u = model.tree, model.node_vectors.astype(np.float64)
    out = np.empty(len(model.vocab))
    for w in range(len(model.vocab)):
        nodes, codes = tree.path(w)
        x = u[nodes, :model.dim] @ h + (u[nodes, model.dim] if u.shape[1] > model.dim else 0)
        out[w] = np.prod(1 / (1 + np.exp(np.where(codes == 0, -x, x))))
    return out


@pytest.mark.parametrize(("tree", "node_bias"), [("huffman", False), ("huffman", True),
                                                  ("semantic", False)])
@pytest.mark.newest_only
def test_growing_keeps_what_was_learned(halves, tree, node_bias):
    """Before training on B: every old word's P(w | context of old words) is the old
    model's, halved once for each new word that split its leaf; the old words'
    ranking by probability (each split one's doubled back) is the same; new rows
    start as word2vec.c's, new inner nodes at zero. On Huffman's tree and on a tree
    learned in the run (CBOW's default)."""
    old = hsw2v.train(str(halves / "a.txt"), dim=16, epochs=2, threads=1, min_count=3,
                      node_bias=node_bias, tree=tree, progress=False)
    grown = grown_model(old, count_words(str(halves / "b.txt")), 3, None, 5)
    added = grown.history[-1]["words"]
    assert len(added) > 100 and not set(added) & set(old.vocab.words)
    assert grown.history[-1]["from_words"] == len(old.vocab)
    assert np.all(np.diff(grown.vocab.counts) <= 0)
    ids = np.array([grown.vocab.index[w] for w in old.vocab.words])
    assert np.array_equal(grown.vectors[ids], old.vectors)
    fresh = grown.vectors[[grown.vocab.index[w] for w in added]]
    assert np.all(np.abs(fresh) <= 0.5 / 12) and fresh.std() > 0.1 / 12
    assert np.array_equal(grown.node_vectors[:len(old.node_vectors)], old.node_vectors)
    assert not grown.node_vectors[len(old.node_vectors):].any()
    split = np.array([len(grown.tree.path(i)[0]) - len(old.tree.path(w)[0])
                      for w, i in enumerate(ids)])
    assert split.min() >= 0 and split.sum() > 0
    if tree == "huffman":  # (its rare leaves lie deep: each is split at most once here)
        assert set(split.tolist()) <= {0, 1}
    rng = np.random.default_rng(0)
    for _ in range(4):
        context = list(rng.choice(old.vocab.words[:300], 6, replace=False))
        before, after = _probabilities(old, context), _probabilities(grown, context)[ids]
        np.testing.assert_allclose(after, before * 0.5 ** split, rtol=1e-6)
        top = np.argsort(-before, kind="stable")[:20]
        assert np.array_equal(np.argsort(-(after * 2.0 ** split), kind="stable")[:20], top)


def test_max_vocab_and_min_count_bound_the_growth(halves):
    old = hsw2v.train(str(halves / "a.txt"), dim=8, epochs=1, threads=1, min_count=3,
                      progress=False)
    counts = count_words(str(halves / "b.txt"))
    text = counts.as_dict()
    grown = grown_model(old, counts, 4, None, 1)
    want = {w for w, c in text.items() if c >= 4 and w not in old.vocab.index}
    assert set(grown.history[-1]["words"]) == want
    capped = grown_model(old, counts, 4, len(old.vocab) + 10, 1)
    assert len(capped.vocab) == len(old.vocab) + 10
    most = sorted(want, key=lambda w: -text[w])
    assert min(text[w] for w in capped.history[-1]["words"]) >= text[most[9]]
    assert len(grown_model(old, counts, 4, 5, 1).vocab) == len(old.vocab)  # old words stay
    trained = hsw2v.train(str(halves / "b.txt"), init_model=old, grow=True, min_count=4,
                          epochs=1, threads=1, progress=False)  # the Python API
    assert set(trained.history[-1]["words"]) == want and len(trained.epoch_loss) == 1


SECOND_GROWTH = '''
import sys
import numpy as np
import hsw2v
from hsw2v.counting.corpus import count_words
from hsw2v.runs.grow import grown_model
a, b, c = sys.argv[1:4]
base = hsw2v.train(a, dim=8, epochs=1, threads=1, min_count=3, progress=False)
once = grown_model(base, count_words(b), 3, None, seed=1)
twice = grown_model(once, count_words(c), 3, None, seed=1)
first, second = once.history[-1]["words"], twice.history[-1]["words"]
pairs = list(zip(first, second))
same = sum(bool(np.array_equal(once[x], twice[y])) for x, y in pairs)
print(len(pairs), same, len(set(map(tuple, twice.vectors.tolist()))) == len(twice.vocab))
'''


def test_each_growth_draws_new_starting_vectors(tmp_path, halves):
    """Hostile round five, item 4, in a real process: two growths with one seed; the
    k-th new word of the second does not start where the k-th of the first did, and
    no two words of the twice-grown model share a starting row."""
    import subprocess
    import sys

    words = (halves / "b.txt").read_text().split()
    (tmp_path / "b1.txt").write_text(" ".join(words[:50_000]) + "\n")
    (tmp_path / "b2.txt").write_text(" ".join(words[50_000:]) + "\n")
    done = subprocess.run([sys.executable, "-c", SECOND_GROWTH, str(halves / "a.txt"),
                           str(tmp_path / "b1.txt"), str(tmp_path / "b2.txt")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    pairs, same, distinct = done.stdout.split()
    assert int(pairs) > 50 and same == "0" and distinct == "True"


def _lbl_model(words: list[str], counts: list[int]):
    """An untrained LBL model (a vocabulary with <unk> and </s>) on Huffman's tree."""
    vocab = Vocab(words, counts).with_markers(7, 12)[0]
    s = TrainSettings(arch="lbl", dim=4, tree="huffman", threads=1).resolved()
    tree = huffman(vocab.counts)
    tree.builder = "huffman"
    return fresh_model(vocab, tree, s)


@pytest.mark.parametrize("room", [None, 2])
def test_the_grown_vocabulary_counts_the_new_text_in_count_order(tmp_path, room):
    """With a language model's markers: an old word's count is its old one plus the
    new text's, a new word's its count there (those reaching min_count, with
    ``max_vocab`` only the most frequent, ties by first occurrence); <unk> gains the
    text's tokens outside the grown vocabulary and </s> its lines; the words stand in
    falling count order, ties keeping old words first. Old rows and the kind's
    matrices are kept (copied), new rows start in ±0.5/D. Reference: a Counter."""
    rng = np.random.default_rng(3)
    old = ["the", "of", "and", "to", "in"]
    model = _lbl_model(old, [50, 40, 30, 20, 10])
    pool = old + [f"x{i}" for i in range(12)]
    weights = rng.uniform(0.2, 3.0, len(pool))
    lines = [" ".join(rng.choice(pool, int(rng.integers(1, 15)), p=weights / weights.sum()))
             for _ in range(40)]
    path = tmp_path / "new.txt"
    path.write_text("\n".join(lines) + "\n")
    text = Counter(w for line in lines for w in line.split())
    first = {}
    for w in (w for line in lines for w in line.split()):
        first.setdefault(w, len(first))
    new = sorted((w for w in text if w not in old and text[w] >= 3), key=lambda w: (-text[w], first[w]))
    max_vocab = None if room is None else len(model.vocab) + room
    new = new if room is None else new[:room]
    assert len(new) >= 3 or room is not None
    vocab = model.vocab
    counts = {w: int(c) + text.get(w, 0) for w, c in zip(vocab.words, vocab.counts.tolist())}
    counts["<unk>"] += sum(c for w, c in text.items() if w not in old and w not in new)
    counts["</s>"] += len(lines)
    counts.update({w: text[w] for w in new})
    order = sorted(vocab.words + new, key=lambda w: -counts[w])  # (stable: old words first)
    grown = grown_model(model, count_words(str(path)), 3, max_vocab, 5)
    assert grown.vocab.words == order and grown.vocab.markers
    assert grown.vocab.counts.tolist() == [counts[w] for w in order]
    assert grown.history[-1] == {"from_words": len(vocab), "words": new}
    for w in vocab.words:
        assert np.array_equal(grown[w], model[w])
    fresh = grown.vectors[[grown.vocab.index[w] for w in new]]
    assert np.all(np.abs(fresh) <= 0.5 / 4) and len(np.unique(fresh, axis=0)) == len(new)
    assert grown.extra.keys() == model.extra.keys()
    for name, m in model.extra.items():
        assert np.array_equal(grown.extra[name], m) and not np.shares_memory(grown.extra[name], m)


def test_what_cannot_grow_and_a_growth_without_room(tmp_path):
    """A tree that gives words several codes cannot take a new word (one line); a
    ``max_vocab`` the old words fill adds nothing, says why, and keeps the model's
    words, counted anew (the new words' tokens as <unk>)."""
    (tmp_path / "t.txt").write_text("a n n n m m m\n")
    counts = count_words(str(tmp_path / "t.txt"))
    X = np.random.default_rng(1).normal(size=(40, 4)).astype(np.float32)
    tree = semantic_tree(X, "adaptive", epsilon=0.3, max_codes=3)
    assert tree.max_codes > 1
    s = TrainSettings(arch="skipgram", dim=4, tree="semantic", threads=1).resolved()
    several = fresh_model(Vocab([f"w{i}" for i in range(40)], np.arange(140, 100, -1)), tree, s)
    with pytest.raises(HSW2VError, match=r"^grow: the model's tree gives words several codes "
                                         r"\(semantic-adaptive-0.3\); a new word cannot take one "
                                         r"of an old word's$"):
        grown_model(several, counts, 3, None, 1)
    model = _lbl_model(["a", "b", "c"], [9, 8, 7])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grown = grown_model(model, counts, 3, len(model.vocab), 1)
    assert [str(w.message) for w in caught] == [
        f"grow: no word was added: the vocabulary's limit, max_vocab {len(model.vocab)}, leaves "
        "no room for the 2 new words that reach min_count 3 (give a larger max_vocab)"]
    assert sorted(grown.vocab.words) == sorted(model.vocab.words)
    assert grown.history[-1]["words"] == []
    assert grown.vocab.counts[grown.vocab.index["a"]] == 10
    assert grown.vocab.counts[grown.vocab.index["<unk>"]] == 7 + 6
    assert grown.vocab.counts[grown.vocab.index["</s>"]] == 12 + 1


def test_each_growth_has_a_seed_of_its_own():
    """A first growth draws with the run's seed; each later one with a seed of its
    own, the same for the same (seed, growth), never the run's, within uint64."""
    for seed in (0, 1, 2**64 - 1):
        seeds = [growth_seed(seed, k) for k in range(200)]
        assert seeds[0] == seed and seeds == [growth_seed(seed, k) for k in range(200)]
        assert len(set(seeds)) == 200 and all(0 <= x < 2**64 for x in seeds)
