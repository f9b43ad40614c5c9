"""hsw2v.training.cbow: CBOW's steps with subwords against fastText's semantics in
numpy (every row of the context words averaged, the step added to each at once)."""
import numpy as np
import pytest

from hsw2v.subwords.ngrams import subword_table
from hsw2v.training.block import train_block
from hsw2v.training.state import Weights, new_state
from hsw2v.trees.tree import huffman

from tests.helpers import kind_config

MASK = (1 << 64) - 1


def distinct_words(n: int) -> list[str]:
    """Words of three characters none of the others has: no n-gram is shared."""
    return ["".join(chr(0x4E00 + 3 * k + c) for c in range(3)) for k in range(n)]


def numpy_hs_step(h, word, alpha, syn1, tree, edge):
    """One hierarchical-softmax step in float64: −log P(word | h), the inner nodes
    moved in place, and the step for h; with ``edge``, word2vec.c's: no step at a
    node whose score is beyond ±6."""
    nodes, codes = tree.path(word)
    step, loss = np.zeros(len(h)), 0.0
    for node, code in zip(nodes, codes):
        u = syn1[node].astype(np.float64)
        score = float(h @ u)
        sign = 1.0 - 2.0 * code
        loss += np.logaddexp(0.0, -sign * score)
        if edge and abs(score) >= 6.0:
            continue
        g = sign * alpha / (1.0 + np.exp(sign * score))  # sign · (1 − σ(sign·score)) · α
        step += g * u
        syn1[node] += (g * h).astype(np.float32)
    return loss, step


def subword_block(ids, ends, inputs, syn1, tree, table, window, a0, a1, seed, arch,
                  cbow_mean=True):
    """train_block on one block with subwords (one thread, no private rows)."""
    dim = inputs.shape[1]
    hot = np.empty(0, np.int32), np.full(len(tree) - 1, -1, np.int32)
    weights = Weights(inputs, syn1, *hot, (), table.offsets, table.rows)
    state = new_state(seed, len(ids), window, int(tree.depths.max()), syn1[hot[0]], (), None,
                      True)
    return train_block(ids, ends, len(ends), a0, a1, np.ones(len(tree), np.float32), weights,
                       tree.training_paths, kind_config(arch, window, cbow_mean), state, dim)


def windows(ids, ends, window, seed):
    """Each example's (block position, sentence, centre index, context indices), with
    word2vec.c's random window draws."""
    r, start = seed, 0
    for end in ends:
        sent = ids[start:end]
        for i in range(len(sent)):
            r = (r * 25214903917 + 11) & MASK
            b = (r >> 16) % window
            ctx = [j for j in range(max(0, i - window + b), min(len(sent), i + window - b + 1))
                   if j != i]
            yield start + i, sent, i, ctx
        start = end


def random_case(seed=3, V=23, D=16, buckets=100_000):
    rng = np.random.default_rng(seed)
    words = distinct_words(V)
    table = subword_table(words, 1, 3, buckets)
    rows = [set(table.rows[table.offsets[w]:table.offsets[w + 1]].tolist()) for w in range(V)]
    assert sum(map(len, rows)) == len(set().union(*rows))  # (no row shared: see the test)
    tree = huffman(np.sort(rng.integers(5, 500, size=V))[::-1].astype(np.int64))
    inputs = rng.normal(0, 0.3, (V + buckets, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.3, (V - 1, D)).astype(np.float32)
    ids = (np.arange(200) * 7 % V).astype(np.int32)  # no word twice within a window
    return words, table, tree, inputs, syn1, ids, np.array([120, 200], dtype=np.int64)


@pytest.mark.parametrize("mean", [True, False])
def test_cbow_with_subwords_is_fasttexts_cbow(mean):
    """Where no two words of a window share a row, CBOW with subwords gives
    fastText's result: h is the mean (or sum) of every row of the context words, and
    each row takes h's whole step at once, though the kernel keeps each word's sum
    in the window's ring and adds the steps when the word leaves it."""
    words, table, tree, inputs, syn1, ids, ends = random_case()
    window, a0, a1 = 3, 0.1, 0.05
    ref0, ref1, ref_loss, ref_n = inputs.copy(), syn1.copy(), 0.0, 0
    for position, sent, i, ctx in windows(ids, ends, window, 9):
        alpha = np.float32(a0 + (a1 - a0) / 200 * position)
        if not ctx:
            continue
        rows = np.concatenate([table.rows[table.offsets[sent[j]]:table.offsets[sent[j] + 1]]
                               for j in ctx])
        h = ref0[rows].astype(np.float64).sum(axis=0) / (len(rows) if mean else 1)
        loss, step = numpy_hs_step(h, sent[i], float(alpha), ref1, tree, edge=True)
        np.add.at(ref0, rows, step.astype(np.float32))
        ref_loss += loss
        ref_n += 1
    loss, n = subword_block(ids, ends, inputs, syn1, tree, table, window, a0, a1, 9, "cbow",
                            mean)
    assert n == ref_n
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    np.testing.assert_allclose(inputs, ref0, atol=2e-5)
    np.testing.assert_allclose(syn1, ref1, atol=2e-5)


@pytest.mark.newest_only
def test_a_shared_row_is_trained_by_every_word_that_has_it():
    """Words sharing rows (one bucket for every n-gram): every step still reaches
    the shared row, once for each time a context holds it, by the block's end."""
    words = distinct_words(5)
    table = subword_table(words, 1, 3, 1)
    tree = huffman(np.array([50, 40, 30, 20, 10]))
    rng = np.random.default_rng(1)
    inputs = rng.normal(0, 0.3, (6, 8)).astype(np.float32)
    syn1 = np.zeros((4, 8), np.float32)
    ids = np.array([0, 1, 2, 3, 4, 0, 1], np.int32)
    before = inputs.copy()
    subword_block(ids, np.array([7]), inputs, syn1, tree, table, 1, 0.1, 0.1, 1, "cbow")
    assert not np.allclose(inputs[5], before[5])  # the one bucket moved
    assert np.isfinite(inputs).all()
