"""``hsw2v/trees/tree.py``: the Tree (its paths against walks up from each leaf, the
kernels' dtypes, malformed children refused) and Huffman's tree (optimal, prefix-free,
ties broken as word2vec.c breaks them)."""
import heapq
import itertools
from fractions import Fraction

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.trees.tree import Tree, from_splits, huffman, random_tree

from tests.helpers import count_tree


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


@pytest.mark.parametrize(("counts", "message"), [
    ([5], "^need at least 2 distinct words to build a tree$"),
    ([1, 5], "^huffman: counts must be sorted in descending order$"),
    ([5, 1, 3], "^huffman: counts must be sorted in descending order$"),  # only the tail
])
def test_huffman_rejects_bad_counts(counts, message):
    with pytest.raises(HSW2VError, match=message):
        huffman(counts)


# Children tables that are not a full binary tree over V leaves; V = rows + 1,
# leaves 0..V-1, inner node a has id V + a.
BAD_CHILDREN = {
    "one-dimensional": ([0, 1], "^tree: children must have shape"),
    "three children": ([[0, 1, 2]], "^tree: children must have shape"),
    "no rows": (np.zeros((0, 2)), "^tree: children must have shape"),
    "negative id": ([[0, -1], [1, 3]], "^tree: child id out of range"),
    "id just past the last node": ([[0, 1], [2, 5]], "^tree: child id out of range"),
    "leaf with two parents": ([[0, 0], [1, 3]], "^tree: not a full binary tree"),
    "inner node with two parents": ([[0, 1], [3, 3]], "^tree: not a full binary tree"),
    "cycle, a leaf left out": ([[4, 0], [1, 3]], "^tree: not a full binary tree"),
    "detached cycle": ([[0, 8], [7, 3], [6, 4], [1, 2]], "^tree: not every node is reachable"),
}


@pytest.mark.parametrize("case", BAD_CHILDREN)
def test_malformed_children_are_rejected(case):
    children, message = BAD_CHILDREN[case]
    with pytest.raises(HSW2VError, match=message) as e:
        Tree(np.asarray(children), "loaded")
    assert str(e.value) in {
        "tree: children must have shape (V-1, 2) with V ≥ 2",
        "tree: child id out of range",
        "tree: not a full binary tree (a node has two parents or none)",
        "tree: not every node is reachable from the root",
    }


@pytest.mark.parametrize("kind", ["huffman", "balanced", "random", "fano"])
def test_paths_have_the_dtypes_the_kernels_are_compiled_for(kind):
    """Whatever integer type a tree is built from, its arrays are int32 children and
    nodes, uint8 codes and int64 offsets and inner order: the kernels' signatures."""
    t = count_tree(kind, np.array([9, 7, 4, 4, 2, 1], dtype=np.int64), 3)
    copy = Tree(t.children.astype(np.int64), kind)
    for tree in (t, copy):
        assert tree.kind == kind
        assert tree.children.dtype == np.int32 and tree.children.flags.c_contiguous
        assert tree.flat.nodes.dtype == np.int32
        assert tree.flat.codes.dtype == np.uint8
        assert tree.flat.offsets.dtype == np.int64
        assert tree.inner_order.dtype == np.int64
    assert np.array_equal(copy.path_nodes, t.path_nodes)


def huffman_depths_two_queues(counts) -> list[int]:
    """Huffman by two queues (leaves in ascending count; merged nodes in creation
    order), taking the merged node on a tie as word2vec.c does; returns depths."""
    leaves = [(c, [w]) for w, c in enumerate(counts)][::-1]
    merged, depth = [], [0] * len(counts)
    for _ in range(len(counts) - 1):
        pair = []
        for _ in range(2):
            if leaves and (not merged or leaves[0][0] < merged[0][0]):
                pair.append(leaves.pop(0))
            else:
                pair.append(merged.pop(0))
        for w in pair[0][1] + pair[1][1]:
            depth[w] += 1
        merged.append((pair[0][0] + pair[1][0], pair[0][1] + pair[1][1]))
    return depth


@pytest.mark.parametrize("seed", range(10))
def test_huffman_breaks_ties_like_word2vec_c(seed):
    """With many equal counts, every word's depth equals the two-queue reference's:
    on a tie the already merged node is taken first."""
    rng = np.random.default_rng(seed)
    counts = np.sort(rng.integers(1, 5, size=int(rng.integers(3, 200))))[::-1]
    assert huffman(counts).depths.tolist() == huffman_depths_two_queues(counts.tolist())


def test_from_splits_rejects_a_split_that_leaves_a_side_empty():
    for bad in (lambda order, lo, hi: lo, lambda order, lo, hi: hi):
        with pytest.raises(HSW2VError, match="leaves a side empty"):
            from_splits(np.arange(5), bad, "bad")
    with pytest.raises(HSW2VError, match="^need at least 2 distinct words to build a tree$"):
        from_splits(np.arange(1), lambda order, lo, hi: lo + 1, "one")


def test_random_trees_follow_the_seed():
    counts = np.arange(50, 0, -1)
    for kind in ("random",):
        a, b = count_tree(kind, counts, 7), count_tree(kind, counts, 7)
        assert np.array_equal(a.children, b.children)
        assert not np.array_equal(a.children, count_tree(kind, counts, 8).children)
    assert np.array_equal(random_tree(50, 4).children, random_tree(50, 4).children)


def test_unknown_tree_kind_names_the_choices():
    with pytest.raises(HSW2VError, match=r"tree: unknown kind 'oak'; choose from huffman, balanced"):
        count_tree("oak", np.array([3, 2, 1]))


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
