"""hsw2v.training.walk: subsampling, the shrunk window and the walk, against word2vec.c's rules."""
from typing import Any, NamedTuple

import numpy as np
import pytest
from numba import njit

from hsw2v.counting.vocab import keep_probabilities
from hsw2v.jit import helpers
from hsw2v.jit.helpers import KERNEL
from hsw2v.training import walk
from hsw2v.training.kinds import model_kinds

from tests.helpers import kind_config


def test_subsampling_follows_word2vec():
    counts = np.array([1_000_000, 1000, 10], dtype=np.int64)
    keep = keep_probabilities(counts, 1e-3)
    t = 1e-3 * counts.sum()
    assert keep[0] == pytest.approx((np.sqrt(counts[0] / t) + 1) * t / counts[0], rel=1e-6)
    assert keep[1] == 1.0 and keep[2] == 1.0
    # the kernel keeps about that fraction
    ids = np.zeros(200_000, dtype=np.int32)
    sen, pos = np.empty_like(ids), np.empty(len(ids), np.int64)
    m, _ = walk.subsample(ids, 0, len(ids), keep, np.uint64(7), sen, pos)
    assert m / len(ids) == pytest.approx(keep[0], abs=0.01)
    assert np.all(np.diff(pos[:m]) > 0)


def test_shrunk_window_is_word2vecs():
    """Each side reaches window - b words, b uniform in [0, window), clipped to the
    sentence; the rng state advances once per call."""
    window, m = 5, 100
    r = np.uint64(11)
    reach = []
    for _ in range(20_000):
        lo, hi, r2 = walk.shrunk_window(50, m, window, r)
        assert r2 == helpers.lcg_next(r)
        assert 50 - lo == hi - 51  # symmetric
        reach.append(hi - 51)
        r = r2
    freq = np.bincount(reach, minlength=window + 1) / len(reach)
    assert freq[0] == 0
    np.testing.assert_allclose(freq[1:], 1 / window, atol=0.015)
    for i in (0, 1, m - 1):  # clipped at the edges
        for _ in range(50):
            lo, hi, r = walk.shrunk_window(i, m, window, r)
            assert 0 <= lo <= i < hi <= m
            assert max(i - lo, hi - i - 1) <= window


class Recorder(NamedTuple):
    """A walk's visitor that writes down what the walk hands it."""

    config: Any
    examples: np.ndarray  # int64 rows: target, position, n_ctx, then the context words
    words: np.ndarray  # int64 rows: the word and its index among the kept, before each
    done: np.ndarray  # int64 (1): examples written so far


@njit(**KERNEL, inline="always")
def _record_example(v, target, ctx, n_ctx, position, dim):
    k = v.done[0]
    v.examples[k, 0] = target
    v.examples[k, 1] = position
    v.examples[k, 2] = n_ctx
    for j in range(n_ctx):
        v.examples[k, 3 + j] = ctx[j]
    v.done[0] = k + 1
    return float(n_ctx), 1


@njit(**KERNEL, inline="always")
def _record_word(v, sen, i, m, dim, tick):
    v.words[tick, 0] = sen[i]
    v.words[tick, 1] = i
    return tick + 1


_recording_walk = walk.make_walk(_record_example, _record_word)


def word2vec_walk(ids, ends, keep, window, shrink, r, language_model):
    """word2vec.c's loop in plain Python: a word with keep probability p < 1 draws
    the generator once and stays if (r >> 40) / 2**24 < p; each kept word then draws
    b = (r >> 16) % window when ``shrink`` and takes the kept words within
    window - b of it (else within window), not crossing its sentence; a language
    model's context is the ``window`` kept words before it, -1 before the start.
    Returns (examples, words before, generator state)."""
    mask = (1 << 64) - 1
    examples, before, start = [], [], 0
    for end in ends.tolist():
        kept = []
        for k in range(start, end):
            w = int(ids[k])
            if keep[w] < 1:
                r = (r * 25214903917 + 11) & mask
                if (r >> 40) / 2**24 >= float(keep[w]):
                    continue
            kept.append((w, k))
        start = end
        m = len(kept)
        for i, (w, k) in enumerate(kept):
            before.append((w, i))
            if language_model:
                ctx = [kept[j][0] if j >= 0 else -1 for j in range(i - window, i)]
            else:
                lo, hi = i - window, i + window + 1
                if shrink:
                    r = (r * 25214903917 + 11) & mask
                    b = (r >> 16) % window
                    lo, hi = lo + b, hi - b
                ctx = [kept[j][0] for j in range(max(0, lo), min(m, hi)) if j != i]
            if ctx:
                examples.append((w, k, len(ctx), *ctx))
    return examples, before, r


@pytest.mark.parametrize("arch", sorted(model_kinds))
@pytest.mark.parametrize("shrink", [True, False])
def test_the_walk_is_word2vecs(arch, shrink):
    """Every example the walk hands its visitor (target, its index in the block, its
    context words in order), every word its ``before`` sees, the summed losses, the
    count and the generator's last state equal :func:`word2vec_walk`'s, with
    subsampling, empty and one-word sentences, and each kind's context (LBL's:
    the words before, chosen by its config's type)."""
    rng = np.random.default_rng(5)
    V, window = 12, 3
    keep = np.where(np.arange(V) < 4, rng.uniform(0.2, 0.9, V), 1.0).astype(np.float32)
    ids = rng.integers(0, V, size=400).astype(np.int32)
    ends = np.array([1, 1, 30, 31, 200, 400], dtype=np.int64)
    config = kind_config(arch, window)
    language_model = model_kinds[arch].language_model
    n = 2 * window if not language_model else window
    for seed in (1, 2**63 + 5):
        v = Recorder(config, np.full((len(ids), 3 + n), -9, np.int64),
                     np.full((len(ids), 2), -9, np.int64), np.zeros(1, np.int64))
        loss, count, r = _recording_walk(
            ids, ends, len(ends), keep, window, shrink, np.uint64(seed),
            np.empty(len(ids), np.int32), np.empty(len(ids), np.int64),
            np.empty(n, np.int32), v, 4)
        examples, before, want_r = word2vec_walk(ids, ends, keep, window, shrink, seed,
                                                 language_model)
        assert int(r) == want_r
        assert count == len(examples) == v.done[0] and 100 < count < len(ids)
        assert loss == sum(e[2] for e in examples)
        assert [tuple(row[:3 + row[2]].tolist()) for row in v.examples[:count]] == examples
        assert [tuple(row) for row in v.words[:len(before)].tolist()] == before
        assert np.all(v.words[len(before):] == -9)
