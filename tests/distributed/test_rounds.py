"""hsw2v.distributed.rounds: a round as the workers run it, in process (no cluster):
sparse changes against dense numpy, the same bits on any number of threads, a sparse
replica's change against a full copy's, the workers' spool, and the rows a word reaches."""
from __future__ import annotations

import gzip

import numpy as np

import hsw2v
from hsw2v.text.reader import Slice

from tests.helpers import REPO


def test_round_changes_against_dense_numpy():
    """A round's sparse changes: combined by ``combine`` (more than 4 workers) they
    sum as dense matrices do; moving the weights by them follows the rule written
    out in numpy; and the worker's resident copy, moved on round by round, has the
    very bits of a copy built from the anchor in one go (a rerun task's)."""
    from types import SimpleNamespace

    from hsw2v.distributed import rounds
    from hsw2v.trees.tree import huffman

    rng = np.random.default_rng(0)
    v, dim = 40, 5
    counts = np.sort(rng.integers(1, 1000, v))[::-1]
    tree = huffman(counts)
    visits = (rng.uniform(0, 50, v), rng.uniform(0, 500, v - 1))
    job = rounds.Job("t", None, tree, SimpleNamespace(threads=1), 0, visits)

    def quantized(n):  # some rows, their steps (one row's largest 127 or -127) and scales
        rows = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.int32)
        steps = rng.integers(-127, 128, (len(rows), dim)).astype(np.int8)
        steps[np.arange(len(rows)), rng.integers(0, dim, len(rows))] = 127 * rng.choice([-1, 1], len(rows))
        return rows, steps, rng.uniform(1e-6, 1e-3, len(rows)).astype(np.float32)

    def change(words):
        return rounds.Change(*quantized(v), *quantized(v - 1), words, 1.0, 10)

    def dense(ch, n, which):
        out = np.zeros((n, dim), np.float64)
        rows, steps, scale = ch[3 * which:3 * which + 3]
        out[rows] = steps * scale.astype(np.float64)[:, None]
        return out

    a, b = change(300), change(500)
    both = rounds.combine(a, b)
    assert both.words == 800 and both.replicas == 2
    for which, n in ((0, v), (1, v - 1)):  # the sum, quantized again: within about half a step
        want, got = dense(a, n, which) + dense(b, n, which), dense(both, n, which)
        step = np.abs(want).max(axis=1, keepdims=True) / 127
        assert np.all(np.abs(got - want) <= 0.51 * step)
        assert np.array_equal(np.flatnonzero(step), both[3 * which])
    anchor = rounds.Anchor(0, rng.normal(size=(v, dim)).astype(np.float32),
                           rng.normal(size=(v - 1, dim)).astype(np.float32))
    kept = (anchor.syn0.copy(), anchor.syn1.copy())
    rounds._RESIDENT.clear()
    moved = rounds.weights_at(job, anchor, [[a, b]])
    for which, (w, n) in enumerate(((anchor.syn0, v), (anchor.syn1, v - 1))):
        share = 0.5 + 0.5 / (1 + visits[which] * 800 / rounds.MEAN_VISITS)
        want = w + (dense(a, n, which) + dense(b, n, which)) * share[:, None]
        np.testing.assert_allclose(moved[1 + which], want, rtol=1e-5, atol=1e-6)
    history = [[a, b], [change(200), change(100)], [change(50), change(70)]]
    rounds._RESIDENT.clear()
    for k in range(1, 4):  # round by round, in place
        stepwise = rounds.weights_at(job, anchor, history[:k])
    stepwise = (stepwise.syn0.copy(), stepwise.syn1.copy())
    rounds._RESIDENT.clear()
    at_once = rounds.weights_at(job, anchor, history)
    assert np.array_equal(stepwise[0], at_once.syn0) and np.array_equal(stepwise[1], at_once.syn1)
    assert np.array_equal(anchor.syn0, kept[0]) and np.array_equal(anchor.syn1, kept[1])


