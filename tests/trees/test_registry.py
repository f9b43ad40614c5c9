"""The tree builders of ``hsw2v/trees/registry.py`` (balanced, random, Fano, classes,
semantic, Huffman below): each a full prefix-free tree, against references; every
kind offered, trained with and recorded by its builder."""
import heapq
import itertools
import math
import os
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

import hsw2v
from hsw2v.cli import cli
from hsw2v.errors import HSW2VError
from hsw2v.trees.registry import tree_builders
from hsw2v.trees.semantic import semantic_below, semantic_tree
from hsw2v.trees.tree import (
    balanced,
    classes,
    fano,
    huffman,
    random_tree,
)

from tests.helpers import REPO, count_tree, count_tree_kinds


def zipf_counts(rng, n):
    c = (1e6 / np.arange(1, n + 1) ** rng.uniform(0.7, 1.4)).astype(np.int64) + rng.integers(1, 5, n)
    return np.sort(c)[::-1]


def all_trees(counts, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(len(counts), 6)).astype(np.float32)
    return [count_tree(k, counts, seed) for k in count_tree_kinds()] + [
        semantic_tree(X, "balanced"), semantic_tree(X, "adaptive")]


def assert_full_binary_prefix_free(tree, n):
    assert tree.children.shape == (n - 1, 2)
    ids = np.sort(tree.children.ravel())
    everything_but_root = np.delete(np.arange(2 * n - 1), n + tree.root)
    assert np.array_equal(ids, everything_but_root)  # each node has one parent
    assert sum(Fraction(1, 2 ** int(d)) for d in tree.depths) == 1
    codes = sorted("".join(map(str, tree.path(w)[1])) for w in range(n))
    assert all(not b.startswith(a) for a, b in itertools.pairwise(codes))


@pytest.mark.parametrize("n", [2, 3, 5, 64, 100, 1000])
def test_every_kind_is_a_full_prefix_free_tree(n):
    counts = zipf_counts(np.random.default_rng(n), n)
    for tree in all_trees(counts):
        assert_full_binary_prefix_free(tree, n)


@pytest.mark.parametrize("n", [2, 3, 7, 8, 9, 1000, 1025])
def test_balanced_and_random_depth(n):
    assert balanced(n).depths.max() == math.ceil(math.log2(n))
    assert random_tree(n, 3).depths.max() == math.ceil(math.log2(n))
    assert set(balanced(n).depths.tolist()) <= {math.ceil(math.log2(n)), math.floor(math.log2(n))}


def fano_depths_reference(counts) -> list[int]:
    """Shannon–Fano code lengths by plain recursion: cut the frequency-sorted list
    where the two halves' totals differ least (the first such cut on a tie)."""
    depths = [0] * len(counts)

    def split(lo, hi, depth):
        if hi - lo == 1:
            depths[lo] = depth
            return
        total = sum(counts[lo:hi])
        gaps = [abs(2 * sum(counts[lo:k]) - total) for k in range(lo + 1, hi)]
        k = lo + 1 + gaps.index(min(gaps))
        split(lo, k, depth + 1)
        split(k, hi, depth + 1)

    split(0, len(counts), 0)
    return depths


@pytest.mark.parametrize("seed", range(15))
def test_fano_matches_reference_and_huffman_is_shortest(seed):
    """Fano's depths equal a plain recursive Shannon–Fano's, word by word; its mean
    length is below entropy + 1 bit; no tree beats Huffman's mean length."""
    rng = np.random.default_rng(seed)
    counts = zipf_counts(rng, int(rng.integers(2, 300)))
    assert fano(counts).depths.tolist() == fano_depths_reference(counts.tolist())
    p = counts / counts.sum()
    entropy = -(p * np.log2(p)).sum()
    lengths = {t.kind: float((t.depths * p).sum()) for t in all_trees(counts, seed)}
    assert lengths["fano"] < entropy + 1
    assert all(v >= lengths["huffman"] - 1e-9 for v in lengths.values())


