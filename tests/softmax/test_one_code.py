"""hsw2v.softmax.one_code: the SGD step along a one-code target's path, against numpy."""
import numpy as np
import pytest

from hsw2v.softmax.step import step_for
from hsw2v.trees.tree import huffman

from tests.training.test_block import log_prob


def one_code_step(h, word, alpha, syn1, tree, grad_h):
    """One hierarchical-softmax step (:func:`hsw2v.softmax.one_code.one_code_step`,
    its copy for node vectors with a bias column or without, as ``syn1`` has them)
    that trains every inner node in place."""
    step = step_for(False, syn1.shape[1] > len(h))
    return step(h, word, alpha, syn1, np.full(len(tree) - 1, -1, np.int32),
                np.empty((0, len(h)), np.float32), tree.flat, grad_h,
                np.empty(tree.depths.max(), np.float32), len(h))


@pytest.fixture
def case():
    rng = np.random.default_rng(0)
    counts = np.sort(rng.integers(1, 100, size=12))[::-1].astype(np.int64)
    tree = huffman(counts)
    syn1 = rng.normal(0, 0.5, size=(11, 8)).astype(np.float32)
    h = rng.normal(0, 0.5, size=8).astype(np.float32)
    return tree, syn1, h


def test_one_code_step_matches_numpy_gradient(case):
    tree, syn1, h = case
    alpha = np.float32(0.1)
    for word in range(len(tree)):
        u = syn1.copy()
        grad_h = np.zeros_like(h)
        loss = one_code_step(h, word, alpha, u, tree, grad_h)
        assert loss == pytest.approx(-log_prob(h, word, tree, syn1), rel=1e-5)
        # Reference: d log P / d u_n = (1 - code - σ(h·u_n)) h, and d/dh = Σ (…) u_n.
        nodes, codes = tree.path(word)
        x = syn1[nodes].astype(np.float64) @ h
        g = alpha * (1 - codes - 1 / (1 + np.exp(-x)))
        expect_u = syn1.astype(np.float64).copy()
        expect_u[nodes] += g[:, None] * h[None, :]
        expect_h = (g[:, None] * syn1[nodes]).sum(axis=0)
        np.testing.assert_allclose(u, expect_u, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad_h, expect_h, rtol=1e-5, atol=1e-6)
        untouched = np.setdiff1d(np.arange(len(syn1)), nodes)
        assert np.array_equal(u[untouched], syn1[untouched])


def test_one_code_step_gradient_is_ascent_direction(case):
    """Finite differences of log P agree with the analytic gradient step."""
    tree, syn1, h = case
    word, eps = 5, 1e-3
    grad_h = np.zeros_like(h)
    u = syn1.copy()
    one_code_step(h, word, np.float32(1.0), u, tree, grad_h)
    numeric = np.zeros(len(h))
    for d in range(len(h)):
        hp, hm = h.astype(np.float64).copy(), h.astype(np.float64).copy()
        hp[d] += eps
        hm[d] -= eps
        numeric[d] = (log_prob(hp, word, tree, syn1) - log_prob(hm, word, tree, syn1)) / (2 * eps)
    np.testing.assert_allclose(grad_h, numeric, rtol=1e-3, atol=1e-5)


def test_one_code_step_with_node_bias_matches_numpy_and_finite_differences(case):
    """With a bias column, the score is α + h·u; one step moves α by the same g as
    u (∂score/∂α = 1), checked against numpy and against central differences of
    log P in α, u and h."""
    tree, syn1, h = case
    rng = np.random.default_rng(4)
    biased = np.hstack([syn1, rng.normal(0, 1.0, (len(syn1), 1))]).astype(np.float32)
    alpha, eps = np.float32(0.1), 1e-4
    for word in range(len(tree)):
        u, grad_h = biased.copy(), np.zeros_like(h)
        loss = one_code_step(h, word, alpha, u, tree, grad_h)
        assert loss == pytest.approx(-log_prob(h, word, tree, biased), rel=1e-5)
        nodes, codes = tree.path(word)
        x = biased[nodes, :-1].astype(np.float64) @ h + biased[nodes, -1]
        g = alpha * (1 - codes - 1 / (1 + np.exp(-x)))
        expect = biased.astype(np.float64).copy()
        expect[nodes, :-1] += g[:, None] * h[None, :]
        expect[nodes, -1] += g
        np.testing.assert_allclose(u, expect, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad_h, (g[:, None] * biased[nodes, :-1]).sum(axis=0),
                                   rtol=1e-5, atol=1e-6)
        for n in nodes:  # the step is alpha × the gradient of log P
            for d in (0, 3, len(h)):  # two vector entries and the bias
                plus, minus = biased.astype(np.float64), biased.astype(np.float64)
                plus[n, d] += eps
                minus[n, d] -= eps
                numeric = (log_prob(h, word, tree, plus)
                           - log_prob(h, word, tree, minus)) / (2 * eps)
                assert (u[n, d] - biased[n, d]) / alpha == pytest.approx(numeric, abs=2e-4)
        for d in range(len(h)):
            hp, hm = h.astype(np.float64).copy(), h.astype(np.float64).copy()
            hp[d] += eps
            hm[d] -= eps
            numeric = (log_prob(hp, word, tree, biased)
                       - log_prob(hm, word, tree, biased)) / (2 * eps)
            assert grad_h[d] / alpha == pytest.approx(numeric, abs=2e-4)


