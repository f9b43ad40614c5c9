import numpy as np
import pytest
from numba import njit

from hsw2v.training import block
from hsw2v.training.block import train_block
from hsw2v.training.kinds import model_kinds
from hsw2v.training.state import Weights, new_state
from hsw2v.trees.tree import huffman

from tests.helpers import kind_config


def train(ids, ends, syn0, syn1, tree, keep, window, a0, a1, seed, arch="cbow", hot=None,
          sync_every=1 << 30, cbow_mean=True, extra=None):
    """train_block on one block; ``hot`` = (hot nodes, their slots) or None for none;
    ``extra``: the kind's matrices (trained in place), else fresh ones."""
    dim = syn0.shape[1]
    if hot is None:
        hot = np.empty(0, np.int32), np.full(len(tree) - 1, -1, np.int32)
    if extra is None:
        extra = kind_extra(arch, len(syn0), dim, window)
    weights = Weights(syn0, syn1, *hot, extra)
    config = kind_config(arch, window, cbow_mean, sync_every)
    state = new_state(seed, len(ids), window, int(tree.depths.max()), syn1[hot[0]], weights.extra)
    return train_block(ids, ends, len(ends), a0, a1, keep, weights, tree.training_paths, config,
                       state, dim)


def kind_extra(arch, n_words, dim, window):
    """The kind's own matrices at their starting values (the same each call)."""
    from hsw2v.settings import TrainSettings
    from hsw2v.training.kinds import model_kind

    s = TrainSettings(arch=arch, dim=dim, window=window, threads=1).resolved()
    return tuple(model_kind(arch).extra_weights(n_words, dim, s).values())


def log_prob(h, word, tree, syn1):
    """log P(word | h) as the product of branch probabilities, in float64; a column
    of ``syn1`` after the vectors holds node biases."""
    nodes, codes = tree.path(word)
    u = syn1[nodes].astype(np.float64)
    x = u[:, :len(h)] @ h.astype(np.float64) + (u[:, len(h)] if u.shape[1] > len(h) else 0.0)
    sign = 1.0 - 2.0 * codes
    return float(np.sum(-np.logaddexp(0.0, -sign * x)))


@pytest.mark.newest_only
@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_only_edge_kinds_skip_saturated_nodes(arch):
    """With every score far beyond ±6, a kind with word2vec.c's edge (CBOW) trains
    nothing; the others still move the weights."""
    rng = np.random.default_rng(4)
    V, D = 9, 8
    tree = huffman(np.sort(rng.integers(5, 50, size=V))[::-1].astype(np.int64))
    syn0 = rng.normal(0, 1000, (V, D)).astype(np.float32)
    syn1 = rng.normal(0, 1000, (V - 1, D)).astype(np.float32)
    before = syn0.copy(), syn1.copy()
    ids, ends = block_inputs(rng, 60, V, 7)
    train(ids, ends, syn0, syn1, tree, np.ones(V, np.float32), 2, 0.05, 0.05, 3, arch)
    unchanged = np.array_equal(syn0, before[0]) and np.array_equal(syn1, before[1])
    assert unchanged == model_kinds[arch].edge


def block_inputs(rng, n_words, vocab_size, sentence_len):
    ids = rng.integers(0, vocab_size, size=n_words).astype(np.int32)
    ends = np.arange(sentence_len, n_words + sentence_len, sentence_len, dtype=np.int64)
    ends[-1] = n_words
    return ids, ends