def test_train_with_each_tree_and_predict(tmp_path):
    corpus = str(REPO / "data" / "enwiki-1m.txt.gz")
    base = hsw2v.train(corpus, max_vocab=800, dim=8, epochs=1, progress=False)
    base.save(str(tmp_path / "base.npz"))
    for kind in set(count_tree_kinds()) - {"huffman"}:
        m = hsw2v.train(corpus, max_vocab=800, dim=8, epochs=1, progress=False, tree=kind)
        assert m.tree.kind == kind
        logp = m.all_log_probs(["the", "of"])
        assert np.exp(logp).sum() == pytest.approx(1.0, abs=1e-4)
        assert m.predict(["the", "of"], 1)[0][0] == m.words[int(np.argmax(logp))]
    r = CliRunner().invoke(cli, ["train", corpus, "--tree-from", str(tmp_path / "base.npz"),
                                 "--split", "adaptive", "--save-model", str(tmp_path / "s.npz"),
                                 "--dim", "8", "--epochs", "1", "--quiet"])
    assert r.exit_code == 0, r.output
    m = hsw2v.load_model(str(tmp_path / "s.npz"))
    assert m.tree.kind == "semantic-adaptive" and m.words == base.words
    assert m.tree.builder == "semantic" and m.settings.tree == "semantic"
    assert_full_binary_prefix_free(m.tree, len(m.words))
    r = CliRunner().invoke(cli, ["tree", str(tmp_path / "s.npz"), "--json"])
    info = __import__("json").loads(r.stdout)
    assert info["depth"] == int(m.tree.depths.max())
    w = m.vocab.counts / m.vocab.counts.sum()
    assert info["weighted_mean_path_length"] == pytest.approx(float((m.tree.depths * w).sum()))
    r = CliRunner().invoke(cli, ["score", "--model", str(tmp_path / "s.npz"), corpus])
    assert r.exit_code == 0 and "perplexity" in r.stdout


def test_a_tree_given_is_recorded_by_its_builder_across_files(tmp_path):
    """A ready Tree records the registry's builder that made it (not parsed from its
    kind's words); saved and loaded it keeps it, and a file written before the
    builder had its own field reads it from the kind's first word."""
    import json
    import zipfile

    corpus = str(REPO / "data" / "enwiki-1m.txt.gz")
    base = hsw2v.train(corpus, max_vocab=300, dim=8, epochs=1, progress=False)
    X = np.random.default_rng(0).normal(size=(len(base.words), 8))
    tree = semantic_below(X, base.vocab.counts, 3, "balanced")
    assert tree.kind == "semantic-balanced-below-3" and tree.builder == "semantic"
    m = hsw2v.train(corpus, vocab=base.vocab, tree=tree, dim=8, epochs=1, progress=False)
    assert m.settings.tree == "semantic"
    m.save(str(tmp_path / "m.npz"))
    with zipfile.ZipFile(tmp_path / "m.npz") as z:
        names = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(np.load(tmp_path / "m.npz")["meta"].tobytes())
    assert meta["tree_builder"] == "semantic"
    assert hsw2v.load_model(str(tmp_path / "m.npz")).tree.builder == "semantic"
    del meta["tree_builder"]  # as written before the field
    buf = __import__("io").BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    names["meta.npy"] = buf.getvalue()
    with zipfile.ZipFile(tmp_path / "old.npz", "w") as z:
        for n, data in names.items():
            z.writestr(n, data)
    old = hsw2v.load_model(str(tmp_path / "old.npz"))
    assert old.tree.builder == "semantic" and old.tree.kind == tree.kind


def test_bad_tree_options(tmp_path):
    with pytest.raises(HSW2VError, match="^tree must be"):
        hsw2v.train(str(REPO / "data" / "enwiki-1m.txt.gz"), tree="oak", progress=False)
    r = CliRunner().invoke(cli, ["train", "x.txt", "-o", str(tmp_path / "v.txt"), "--tree", "fano",
                                 "--tree-from", "m.npz"])
    assert r.exit_code != 0 and "--tree-from goes with --tree semantic" in r.stderr
    with pytest.raises(HSW2VError, match="^tree_from goes with tree='semantic' or tree='wordnet'$"):
        hsw2v.train(str(REPO / "data" / "enwiki-1m.txt.gz"), tree="fano", progress=False,
                    tree_from=hsw2v.Model.__new__(hsw2v.Model))  # (refused before it is read)
    with pytest.raises(HSW2VError):
        huffman(np.array([3]))
    with pytest.raises(HSW2VError):
        fano(np.array([3]))


