"""Interpolated Kneser-Ney n-gram models in numpy: the anchor that
``scripts/bench_lm.py`` sets the language model (``--arch lbl``) against.

Chen & Goodman's interpolated Kneser-Ney with one absolute discount a order,
D_k = n1 / (n1 + 2·n2) (n1, n2: the k-grams seen once and twice, in raw counts
at the highest order and in continuation counts below it; 0.5 when there are
none of either):

    P_n(w | h) = max(c(hw) − D_n, 0) / c(h·) + D_n · N1+(h·) / c(h·) · P_{n−1}(w | h')
    P_k(w | h) = max(N1+(·hw) − D_k, 0) / N1+(·h·) + D_k · N1+(h·) / N1+(·h·) · P_{k−1}(w | h')
    P_1(w)     = max(N1+(·w) − D_1, 0) / N1+(··) + D_1 · |{w: N1+(·w) > 0}| / N1+(··) / V

where h' is h without its oldest word; a history never seen (a zero
denominator) passes the lower order's probability on unchanged. It predicts the
same tokens as the language model: the words of a fixed vocabulary (unknown
tokens dropped before n-grams form), every token of every line, each line
preceded by n−1 start symbols (never predicted). So P(· | h) sums to 1 over the
V words for every history (checked by tests/test_kneser_ney.py, with a
dictionary-based reference on small text).

N-grams are numbered exactly, without hashing: the k-gram ending at a position
is the pair (its (k−1)-gram prefix's number, its last word), packed in one int64
and made dense with ``np.unique``.
"""
from __future__ import annotations

import numpy as np


def padded(lines: list[np.ndarray], n: int, start: int) -> tuple[np.ndarray, np.ndarray]:
    """The lines' word ids in one array, each line preceded by ``n − 1`` ids
    ``start``; and the positions of the words (the tokens to predict)."""
    parts, targets, at = [], [], 0
    pad = np.full(n - 1, start, dtype=np.int64)
    for line in lines:
        parts += [pad, np.asarray(line, dtype=np.int64)]
        targets.append(np.arange(at + n - 1, at + n - 1 + len(line)))
        at += n - 1 + len(line)
    tokens = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return tokens, np.concatenate(targets) if targets else np.zeros(0, np.int64)


def _gram_ids(tokens: np.ndarray, n: int, base: int, keys: list[np.ndarray] | None):
    """For k = 1..n, the number of the k-gram ending at each position (−1 before
    the array's start). With ``keys`` (a model's sorted k-gram keys), numbers are
    positions in those keys, −1 for k-grams the model never saw; without, the
    keys are made here. Returns (ids per order, keys per order)."""
    ids, made = [tokens.copy()], [None]
    if keys is None:
        made[0] = np.unique(tokens)
    else:
        made[0] = keys[0]
    ids[0] = _lookup(made[0], tokens)
    for k in range(2, n + 1):
        prev = np.full(len(tokens), -1, dtype=np.int64)
        prev[1:] = ids[-1][:-1]
        key = np.where(prev >= 0, prev * base + tokens, -1)
        if keys is None:
            made.append(np.unique(key[key >= 0]))
        else:
            made.append(keys[k - 1])
        ids.append(np.where(key >= 0, _lookup(made[-1], key), -1))
    return ids, made


def _lookup(sorted_keys: np.ndarray, key: np.ndarray) -> np.ndarray:
    at = np.searchsorted(sorted_keys, key)
    at = np.minimum(at, len(sorted_keys) - 1)
    return np.where((len(sorted_keys) > 0) & (sorted_keys[at] == key), at, -1)


class KneserNey:
    """An interpolated Kneser-Ney model of order ``n`` over ``n_words`` words (ids
    0..n_words−1), trained on ``lines`` (arrays of word ids)."""

    def __init__(self, lines: list[np.ndarray], n_words: int, n: int):
        if n < 2:
            raise ValueError("order 2 or more")
        self.n, self.V = n, n_words
        self.start = n_words
        self.base = n_words + 1
        tokens, targets = padded(lines, n, self.start)
        ids, self.keys = _gram_ids(tokens, n, self.base, None)
        self.count, self.hist_total, self.followers, self.discount = [], [], [], []
        self.prefix = []  # each k-gram's (k−1)-gram prefix number
        for k in range(1, n + 1):
            g = ids[k - 1][targets]  # the k-grams that end at a predicted word
            size = len(self.keys[k - 1])
            if k == n:
                count = np.bincount(g, minlength=size)
            else:  # continuation counts: the distinct k+1-grams (·, this k-gram)
                longer = np.unique(ids[k][targets])
                first = np.zeros(len(self.keys[k]), dtype=np.int64)
                first[ids[k][targets]] = ids[k - 1][targets]  # (every occurrence: the same suffix)
                count = np.bincount(first[longer], minlength=size)
            self.count.append(count)
            n1, n2 = np.sum(count == 1), np.sum(count == 2)
            self.discount.append(n1 / (n1 + 2 * n2) if n1 + n2 else 0.5)
            if k == 1:
                self.prefix.append(np.zeros(size, dtype=np.int64))
                self.hist_total.append(np.array([count.sum()]))
                self.followers.append(np.array([np.sum(count > 0)]))
            else:
                prefix = self.keys[k - 1] // self.base
                self.prefix.append(prefix)
                hist = len(self.keys[k - 2])
                seen = count > 0
                self.hist_total.append(np.bincount(prefix, weights=count, minlength=hist))
                self.followers.append(np.bincount(prefix[seen], minlength=hist))

    def log_probs(self, lines: list[np.ndarray]) -> np.ndarray:
        """log P of every word of ``lines`` given the words before it in its line."""
        tokens, targets = padded(lines, self.n, self.start)
        ids, _ = _gram_ids(tokens, self.n, self.base, self.keys)
        words = tokens[targets]
        return np.log(self._probs(ids, targets, words))

    def probs_after(self, history: list[int]) -> np.ndarray:
        """P(w | history) for every word w (history: word ids, oldest first, up to
        n − 1 of them used; start symbols fill in)."""
        h = [self.start] * (self.n - 1) + list(history)
        h = h[len(h) - (self.n - 1):]
        tokens = np.array([h + [w] for w in range(self.V)], dtype=np.int64).ravel()
        ids, _ = _gram_ids(tokens, self.n, self.base, self.keys)
        targets = np.arange(self.n - 1, len(tokens), self.n)
        return self._probs(ids, targets, tokens[targets])

    def _probs(self, ids, targets, words) -> np.ndarray:
        d1 = self.discount[0]
        g1 = ids[0][targets]
        c1 = np.where(g1 >= 0, self.count[0][np.maximum(g1, 0)], 0)
        p = (np.maximum(c1 - d1, 0) / self.hist_total[0][0]
             + d1 * self.followers[0][0] / self.hist_total[0][0] / self.V)
        for k in range(2, self.n + 1):
            d = self.discount[k - 1]
            hist = ids[k - 2][targets - 1]  # the (k−1)-gram before the word
            g = ids[k - 1][targets]
            known = hist >= 0
            total = np.where(known, self.hist_total[k - 1][np.maximum(hist, 0)], 0.0)
            follow = np.where(known, self.followers[k - 1][np.maximum(hist, 0)], 0)
            c = np.where(g >= 0, self.count[k - 1][np.maximum(g, 0)], 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                here = np.maximum(c - d, 0) / total + d * follow / total * p
            p = np.where(total > 0, here, p)
        return p