def test_work_on_rows_split_among_threads_gives_the_same_bits():
    """A worker with several threads finds and quantizes a replica's changed rows,
    and moves its weights by a round's changes, on all of them at once: the same
    bits as on one thread, and the changed rows those numpy finds."""
    from types import SimpleNamespace

    from hsw2v.distributed import rounds

    rng = np.random.default_rng(1)
    n, dim = 3 * rounds.SPLIT_ROWS + 7, 8
    old = rng.normal(size=(n, dim)).astype(np.float32)
    new = old.copy()
    moved = rng.choice(n, n // 3, replace=False)
    new[moved] += rng.normal(scale=1e-3, size=(len(moved), dim)).astype(np.float32)
    candidates = rng.permutation(n).astype(np.int32)[: n - 5]
    one = rounds._moved(new, old, candidates, 1)
    three = rounds._moved(new, old, candidates, 3)
    np.testing.assert_array_equal(one[0], np.intersect1d(moved, candidates))
    for a, b in zip(one, three):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    change = rounds.Change(*one, *one, 1000, 1.0, 10)
    visits = (rng.uniform(0, 50, n), rng.uniform(0, 500, n))
    anchor = rounds.Anchor(0, old, old)
    results = []
    for threads in (1, 3):
        job = rounds.Job("t", None, None, SimpleNamespace(threads=threads), 0, visits)
        rounds._RESIDENT.clear()
        w = rounds.weights_at(job, anchor, [[change, change]])
        results.append((w.syn0.copy(), w.syn1.copy()))
    rounds._RESIDENT.clear()
    assert not np.array_equal(results[0][0], old)
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


def test_a_round_trains_a_sparse_replica_to_the_change_of_a_full_copy(tmp_path):
    """``train_slice`` copies into its replica only the rows the slice's words can
    read, and compares only those: with every other row of the replica NaN, its
    change is exactly what training a full copy of the weights moves, found by
    comparing the whole matrices in numpy. So is that of a long slice, which
    copies the whole weights."""
    from dataclasses import replace

    from hsw2v.distributed import rounds
    from hsw2v.model.model import Model
    from hsw2v.runs.checkpoint import Position
    from hsw2v.runs.epochs import run_epochs
    from hsw2v.settings import TrainSettings

    from tests.helpers import count_tree

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz") as f:
        words = f.read(200_000).decode().split()[:-1]
    text = "\n".join(" ".join(words[i:i + 30]) for i in range(0, len(words), 30)) + "\n"
    path = tmp_path / "c.txt"
    path.write_text(text)
    counts = hsw2v.counting.corpus.count_words(str(path), threads=1, min_count=1)
    vocab = counts.to_vocab(1, None)
    rng = np.random.default_rng(5)
    dense = rounds.DENSE_WORDS * len(vocab) + 1  # a slice that long copies every row at once
    for arch, words in (("cbow", 700), ("skipgram", 700), ("skipgram", dense)):
        s = TrainSettings(arch=arch, dim=16, window=3, sample=1e-3, threads=1, seed=7,
                          tree="huffman").resolved()
        tree = count_tree(s.tree, vocab.counts, s.seed)
        job = rounds.Job(f"t-{arch}-{words}", vocab, tree, s, 10**6, rounds.row_visits(vocab, tree, s))
        start = rounds.Anchor(0, rng.normal(size=(len(vocab), 16)).astype(np.float32),
                              rng.normal(size=(len(vocab) - 1, 16)).astype(np.float32))
        part = Slice(str(path), len(text) // 3, len(text) // 3 + 4000)  # a few sentences
        rounds._RESIDENT.clear()
        rounds._REPLICAS.clear()
        rounds._REPLICAS[job.token] = (np.full_like(start.syn0, np.nan), np.full_like(start.syn1, np.nan))
        got = rounds.train_slice(job, start, [], part, 1, 5000, words, 3)

        full = Model(vocab, tree, start.syn0.copy(), start.syn1.copy(), replace(s, epochs=2))
        seeds = np.random.SeedSequence([s.seed, 1, 3]).generate_state(1, np.uint64)
        at = Position(words, exact=False, epoch=1, words=5000, loss_sum=[0.0, 0.0], examples=[0, 0],
                      rng=[int(x) for x in seeds])
        run_epochs(part, full, full.settings, False, at, schedule=10**6)
        for (rows, steps, scale), new, old in ((got[0:3], full.vectors, start.syn0),
                                               (got[3:6], full.node_vectors, start.syn1)):
            want = np.flatnonzero((new != old).any(axis=1))
            assert 0 < len(want) < len(old) // 2
            np.testing.assert_array_equal(rows, want)
            moves = (new[want] - old[want]).astype(np.float64)  # as int8 steps of each row's
            biggest = np.abs(moves).max(axis=1)  # largest move / 127, rounded to the nearest
            np.testing.assert_allclose(scale, biggest / 127, rtol=1e-6)
            assert steps.dtype == np.int8 and np.all(np.abs(steps).max(axis=1) == 127)
            assert np.all(np.abs(steps * scale[:, None].astype(np.float64) - moves)
                          <= 0.51 * scale[:, None])
        assert got.loss_sum == at.loss_sum[1] and got.words == at.words - 5000
    rounds._REPLICAS.clear()


def test_later_epochs_of_a_slice_read_the_workers_spool(tmp_path):
    """A slice that trains again in a later epoch is kept in the worker's spool as
    its text is encoded, and read back from there: after the text is overwritten
    (other words, same bytes), the slice's second epoch changes the weights
    exactly as on the original text, and differently from a worker without a
    spool (``--no-spool``) reading the new text."""
    from dataclasses import replace

    from hsw2v.distributed import rounds
    from hsw2v.settings import TrainSettings

    from tests.helpers import count_tree

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz") as f:
        words = f.read(400_000).decode().split()[:-1]
    text = "\n".join(" ".join(words[i:i + 30]) for i in range(0, len(words) // 2, 30)) + "\n"
    other = "\n".join(" ".join(words[i:i + 30]) for i in range(len(words) // 2, len(words), 30))
    path = tmp_path / "c.txt"
    path.write_text(text)
    vocab = hsw2v.counting.corpus.count_words(str(path), threads=1, min_count=1).to_vocab(1, None)
    s = TrainSettings(arch="cbow", dim=16, window=3, sample=0, threads=1, seed=7, epochs=3,
                      min_count=1, tree="huffman").resolved()
    tree = count_tree(s.tree, vocab.counts, s.seed)
    rng = np.random.default_rng(5)
    start = rounds.Anchor(0, rng.normal(size=(len(vocab), 16)).astype(np.float32),
                          rng.normal(size=(len(vocab) - 1, 16)).astype(np.float32))
    part = Slice(str(path), 1000, len(text) - 1000)  # many blocks' worth of sentences
    changes = {}
    for spool in (True, False):
        job = rounds.Job(f"spool-{spool}", vocab, tree, replace(s, spool=spool), 10**6,
                         rounds.row_visits(vocab, tree, s))
        path.write_text(text)
        first = rounds.train_slice(job, start, [], part, 0, 0, 40_000, 3)
        run = rounds._RUNS[job.token]
        assert (part in run.spool.where) if spool else run.spool is None
        path.write_text((other + " " * len(text))[:len(text) - 1] + "\n")  # same bytes, other words
        changes[spool] = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
        rounds.release(job.token)
    path.write_text(text)
    rounds._RUNS.clear()  # a worker that never saw the slice reads its text
    again = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
    rounds.release(job.token)
    assert first.words > 10_000
    for a, b in zip(changes[True], again):
        np.testing.assert_array_equal(a, b)
    assert changes[False].words != again.words or changes[False].loss_sum != again.loss_sum

    # A spool given up (its file deleted, as when a write finds the disk full) gives
    # the same change from the text.
    job = rounds.Job("given-up", vocab, tree, s, 10**6, rounds.row_visits(vocab, tree, s))
    rounds.train_slice(job, start, [], part, 0, 0, 40_000, 3)
    rounds._RUNS[job.token].spool.tokens.file.close()
    given_up = rounds.train_slice(job, start, [], part, 1, 40_000, 40_000, 3)
    rounds.release(job.token)
    for a, b in zip(given_up, again):
        np.testing.assert_array_equal(a, b)


def test_reach_lists_the_nodes_on_every_code_of_a_word():
    """A word's inner-node rows in :func:`hsw2v.distributed.rounds.reach` are those on each of
    its codes' paths (walked up from the leaves in Python here), also when words
    have several codes; its word rows are the word itself."""
    from hsw2v.counting.vocab import Vocab
    from hsw2v.distributed import rounds
    from hsw2v.trees.tree import Tree, huffman

    several = Tree(np.array([[0, 4], [1, 5], [2, 3], [6, 7], [8, 9]]), "test", np.array([0, 2]))
    for tree in (huffman(np.array([9, 7, 5, 4, 2, 1])), several):
        v, leaves = tree.n_words, tree.n_leaves
        vocab = Vocab([f"w{i}" for i in range(v)], np.arange(v, 0, -1) * 10)
        got = rounds.reach(vocab, tree)
        parent = {int(c): a for a, pair in enumerate(tree.children) for c in pair}
        for w in range(v):
            want = []
            for leaf in [w] + [v + j for j, x in enumerate(tree.extra_leaves) if x == w]:
                node = leaf
                while node in parent:
                    want.append(parent[node])
                    node = leaves + parent[node]
            (o0, i0), (o1, i1) = got.words, got.nodes
            assert list(i0[o0[w]:o0[w + 1]]) == [w]
            assert sorted(i1[o1[w]:o1[w + 1]]) == sorted(want), (tree.kind, w)
        assert sorted(got.hot) == list(range(leaves - 1))  # fewer than HOT_NODES: all
