"""hsw2v.trees.semantic: semantic trees and the context means they split, against references."""
import numpy as np
import pytest

import hsw2v
from hsw2v.counting.corpus import TokenSpool, count_words
from hsw2v.errors import HSW2VError
from hsw2v.trees.semantic import (
    context_means,
    falling_order,
    gmm_splitter,
    semantic_below,
    semantic_tree,
)
from hsw2v.trees.tree import from_splits, huffman

from tests.trees.test_registry import assert_full_binary_prefix_free, zipf_counts


@pytest.mark.parametrize("split", ["balanced", "adaptive"])
def test_semantic_root_separates_planted_clusters(split):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(2, 20)) * 3
    labels = rng.integers(0, 2, size=300)
    X = (centres[labels] + rng.normal(size=(300, 20))).astype(np.float32)
    if split == "balanced":  # equal halves, so the clusters must be equal too
        labels = np.arange(300) % 2
        X = (centres[labels] + rng.normal(size=(300, 20))).astype(np.float32)
    tree = semantic_tree(X, split)
    left = np.array([tree.path(w)[1][0] for w in range(300)])
    agree = (left == labels).mean()
    assert max(agree, 1 - agree) == 1.0


@pytest.mark.parametrize("split", ["balanced", "adaptive"])
def test_semantic_tree_is_the_same_whatever_the_threads(split):
    """Subtrees built apart by several threads give every word the code that one
    top-down pass of the same split rule gives it (the generic builder,
    ``from_splits``), whatever the number of threads."""
    X = np.random.default_rng(4).normal(size=(3000, 12)).astype(np.float32)
    one = from_splits(np.arange(3000), gmm_splitter(X, split), "one")
    for threads in (1, 2, 5):
        tree = semantic_tree(X, split, threads=threads)
        assert len(tree) == 3000 and tree.root == 0
        for w in range(3000):
            np.testing.assert_array_equal(tree.path(w)[1], one.path(w)[1])


def test_semantic_tree_for_100k_words():
    X = np.random.default_rng(1).normal(size=(100_000, 16)).astype(np.float32)
    tree = semantic_tree(X, "balanced")
    assert tree.depths.max() == 17 and len(tree) == 100_000


