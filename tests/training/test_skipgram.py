"""hsw2v.training.skipgram: skip-gram's steps, against word2vec.c's order and brute force."""
import numpy as np
import pytest

from hsw2v.training import skipgram
from hsw2v.trees.tree import huffman

from tests.softmax.test_one_code import one_code_step
from tests.training.test_block import train


@pytest.mark.parametrize(("repeats", "bias"), [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_skipgram_matches_word2vec_order(repeats, bias):
    """The batched centre step equals word2vec.c's one-context-at-a-time updates,
    also when a context word comes twice in a window (its second turn must see the
    update of its first), and with node biases (each turn moves them too)."""
    rng = np.random.default_rng(3)
    V, D, window = 23, 16, 3
    tree = huffman(np.sort(rng.integers(5, 500, size=V))[::-1].astype(np.int64))
    syn0 = rng.normal(0, 0.3, (V, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.3, (V - 1, D + bias)).astype(np.float32)
    if repeats:  # four words: nearly every window holds one twice
        ids = rng.integers(0, 4, size=200).astype(np.int32)
    else:  # no word twice within a window
        ids = (np.arange(200) * 7 % V).astype(np.int32)
    ends = np.array([120, 200], dtype=np.int64)
    keep = np.ones(V, dtype=np.float32)
    a0, a1 = 0.1, 0.05
    # reference: word2vec.c's loop, with the same random window draws
    ref0, ref1 = syn0.copy(), syn1.copy()
    mask = (1 << 64) - 1
    r, ref_loss, ref_n, start = 9, 0.0, 0, 0
    for end in ends:
        sent = ids[start:end]
        for i in range(len(sent)):
            alpha = np.float32(a0 + (a1 - a0) / 200 * (start + i))
            r = (r * 25214903917 + 11) & mask
            b = (r >> 16) % window
            for j in range(max(0, i - window + b), min(len(sent), i + window - b + 1)):
                if j != i:
                    g = np.zeros(D, np.float32)
                    ref_loss += one_code_step(ref0[sent[j]], sent[i], alpha, ref1, tree, g)
                    ref0[sent[j]] += g
                    ref_n += 1
        start = end
    loss, n = train(ids, ends, syn0, syn1, tree, keep, window, a0, a1, 9, "skipgram")
    assert n == ref_n
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    np.testing.assert_allclose(syn0, ref0, atol=2e-5)
    np.testing.assert_allclose(syn1, ref1, atol=2e-5)


def test_distinct_run_ends_before_the_first_repeat():
    """``distinct_run(ctx, start, n)`` is the end of the longest run of distinct words
    from ``start``, found here by growing a set; on 2000 random contexts of 1 to 12
    words from alphabets of 2 to 8 (most with repeats), from every start."""
    rng = np.random.default_rng(7)
    repeats = 0
    for _ in range(2000):
        n = int(rng.integers(1, 13))
        ctx = rng.integers(0, int(rng.integers(2, 9)), size=n + 3).astype(np.int32)
        for start in range(n):
            end, seen = start, set()
            while end < n and int(ctx[end]) not in seen:
                seen.add(int(ctx[end]))
                end += 1
            repeats += end < n
            assert skipgram.distinct_run(ctx, start, n) == end, (ctx[:n], start)
    assert repeats > 1000


def test_the_context_is_each_context_words_vector():
    """Skip-gram predicts from each context word's own vector: ``context`` copies
    ``syn0[ctx[k]]`` into row k of H for the ``n_ctx`` words (a word twice, twice)
    and returns their number, leaving H's other rows as they were."""
    rng = np.random.default_rng(8)
    syn0 = rng.normal(size=(10, 6)).astype(np.float32)
    ctx = np.array([4, 0, 4, 9, 2, 7], dtype=np.int32)
    for n_ctx in (0, 1, 3, 5):
        H = np.full((8, 6), -7.0, dtype=np.float32)
        assert skipgram.context(skipgram.Config(3, 0), syn0, (), ctx, n_ctx, H, 6) == n_ctx
        assert np.array_equal(H[:n_ctx], syn0[ctx[:n_ctx]])
        assert np.all(H[n_ctx:] == -7.0)


@pytest.mark.newest_only
def test_skipgram_with_subwords_is_fasttexts_order():
    """With subwords, the centre word's vector (the mean of its rows) predicts each
    context word in turn, as fastText's skip-gram, each step seeing the rows as the
    previous one left them: the kernel composes h once and moves it by each step,
    then adds the steps' sum to the rows, which gives the same weights."""
    from tests.training.test_cbow import numpy_hs_step, random_case, subword_block, windows

    _, table, tree, inputs, syn1, ids, ends = random_case()
    window, a0, a1 = 3, 0.1, 0.05
    ref0, ref1, ref_loss, ref_n = inputs.copy(), syn1.copy(), 0.0, 0
    for position, sent, i, ctx in windows(ids, ends, window, 9):
        alpha = float(np.float32(a0 + (a1 - a0) / 200 * position))
        rows = table.rows[table.offsets[sent[i]]:table.offsets[sent[i] + 1]]
        for j in ctx:
            h = ref0[rows].astype(np.float64).mean(axis=0)
            loss, step = numpy_hs_step(h, sent[j], alpha, ref1, tree, edge=False)
            ref0[rows] += step.astype(np.float32)
            ref_loss += loss
            ref_n += 1
    loss, n = subword_block(ids, ends, inputs, syn1, tree, table, window, a0, a1, 9, "skipgram")
    assert n == ref_n
    assert loss == pytest.approx(ref_loss, rel=1e-5)
    np.testing.assert_allclose(inputs, ref0, atol=2e-5)
    np.testing.assert_allclose(syn1, ref1, atol=2e-5)