@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_reported_loss_is_mean_neg_log_prob(arch):
    """With alpha 0 nothing moves, so the kernel's loss must equal a direct sum."""
    rng = np.random.default_rng(1)
    V, D = 9, 8
    counts = np.sort(rng.integers(5, 50, size=V))[::-1].astype(np.int64)
    tree = huffman(counts)
    syn0 = rng.normal(0, 0.5, (V, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.5, (V - 1, D)).astype(np.float32)
    ids, ends = block_inputs(rng, 60, V, 7)
    keep = np.ones(V, dtype=np.float32)
    window = 1  # the shrink draw is always 0, so every window is known
    loss, n = train(ids, ends, syn0, syn1, tree, keep, window, 0.0, 0.0, 5, arch)
    expect, count, start = 0.0, 0, 0
    for end in ends:
        s = ids[start:end]
        start = end
        for i in range(len(s)):
            ctx = [s[j] for j in (i - 1, i + 1) if 0 <= j < len(s)]
            if arch == "lbl":  # the word before (or the start row), every token
                positions, start_row = kind_extra(arch, V, D, window)
                r = syn0[s[i - 1]] if i > 0 else start_row[0]
                expect -= log_prob(positions[0] * r, s[i], tree, syn1)
                count += 1
            elif arch == "skipgram":
                for c in ctx:
                    expect -= log_prob(syn0[c], s[i], tree, syn1)
                    count += 1
            elif ctx:
                expect -= log_prob(syn0[ctx].mean(axis=0), s[i], tree, syn1)
                count += 1
    assert n == count
    assert loss == pytest.approx(expect, rel=1e-4)


def test_training_lowers_loss():
    rng = np.random.default_rng(2)
    V, D = 20, 8
    tree = huffman(np.arange(V, 0, -1) * 10)
    syn0 = ((rng.random((V, D)) - 0.5) / D).astype(np.float32)
    syn1 = np.zeros((V - 1, D), np.float32)
    # a deterministic successor structure: word k is followed by k+1
    ids = (np.arange(4000) % V).astype(np.int32)
    ends = np.array([4000], dtype=np.int64)
    keep = np.ones(V, dtype=np.float32)

    def epoch(alpha):
        loss, n = train(ids, ends, syn0, syn1, tree, keep, 2, alpha, alpha, 1)
        return loss / n

    before = epoch(0.0)
    assert before == pytest.approx(np.mean(tree.depths) * np.log(2), rel=0.05)  # zero syn1
    for _ in range(3):
        epoch(0.05)
    assert epoch(0.0) < 0.5 * before


@pytest.mark.newest_only
@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_hot_rows_match_in_place_training(arch):
    """With one thread, training hot nodes in private rows and merging them gives
    the same weights as training them in place."""
    rng = np.random.default_rng(5)
    V, D = 30, 16
    tree = huffman(np.sort(rng.integers(5, 500, size=V))[::-1].astype(np.int64))
    syn0 = rng.normal(0, 0.3, (V, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.3, (V - 1, D)).astype(np.float32)
    ids = rng.integers(0, V, size=3000).astype(np.int32)
    ends = np.array([3000], dtype=np.int64)
    keep = np.ones(V, dtype=np.float32)
    from hsw2v.runs.kernel_setup import hot_inner_nodes

    results = []
    for k, every in ((0, 1 << 30), (8, 100), (8, 7)):
        s0, s1 = syn0.copy(), syn1.copy()
        extra = kind_extra(arch, V, D, 3)  # (LBL's: the thread's copies, merged like hot rows)
        hot = hot_inner_nodes(tree, np.ones(V, np.int64), k)
        loss, _n = train(ids, ends, s0, s1, tree, keep, 3, 0.05, 0.01, 3, arch, hot, every,
                         extra=extra)
        results.append((loss, s0, s1, extra))
    assert all(not np.array_equal(m, fresh) for m, fresh in
               zip(results[0][3], kind_extra(arch, V, D, 3)))  # the kind's matrices trained
    for loss, s0, s1, extra in results[1:]:
        assert loss == pytest.approx(results[0][0], rel=1e-5)
        np.testing.assert_allclose(s0, results[0][1], atol=1e-5)
        np.testing.assert_allclose(s1, results[0][2], atol=1e-5)
        for m, in_place in zip(extra, results[0][3]):
            np.testing.assert_allclose(m, in_place, atol=1e-5)


def test_prefetch_hints_the_next_examples_rows():
    """prefetch_next asks for exactly the rows the next example reads from memory:
    the inner nodes on the next word's path outside the private hot rows, and the
    input row of the word entering the window; nothing past the sentence's end.
    Run as Python with a recording prefetch, against the rule written out here."""
    import types as pytypes

    rng = np.random.default_rng(9)
    V, D, window = 40, 8, 3
    tree = huffman(np.sort(rng.integers(5, 500, size=V))[::-1].astype(np.int64))
    syn0 = rng.normal(size=(V, D)).astype(np.float32)
    syn1 = rng.normal(size=(V - 1, D)).astype(np.float32)
    slot = np.full(V - 1, -1, np.int32)
    slot[tree.path(0)[0]] = 0  # the top word's path is hot
    sen = rng.integers(0, V, size=12).astype(np.int32)
    asked = []
    fn = block.prefetch_next.py_func
    record = pytypes.FunctionType(fn.__code__, {**fn.__globals__, "prefetch_row":
                                  lambda m, r: asked.append((m is syn0, int(r)))})
    m = len(sen)
    for i in range(m):
        asked.clear()
        record(sen, i, m, window, syn0, syn1, slot, tree.flat)
        expect = []
        if i + 1 < m:
            w = sen[i + 1]
            expect += [(False, int(n)) for n in tree.path(w)[0] if slot[n] < 0]
            if i + 1 + window < m:
                expect.append((True, int(sen[i + 1 + window])))
        assert sorted(asked) == sorted(expect), i


def test_hot_rows_merge_adds_each_threads_change():
    """Merging a thread's private hot rows adds its change since the last merge to
    the shared rows, keeping what other threads merged meanwhile; the private rows
    then restart from the merged values."""
    rng = np.random.default_rng(11)
    base = rng.normal(size=(3, 5)).astype(np.float32)
    syn1 = rng.normal(size=(6, 5)).astype(np.float32)
    hot = np.array([1, 4, 5], dtype=np.int32)
    syn1[hot] = base
    others = rng.normal(size=(3, 5)).astype(np.float32)  # merged by another thread
    mine = rng.normal(size=(3, 5)).astype(np.float32)  # this thread's own change
    syn1[hot] += others
    rows, last = base + mine, base.copy()
    expect = syn1.copy()
    expect[hot] = base.astype(np.float64) + others + mine
    block.sync_hot_rows(syn1, hot, rows, last)
    np.testing.assert_allclose(syn1, expect, rtol=1e-6, atol=1e-6)
    assert np.array_equal(rows, syn1[hot]) and np.array_equal(last, syn1[hot])


@njit
def _count_words(n, v, since, every, fast):
    for _ in range(n):
        since = block.merge_due(v, since, every, fast)
    return since


def _merging(syn1, hot, rows, last, syn0=None, word_rows=None, word_last=None):
    """What merge_due reads of a block's visitor: hot rows ``rows`` of the nodes
    ``hot`` (``last``: their values at the last merge), and private word rows."""
    none = np.zeros((0, syn1.shape[1]), np.float32)
    return block.BlockTraining(
        None, none if syn0 is None else syn0, syn1, hot, None, None, none, none, none, rows,
        last, none if word_rows is None else word_rows, none if word_last is None else word_last,
        0.0, 0.0, (), (), ())


def test_the_hottest_rows_merge_more_often():
    """The ``fast_rows`` first hot rows (the most visited) reach the shared vectors
    every FAST_SYNC_WORDS words; the others only every ``sync_every`` words. CBOW
    has such rows, skip-gram none."""
    assert model_kinds["cbow"].fast_rows == 32 and model_kinds["skipgram"].fast_rows == 0
    fast, every = 32, 32 * block.FAST_SYNC_WORDS
    k = fast + 5
    syn1 = np.zeros((k + 3, 4), dtype=np.float32)
    hot = np.arange(3, k + 3, dtype=np.int32)
    rows, last = np.ones((k, 4), dtype=np.float32), np.zeros((k, 4), dtype=np.float32)
    v = _merging(syn1, hot, rows, last)
    since = _count_words(block.FAST_SYNC_WORDS - 1, v, 0, every, fast)
    assert not syn1.any()  # nothing due yet
    since = _count_words(1, v, since, every, fast)
    assert (syn1[hot[:fast]] == 1).all() and not syn1[hot[fast:]].any() and not syn1[:3].any()
    rows += 1  # every row changes again; the hottest merge again after FAST_SYNC_WORDS
    since = _count_words(block.FAST_SYNC_WORDS, v, since, every, fast)
    assert (syn1[hot[:fast]] == 2).all() and not syn1[hot[fast:]].any()
    since = _count_words(every - 2 * block.FAST_SYNC_WORDS, v, since, every, fast)
    assert since == 0 and (syn1[hot[:fast]] == 2).all() and (syn1[hot[fast:]] == 2).all()


@pytest.mark.parametrize("arch", list(model_kinds))
def test_each_kind_merges_its_hot_rows_at_its_own_interval(arch):
    """A kind's private hot rows past its ``fast_rows`` reach the shared vectors
    after its ``hot_sync_words`` words, not one word before, and the interval is a
    whole number of FAST_SYNC_WORDS (so the fast merges keep their step)."""
    kind = model_kinds[arch]
    every, fast = kind.hot_sync_words, kind.fast_rows
    assert every > 0 and every % block.FAST_SYNC_WORDS == 0
    k = fast + 3
    syn1 = np.zeros((k + 2, 4), dtype=np.float32)
    hot = np.arange(2, k + 2, dtype=np.int32)
    rows, last = np.ones((k, 4), dtype=np.float32), np.zeros((k, 4), dtype=np.float32)
    v = _merging(syn1, hot, rows, last)
    since = _count_words(every - 1, v, 0, every, fast)
    assert not syn1[hot[fast:]].any()
    assert _count_words(1, v, since, every, fast) == 0
    assert (syn1[hot] == 1).all() and not syn1[:2].any()


def test_private_word_rows_merge_every_fast_interval():
    """A thread's copies of syn0[:K] (LBL's most frequent words) reach the shared
    vectors every FAST_SYNC_WORDS words, each adding the thread's change since the
    last merge to what other threads wrote meanwhile; the rows past K are never
    touched. LBL has such rows, the embedding kinds none."""
    assert model_kinds["lbl"].private_words > 0
    assert model_kinds["cbow"].private_words == model_kinds["skipgram"].private_words == 0
    rng = np.random.default_rng(3)
    syn0 = rng.normal(size=(9, 4)).astype(np.float32)
    k = 5
    base = syn0[:k].copy()
    mine = base + rng.normal(size=(k, 4)).astype(np.float32)  # this thread's steps
    others = rng.normal(size=(k, 4)).astype(np.float32)  # another thread's, in syn0 itself
    syn0[:k] += others
    before = syn0.copy()
    hot = np.empty(0, np.int32)
    none = np.zeros((0, 4), np.float32)
    v = _merging(np.zeros((1, 4), np.float32), hot, none, none, syn0, mine, base)
    since = _count_words(block.FAST_SYNC_WORDS - 1, v, 0, 1 << 30, 0)
    np.testing.assert_array_equal(syn0, before)  # nothing due yet
    expected = before[:k].astype(np.float64) + (mine.astype(np.float64) - base)
    _count_words(1, v, since, 1 << 30, 0)
    np.testing.assert_allclose(syn0[:k], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(syn0[k:], before[k:])
    np.testing.assert_array_equal(mine, syn0[:k])  # the copies start again from the sum
    np.testing.assert_array_equal(base, syn0[:k])


@njit
def _merge(shared, private, base):
    block.sync_matrices(shared, private, base)


def test_a_kinds_matrices_merge_like_hot_rows():
    """A thread's copies of the kind's matrices merge as hot rows do: each shared
    matrix gains the thread's change since the last merge, keeping the others'."""
    rng = np.random.default_rng(12)
    shapes = [(5, 4), (1, 4)]
    base = [rng.normal(size=s).astype(np.float32) for s in shapes]
    others = [rng.normal(size=s).astype(np.float32) for s in shapes]
    mine = [rng.normal(size=s).astype(np.float32) for s in shapes]
    shared = tuple(b + o for b, o in zip(base, others))
    private = tuple(b + m for b, m in zip(base, mine))
    last = tuple(b.copy() for b in base)
    _merge(shared, private, last)
    for k in range(2):
        np.testing.assert_allclose(shared[k], base[k].astype(np.float64) + others[k] + mine[k],
                                   rtol=1e-6, atol=1e-6)
        assert np.array_equal(private[k], shared[k]) and np.array_equal(last[k], shared[k])
    _merge((), (), ())  # a kind without matrices: nothing to do