def test_edge_step_skips_nodes_scored_beyond_six(case):
    """word2vec.c's edge (ModelKind.edge): a node whose score h·u is beyond ±6 takes
    no step and adds none to h's, however wrong its branch; the others step as
    without it, and the loss still counts every node. Reference: numpy."""
    tree, syn1, h = case
    big = syn1 * np.float32(8.0)  # scores on both sides of ±6
    step = step_for(False, False, True)
    alpha = np.float32(0.1)
    beyond = within = 0
    for word in range(len(tree)):
        nodes, codes = tree.path(word)
        x = big[nodes].astype(np.float64) @ h
        assert np.all(np.abs(np.abs(x) - 6) > 0.01)  # (the table's last entry ramps to 0)
        u, grad_h = big.copy(), np.zeros_like(h)
        loss = step(h, word, alpha, u, np.full(len(tree) - 1, -1, np.int32),
                    np.empty((0, len(h)), np.float32), tree.flat, grad_h,
                    np.empty(tree.depths.max(), np.float32), len(h))
        assert loss == pytest.approx(-log_prob(h, word, tree, big), rel=1e-5)
        g = alpha * (1 - codes - 1 / (1 + np.exp(-x))) * (np.abs(x) < 6)
        expect_u = big.astype(np.float64).copy()
        expect_u[nodes] += g[:, None] * h[None, :]
        np.testing.assert_allclose(u, expect_u, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad_h, (g[:, None] * big[nodes]).sum(axis=0), rtol=1e-5,
                                   atol=1e-6)
        beyond += int(np.sum(np.abs(x) >= 6))
        within += int(np.sum(np.abs(x) < 6))
    assert beyond > 5 and within > 5


def test_probabilities_sum_to_one(case):
    tree, syn1, h = case
    total = sum(np.exp(log_prob(h, w, tree, syn1)) for w in range(len(tree)))
    assert total == pytest.approx(1.0, abs=1e-9)


def test_one_code_step_reads_and_writes_the_private_hot_rows(case):
    """A node with a slot (``hot_slot[n] >= 0``) is read from and stepped in the
    thread's ``hot_rows[slot]``, never in ``syn1`` (whose row there holds a value
    that would wreck the loss if read); the other nodes in ``syn1``. Each row ends
    where numpy's step on one matrix puts it; paths of 3 to 5 nodes cover the
    four-node passes and the ones after them."""
    tree, syn1, h = case
    alpha = np.float32(0.1)
    hot = np.unique(np.concatenate([tree.path(0)[0][:2], tree.path(len(tree) - 1)[0][-1:]]))
    slot = np.full(len(syn1), -1, np.int32)
    slot[hot] = np.arange(len(hot), dtype=np.int32)
    step = step_for(False, False)
    assert tree.depths.min() < 4 <= tree.depths.max()
    for word in range(len(tree)):
        shared, rows = syn1.copy(), syn1[hot].copy()
        shared[hot] = 1e6
        grad_h = np.zeros_like(h)
        loss = step(h, word, alpha, shared, slot, rows, tree.flat, grad_h,
                    np.empty(tree.depths.max(), np.float32), len(h))
        assert loss == pytest.approx(-log_prob(h, word, tree, syn1), rel=1e-5)
        nodes, codes = tree.path(word)
        x = syn1[nodes].astype(np.float64) @ h
        g = alpha * (1 - codes - 1 / (1 + np.exp(-x)))
        expect = syn1.astype(np.float64).copy()
        expect[nodes] += g[:, None] * h[None, :]
        np.testing.assert_allclose(grad_h, (g[:, None] * syn1[nodes]).sum(axis=0), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(rows, expect[hot], rtol=1e-5, atol=1e-6)
        cold = np.setdiff1d(np.arange(len(syn1)), hot)
        np.testing.assert_allclose(shared[cold], expect[cold], rtol=1e-5, atol=1e-6)
        assert np.all(shared[hot] == 1e6)
