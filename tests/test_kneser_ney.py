"""The Kneser-Ney anchor of scripts/bench_lm.py: each distribution sums to 1 over
the vocabulary, and it equals a plain dictionary implementation of the formulas."""
from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np
import pytest

from .conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from kneser_ney import KneserNey


def dict_kn(lines, V, n):
    """Interpolated Kneser-Ney written out with dictionaries (Chen & Goodman)."""
    S = "<s>"
    grams = [defaultdict(int) for _ in range(n + 1)]  # raw counts of k-grams at predicted words
    for line in lines:
        padded = [S] * (n - 1) + list(line)
        for t in range(n - 1, len(padded)):
            for k in range(1, n + 1):
                grams[k][tuple(padded[t - k + 1:t + 1])] += 1
    cont = [defaultdict(int) for _ in range(n + 1)]  # N1+(· g) from the distinct k+1-grams
    for k in range(1, n):
        for g in grams[k + 1]:
            cont[k][g[1:]] += 1
    counts = [None] + [cont[k] for k in range(1, n)] + [grams[n]]
    disc = [None]
    for k in range(1, n + 1):
        values = list(counts[k].values())
        n1, n2 = values.count(1), values.count(2)
        disc.append(n1 / (n1 + 2 * n2) if n1 + n2 else 0.5)  # (no singletons: 0.5)
    total = [defaultdict(float) for _ in range(n + 1)]
    follow = [defaultdict(int) for _ in range(n + 1)]
    for k in range(1, n + 1):
        for g, c in counts[k].items():
            total[k][g[:-1]] += c
            follow[k][g[:-1]] += c > 0

    def prob(history, w):
        p = (max(counts[1].get((w,), 0) - disc[1], 0) / total[1][()]
             + disc[1] * follow[1][()] / total[1][()] / V)
        for k in range(2, n + 1):
            h = tuple(history[len(history) - (k - 1):])
            if total[k].get(h, 0) > 0:
                p = (max(counts[k].get(h + (w,), 0) - disc[k], 0) / total[k][h]
                     + disc[k] * follow[k][h] / total[k][h] * p)
        return p

    def log_probs(test):
        out = []
        for line in test:
            padded = [S] * (n - 1) + list(line)
            for t in range(n - 1, len(padded)):
                out.append(np.log(prob(padded[t - n + 1:t], padded[t])))
        return np.array(out)

    return prob, log_probs


def corpus(rng, V, lines, length):
    """Zipf-ish lines of word ids with some structure (each word often followed by
    its successor)."""
    out = []
    for _ in range(lines):
        line = [int(rng.zipf(1.3)) % V]
        for _ in range(int(rng.integers(1, length))):
            line.append((line[-1] + 1) % V if rng.random() < 0.5 else int(rng.zipf(1.3)) % V)
        out.append(np.array(line))
    return out


@pytest.mark.parametrize("n", [2, 3, 5])
def test_kneser_ney_matches_the_formulas_and_sums_to_one(n):
    rng = np.random.default_rng(n)
    V = 30
    train, test = corpus(rng, V, 300, 20), corpus(rng, V, 40, 15)
    model = KneserNey(train, V, n)
    prob, log_probs = dict_kn(train, V, n)
    np.testing.assert_allclose(model.log_probs(test), log_probs(test), rtol=1e-10)
    for history in ([], [3], [1, 2], [5, 6, 7, 8], [29, 29, 29, 29], [0, 17]):
        p = model.probs_after(history)
        assert p.sum() == pytest.approx(1.0, abs=1e-9) and (p > 0).all()
        S = ["<s>"] * (n - 1) + history
        np.testing.assert_allclose(p, [prob(S[len(S) - (n - 1):], w) for w in range(V)],
                                   rtol=1e-10)