def test_every_tree_kind_is_offered_and_named():
    """The registry is what `train --tree` offers (with semantic), and each kind
    builds a tree that says what it is."""
    tree_option = next(p for p in cli.commands["train"].params if p.name == "tree")
    assert list(tree_option.type.choices) == list(tree_builders)
    counts = zipf_counts(np.random.default_rng(3), 50)
    for kind in count_tree_kinds():
        tree = count_tree(kind, counts, 1)
        assert tree.kind == kind
        assert_full_binary_prefix_free(tree, 50)


def huffman_cost(weights) -> int:
    """The least sum of weight × code length over prefix codes (Huffman, with heapq)."""
    heap = [int(w) for w in weights]
    heapq.heapify(heap)
    cost = 0
    while len(heap) > 1:
        merged = heapq.heappop(heap) + heapq.heappop(heap)
        cost += merged
        heapq.heappush(heap, merged)
    return cost


@pytest.mark.parametrize(("n", "n_classes"), [(2, None), (50, None), (1000, None), (1000, 7),
                                              (300, 300)])
def test_class_tree_is_huffman_over_frequency_classes(n, n_classes):
    """Classes cut where the running token total crosses each C-th of all tokens
    (found by a plain loop); each class is a subtree holding exactly its words,
    Huffman-optimal inside, and the classes' totals are Huffman-optimal above."""
    counts = zipf_counts(np.random.default_rng(n), n)
    c = n_classes or max(2, round(math.sqrt(n)))
    groups, running, label = [], 0, None
    for w, count in enumerate(counts.tolist()):
        if running * c // int(counts.sum()) != label:
            label = running * c // int(counts.sum())
            groups.append([])
        groups[-1].append(w)
        running += count
    tree = classes(counts, n_classes)
    assert tree.kind == "classes"
    assert_full_binary_prefix_free(tree, n)
    paths = [tuple(tree.path(w)[0].tolist()) for w in range(n)]
    tops = []
    for g in groups:
        if len(g) == 1:
            tops.append((int(counts[g[0]]), len(paths[g[0]])))
            continue
        shared = len(os.path.commonprefix([paths[w] for w in g]))
        top = paths[g[0]][shared - 1]  # the class's own subtree root
        assert [w for w in range(n) if top in paths[w]] == g
        inside = sum(int(counts[w]) * (len(paths[w]) - shared + 1) for w in g)
        assert inside == huffman_cost(counts[g])
        tops.append((int(counts[g].sum()), shared - 1))
    assert sum(total * depth for total, depth in tops) == huffman_cost([t for t, _ in tops])


def test_train_semantic_below_huffman_levels(tmp_path):
    """--huffman-levels trains, is saved with the model, and keeps Huffman's top."""
    corpus = str(REPO / "data" / "enwiki-1m.txt.gz")
    m = hsw2v.train(corpus, max_vocab=800, dim=8, epochs=1, progress=False, tree="semantic",
                    huffman_levels=4)
    assert m.tree.kind == "semantic-adaptive-below-4"  # (CBOW's split on a semantic tree)
    top = huffman(m.vocab.counts)
    assert all(m.tree.path(w)[1][:4].tolist() == top.path(w)[1][:4].tolist() for w in range(800))
    m.save(str(tmp_path / "m.npz"))
    again = hsw2v.load_model(str(tmp_path / "m.npz"))
    assert again.settings.huffman_levels == 4 and again.tree.kind == m.tree.kind
    with pytest.raises(HSW2VError, match="^huffman_levels must lie in"):
        hsw2v.train(corpus, tree="semantic", huffman_levels=-1, progress=False)
    with pytest.raises(HSW2VError, match="^huffman_levels goes with tree='semantic'$"):
        hsw2v.train(corpus, tree="huffman", huffman_levels=4, progress=False)

