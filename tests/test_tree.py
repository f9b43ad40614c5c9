import heapq
import itertools
from fractions import Fraction

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.tree import Tree, huffman


def random_counts(rng, n):
    kind = rng.integers(3)
    if kind == 0:
        c = rng.integers(1, 1000, size=n)
    elif kind == 1:  # Zipf-like, many ties at the tail
        c = (10_000 / np.arange(1, n + 1) ** rng.uniform(0.8, 1.3)).astype(np.int64) + 1
    else:
        c = rng.integers(1, 4, size=n)  # heavy ties
    return np.sort(c)[::-1].astype(np.int64)


def codes_of(tree):
    return ["".join(map(str, tree.path(w)[1])) for w in range(len(tree))]


def heap_huffman_cost(counts):
    """Optimal total weighted code length by the textbook heap algorithm."""
    heap = [int(c) for c in counts]
    heapq.heapify(heap)
    cost = 0
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        cost += a + b
        heapq.heappush(heap, a + b)
    return cost


@pytest.mark.parametrize("seed", range(20))
def test_huffman_is_optimal_complete_and_prefix_free(seed):
    rng = np.random.default_rng(seed)
    counts = random_counts(rng, int(rng.integers(2, 400)))
    tree = huffman(counts)
    depths = tree.depths
    assert sum(Fraction(1, 2 ** int(d)) for d in depths) == 1  # Kraft sum
    codes = sorted(codes_of(tree))
    assert len(set(codes)) == len(codes)
    for a, b in itertools.pairwise(codes):
        assert not b.startswith(a)
    assert int((depths * counts).sum()) == heap_huffman_cost(counts)


def test_four_word_example():
    # cat 10, dog 6, frog 3, mouse 2: frog+mouse merge first, then that with dog,
    # then cat joins at the root. The smaller of each pair takes code 0.
    tree = huffman([10, 6, 3, 2])
    cat, dog, frog, mouse = range(4)
    assert tree.root == 2
    assert tree.path(cat)[1].tolist() == [0]
    assert tree.path(dog)[1].tolist() == [1, 1]
    assert tree.path(frog)[1].tolist() == [1, 0, 1]
    assert tree.path(mouse)[1].tolist() == [1, 0, 0]
    assert tree.path(mouse)[0].tolist() == [2, 1, 0]  # points, root first
    assert tree.path(dog)[0].tolist() == [2, 1]


def test_no_depth_limit():
    fib = [1, 1]
    while len(fib) < 60:
        fib.append(fib[-1] + fib[-2])
    tree = huffman(np.array(fib[::-1], dtype=np.int64))
    assert tree.depths.max() == 59


def test_rejects_bad_input():
    with pytest.raises(HSW2VError):
        huffman([5])
    with pytest.raises(HSW2VError):
        huffman([1, 5])
    with pytest.raises(HSW2VError):  # node 2 has two parents, node 3 none
        Tree(np.array([[0, 1], [2, 2]]))


@pytest.mark.parametrize("seed", range(5))
def test_paths_are_the_walks_up_from_each_leaf(seed):
    """Each word's root-first path (nodes and codes) equals a walk up the children
    table from its leaf, written here without the package's path code."""
    rng = np.random.default_rng(seed)
    counts = np.sort(rng.integers(1, 1000, size=int(rng.integers(2, 300))))[::-1]
    t = huffman(counts)
    n = len(counts)
    parent = {int(c): (a, side) for a, pair in enumerate(t.children.tolist())
              for side, c in enumerate(pair)}
    for w in range(n):
        nodes, codes, node = [], [], w
        while node in parent:
            a, side = parent[node]
            nodes.append(a)
            codes.append(side)
            node = n + a
        got_nodes, got_codes = t.path(w)
        assert got_nodes.tolist() == nodes[::-1] and got_codes.tolist() == codes[::-1]
    assert t.root == node - n
