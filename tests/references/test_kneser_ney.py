"""The Kneser-Ney reference (the anchor of the language-model benchmark): each distribution sums to 1 over
the vocabulary, and it equals a plain dictionary implementation of the formulas."""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from tests.references.kneser_ney import KneserNey


def dict_kn(lines, V, n):
    """Interpolated Kneser-Ney written out with dictionaries (Chen & Goodman), with
    KenLM's conventions: each line from <s>, no n-gram reaching left past it,
    adjusted counts raw at order n and for n-grams beginning with <s>."""
    S = "<s>"
    raw = [defaultdict(int) for _ in range(n + 1)]  # k-grams ending at predicted words
    for line in lines:
        seq = [S, *line]
        for t in range(1, len(seq)):
            for k in range(1, min(n, t + 1) + 1):
                raw[k][tuple(seq[t - k + 1:t + 1])] += 1
    cont = [defaultdict(int) for _ in range(n + 1)]  # N1+(· g) from the distinct k+1-grams
    for k in range(1, n):
        for g in raw[k + 1]:
            cont[k][g[1:]] += 1
    counts = [None] + [{g: c if k == n or g[0] == S else cont[k][g] for g, c in raw[k].items()}
                       for k in range(1, n + 1)]
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
        """P(w | history), history: the tokens before w in its line, from <s>."""
        p = (max(counts[1].get((w,), 0) - disc[1], 0) / total[1][()]
             + disc[1] * follow[1][()] / total[1][()] / V)
        for k in range(2, min(n, len(history) + 1) + 1):
            h = tuple(history[len(history) - (k - 1):])
            if total[k].get(h, 0) > 0:
                p = (max(counts[k].get(h + (w,), 0) - disc[k], 0) / total[k][h]
                     + disc[k] * follow[k][h] / total[k][h] * p)
        return p

    def log_probs(test):
        out = []
        for line in test:
            seq = [S, *line]
            for t in range(1, len(seq)):
                out.append(np.log(prob(seq[max(0, t - n + 1):t], seq[t])))
        return np.array(out)

    return prob, log_probs


def corpus(rng, V, lines, length):
    """Zipf-ish lines of word ids 0..V−2 with some structure (each word often
    followed by its successor), each ending with V−1, the line's end (</s>)."""
    out = []
    for _ in range(lines):
        line = [int(rng.zipf(1.3)) % (V - 1)]
        for _ in range(int(rng.integers(0, length))):
            line.append((line[-1] + 1) % (V - 1) if rng.random() < 0.5
                        else int(rng.zipf(1.3)) % (V - 1))
        out.append(np.array([*line, V - 1]))
    return out


@pytest.mark.parametrize("n", [2, 3, 5])
def test_kneser_ney_matches_the_formulas_and_sums_to_one(n):
    rng = np.random.default_rng(n)
    V = 30
    train, test = corpus(rng, V, 300, 20), corpus(rng, V, 40, 15)
    model = KneserNey(train, V, n)
    prob, log_probs = dict_kn(train, V, n)
    np.testing.assert_allclose(model.log_probs(test), log_probs(test), rtol=1e-10)
    for history in ([], [3], [1, 2], [5, 6, 7, 8], [28, 28, 28, 28], [0, 17]):
        p = model.probs_after(history)
        assert p.sum() == pytest.approx(1.0, abs=1e-9) and (p > 0).all()
        S = ["<s>", *history]
        np.testing.assert_allclose(p, [prob(S[max(0, len(S) - (n - 1)):], w) for w in range(V)],
                                   rtol=1e-10)


WORDS = ("the a of city war king queen river one two three four five and in on is was "
         "he she it they said made old new").split()


def text_lines(rng, lines, vocabulary):
    """Lines of words with some structure, and now and then a rare word."""
    out = []
    for _ in range(lines):
        line = []
        for _ in range(int(rng.integers(0, 14))):
            if rng.random() < 0.04:
                line.append(f"rare{int(rng.integers(0, 400))}")
            elif line and rng.random() < 0.5:
                line.append(vocabulary[(vocabulary.index(line[-1]) + 1) % len(vocabulary)]
                            if line[-1] in vocabulary else "the")
            else:
                line.append(vocabulary[int(rng.zipf(1.4)) % len(vocabulary)])
        out.append(line)
    return out


@pytest.mark.parametrize("n", [3, 5])
def test_kenlm_reads_the_anchors_arpa_to_the_same_perplexities(tmp_path, n):
    """KenLM's conventions, checked by KenLM: the anchor's model, written as an ARPA
    file, gives KenLM's query the anchor's own perplexities, with and without the
    OOVs, on held-out lines with words outside the vocabulary and empty lines."""
    kenlm = pytest.importorskip("kenlm")  # (.ci/run installs it: the test extra has it)
    rng = np.random.default_rng(n)
    train, held = text_lines(rng, 1500, WORDS), text_lines(rng, 200, WORDS)
    counts = Counter(w for line in train for w in line)
    words = sorted((w for w, c in counts.items() if c >= 2), key=lambda w: -counts[w])
    words += ["<unk>", "</s>"]
    index = {w: i for i, w in enumerate(words)}

    def ids(lines):
        return [np.array([index.get(w, index["<unk>"]) for w in line] + [index["</s>"]])
                for line in lines]

    model = KneserNey(ids(train), len(words), n)
    model.write_arpa(str(tmp_path / "lm.arpa"), words)
    logp = model.log_probs(ids(held)) / np.log(10)
    oov = np.concatenate([[w not in index for w in line] + [False] for line in held])
    assert oov.sum() > 20 and sum(not line for line in held) > 5  # (the cases are there)
    ours = (10 ** (-logp.mean()), 10 ** (-logp[~oov].mean()))

    lm = kenlm.Model(str(tmp_path / "lm.arpa"))
    scores = [s for line in held for s in lm.full_scores(" ".join(line))]
    theirs_oov = np.array([is_oov for _, _, is_oov in scores])
    theirs = np.array([p for p, _, _ in scores])
    assert len(scores) == len(logp) and (theirs_oov == oov).all()
    np.testing.assert_allclose(theirs, logp, atol=2e-5)  # (ARPA: 7 decimals; KenLM: float32)
    assert (10 ** (-theirs.mean()), 10 ** (-theirs[~theirs_oov].mean())) == pytest.approx(ours, rel=1e-5)