def test_context_means_fall_back_to_input_vectors(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b a b a b\nlonely\n" * 5)
    m = hsw2v.train(str(path), min_count=1, dim=8, epochs=1, progress=False, window=1,
                    sample=0)
    X = context_means(m, str(path))
    lonely = m.vocab.index["lonely"]
    assert np.array_equal(X[lonely], m.vectors[lonely])  # never has a context
    a, b = m.vocab.index["a"], m.vocab.index["b"]
    np.testing.assert_allclose(X[a], m.vectors[b], rtol=1e-6)  # a's context is always b


@pytest.mark.newest_only
@pytest.mark.parametrize("arch", ["cbow", "skipgram"])
def test_context_means_are_those_of_a_brute_force_walk(tmp_path, arch):
    """Each word's mean context vector, against numpy over every position of every
    line with the full window: CBOW's h is the mean of the context's rows, skip-gram
    counts each context row; float32 sums, summed by one thread or two."""
    rng = np.random.default_rng(4)
    lines = [" ".join(f"w{int(x)}" for x in rng.zipf(1.3, rng.integers(1, 30)) % 60)
             for _ in range(400)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n")
    m = hsw2v.train(str(path), arch=arch, min_count=2, dim=8, epochs=1, window=3, tree="huffman",
                    threads=1, progress=False)
    sums = np.zeros((len(m.vocab), m.dim))
    n = np.zeros(len(m.vocab))
    for line in lines:
        ids = [m.vocab.index[w] for w in line.split() if w in m.vocab.index]
        for i, target in enumerate(ids):
            ctx = [ids[j] for j in range(max(0, i - 3), min(len(ids), i + 4)) if j != i]
            if not ctx:
                continue
            rows = m.vectors[ctx].astype(np.float64)
            if arch == "cbow":
                sums[target] += rows.mean(axis=0)
                n[target] += 1
            else:
                sums[target] += rows.sum(axis=0)
                n[target] += len(ctx)
    want = np.where(n[:, None] > 0, sums / np.maximum(n, 1)[:, None], m.vectors)
    for threads in (1, 2):
        got = context_means(m, str(path), threads)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)  # (float32 sums)
    with TokenSpool() as spool:  # the word ids of a counting pass's spool, not the text
        counts = count_words(str(path), spool=spool, block_bytes=300)
        type_ids = counts.spool_ids(counts.type_ids(min_count=2))
        assert counts.to_vocab(min_count=2).words == m.vocab.words
        got = context_means(m, str(tmp_path / "absent.txt"), 2,
                            lambda: spool.blocks(type_ids))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("levels", [1, 3, 6, 40])
def test_semantic_below_keeps_huffman_above(levels):
    """Down to depth ``levels`` every path is Huffman's; the words under each
    Huffman node at that depth stay under it, arranged as the semantic tree of
    their own rows (the same codes as a semantic tree over them alone)."""
    rng = np.random.default_rng(levels)
    counts = zipf_counts(rng, 500)
    X = rng.normal(size=(500, 6)).astype(np.float32)
    top, tree = huffman(counts), semantic_below(X, counts, levels)
    assert tree.kind == f"semantic-balanced-below-{levels}"
    assert_full_binary_prefix_free(tree, 500)
    groups: dict[int, list[int]] = {}
    for w in range(500):
        (hn, hc), (tn, tc) = top.path(w), tree.path(w)
        k = min(levels, len(hn))
        assert tn[:k].tolist() == hn[:k].tolist() and tc[:k].tolist() == hc[:k].tolist()
        if len(hn) <= levels:
            assert tc.tolist() == hc.tolist()
        else:
            groups.setdefault(int(hn[levels]), []).append(w)
    for words in groups.values():
        alone = semantic_tree(X[words], "balanced")
        for i, w in enumerate(words):
            assert tree.path(w)[1][levels:].tolist() == alone.path(i)[1].tolist()


def test_epsilon_zero_is_the_adaptive_tree_and_more_epsilon_more_codes():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 12)).astype(np.float32)
    plain = semantic_tree(X, "adaptive")
    zero = semantic_tree(X, "adaptive", epsilon=0.0, max_codes=4)
    assert np.array_equal(plain.children, zero.children) and zero.n_leaves == 300
    means = [semantic_tree(X, "adaptive", epsilon=e, max_codes=4).codes_per_word.mean()
             for e in (0.05, 0.2, 0.4)]
    assert 1 < means[0] < means[1] < means[2] <= 4


def test_falling_order_is_a_stable_sort_from_the_largest_key_down():
    """The merge sort of plain loops orders as numpy's stable argsort of the negated
    keys: the largest first, ties in index order (many ties here), for every length
    from 0 to 70 (powers of two and the lengths between)."""
    rng = np.random.default_rng(9)
    for n in range(71):
        for keys in (rng.integers(0, 4, n).astype(np.float64), rng.normal(size=n),
                     np.zeros(n), np.arange(n, dtype=np.float64)):
            np.testing.assert_array_equal(falling_order(keys), np.argsort(-keys, kind="stable"))


def test_a_semantic_tree_needs_two_words_and_a_known_split():
    X = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
    with pytest.raises(HSW2VError, match="^need at least 2 words to build a tree$"):
        semantic_tree(X[:1])
    with pytest.raises(HSW2VError, match="^split must be one of balanced, adaptive, got 'thirds'$"):
        semantic_tree(X, "thirds")
    with pytest.raises(HSW2VError, match="^split must be one of balanced, adaptive, got 'thirds'$"):
        gmm_splitter(X, "thirds")
    two = semantic_tree(X[:2])
    assert len(two) == 2 and sorted(two.children[0].tolist()) == [0, 1]
