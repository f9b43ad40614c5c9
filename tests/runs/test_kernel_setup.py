"""hsw2v.runs.kernel_setup: the hot inner nodes and the private word rows a run's threads take."""
import numpy as np
import pytest

from hsw2v.counting.vocab import Vocab
from hsw2v.runs.common import fresh_model
from hsw2v.runs.kernel_setup import hot_inner_nodes, private_words, smallest_model, subtree_totals
from hsw2v.settings import TrainSettings
from hsw2v.training.kinds import model_kinds
from hsw2v.trees.semantic import semantic_tree
from hsw2v.trees.tree import huffman, random_tree


def test_hot_nodes_are_the_most_visited():
    """hot_inner_nodes counts each inner node's visits bottom-up; the reference
    adds each word's count to every node on its path (numpy bincount)."""
    from hsw2v.runs.kernel_setup import hot_inner_nodes

    rng = np.random.default_rng(2)
    for tree_of in (huffman, lambda c: random_tree(len(c), 3)):
        counts = np.sort(rng.integers(1, 10_000, size=500))[::-1].astype(np.int64)
        tree = tree_of(counts)
        visits = np.bincount(tree.path_nodes, weights=np.repeat(counts, tree.depths),
                             minlength=len(counts) - 1)
        for k in (1, 17, 499):
            hot, slot = hot_inner_nodes(tree, counts, k)
            want = np.argsort(-visits, kind="stable")[:k]
            assert np.array_equal(np.sort(hot), np.sort(want))
            assert np.all(np.diff(visits[hot]) <= 0)  # the most visited first
            assert np.array_equal(slot[hot], np.arange(k)) and (slot >= 0).sum() == k


def _trees(rng, n):
    """Huffman's, a random and an ADAPTIVE(ε) tree (words with several codes) over n words."""
    counts = np.sort(rng.integers(1, 10_000, size=n))[::-1].astype(np.int64)
    several = semantic_tree(rng.normal(size=(n, 4)).astype(np.float32), "adaptive",
                            epsilon=0.3, max_codes=3)
    assert several.n_leaves > n
    return counts, (huffman(counts), random_tree(n, 5), several)


def test_subtree_totals_sum_the_leaves_below_each_inner_node():
    """``out[a]`` is the sum of the leaf values below inner node a, found here by
    descending the children table from a (recursion), for float values, on trees
    whose leaves are words and on one with extra leaves (further codes)."""
    rng = np.random.default_rng(6)
    _, trees = _trees(rng, 60)
    for tree in trees:
        n = tree.n_leaves
        values = rng.uniform(-1, 5, size=n)

        def below(a):
            return sum(values[c] if c < n else below(c - n) for c in tree.children[a].tolist())

        out = np.full(n - 1, np.nan)
        subtree_totals(tree.children, tree.inner_order, values, out)
        np.testing.assert_allclose(out, [below(a) for a in range(n - 1)], rtol=1e-12)
        assert out[tree.root] == pytest.approx(values.sum())


def test_hot_nodes_of_words_with_several_codes_count_each_code():
    """A word with several codes visits the nodes on each of its codes' paths: the
    reference adds the word's count along every leaf's path (each leaf's word:
    ``leaf_words``). Asking for more nodes than the tree has gives them all."""
    rng = np.random.default_rng(8)
    counts, trees = _trees(rng, 80)
    tree = trees[-1]
    visits = np.zeros(tree.n_leaves - 1)
    for leaf in range(tree.n_leaves):
        nodes = tree.path_nodes[tree.path_offsets[leaf]:tree.path_offsets[leaf + 1]]
        visits[nodes] += counts[tree.leaf_words[leaf]]
    for k in (1, 10, tree.n_leaves - 1, 10_000):
        hot, slot = hot_inner_nodes(tree, counts, k)
        kept = min(k, tree.n_leaves - 1)
        assert len(hot) == kept and len(set(hot.tolist())) == kept
        assert np.array_equal(visits[hot], np.sort(visits)[::-1][:kept])
        assert np.array_equal(slot[hot], np.arange(kept)) and (slot >= 0).sum() == kept


@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_private_word_rows_are_the_kinds_with_several_threads(arch):
    """Each thread copies the kind's ``private_words`` most frequent words' rows
    (fewer where the vocabulary is smaller), and none with one thread."""
    declared = model_kinds[arch].private_words
    for threads in (1, 2, 8):
        s = TrainSettings(arch=arch, dim=4, tree="huffman", threads=threads).resolved()
        words = [f"w{i}" for i in range(100)]
        big = fresh_model(Vocab(words, np.arange(300, 200, -1)), huffman(np.arange(300, 200, -1)),
                          s)
        small = smallest_model(s)
        assert len(small.vectors) == (5 if model_kinds[arch].language_model else 3)
        want = (lambda v: min(declared, v)) if threads > 1 else (lambda v: 0)
        assert private_words(big, s) == want(100)
        assert private_words(small, s) == want(len(small.vectors))
    assert model_kinds["lbl"].private_words > 5  # (so that the small model caps it)
