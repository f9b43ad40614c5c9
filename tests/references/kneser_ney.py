"""Interpolated Kneser-Ney n-gram models in numpy: the anchor that
``scripts/benchmarks/bench_lm.py`` sets the language model (``--arch lbl``) against.

Chen & Goodman's interpolated Kneser-Ney with one absolute discount an order,
D_k = n1 / (n1 + 2·n2) (n1, n2: the k-grams of adjusted count 1 and 2; 0.5 when
there are none of either), or one given discount:

    P_k(w | h) = max(a(hw) − D_k, 0) / a(h·) + D_k · N1+(h·) / a(h·) · P_{k−1}(w | h')
    P_1(w)     = max(a(w) − D_1, 0) / a(·) + D_1 · |{w: a(w) > 0}| / a(·) / V

where h' is h without its oldest word, a(h·) the sum of a(hw) over w, and the
adjusted count a(g) of a k-gram is its count if k = n or g begins with <s>,
else N1+(·g), the number of distinct words seen before it. A history never seen
(a zero a(h·)) passes the lower order's probability on unchanged.

It counts as KenLM and SRILM do: the caller maps each word outside the
vocabulary to ``<unk>``, a word like any other, and ends each line with
``</s>``; each line starts from ``<s>``, a context that is never predicted, and
no n-gram reaches left past it. Every token of every line, ``</s>`` included,
is predicted, so P(· | h) sums to 1 over the V words for every history (checked
by tests/references/test_kneser_ney.py, with a dictionary-based reference on small text).
:meth:`KneserNey.write_arpa` writes the model as an ARPA file, which KenLM
reads to the same perplexities (the same test).

N-grams are numbered exactly, without hashing: the k-gram ending at a position
is the pair (its (k−1)-gram prefix's number, its last word), packed in one int64
and made dense with ``np.unique``.
"""
from __future__ import annotations

import functools
import math

import numpy as np


def padded(lines: list[np.ndarray], start: int) -> tuple[np.ndarray, np.ndarray]:
    """The lines' word ids in one array, each line preceded by the id ``start``
    (``<s>``); and the positions of the words (the tokens to predict)."""
    parts, targets, at = [], [], 0
    pad = np.array([start], dtype=np.int64)
    for line in lines:
        parts += [pad, np.asarray(line, dtype=np.int64)]
        targets.append(np.arange(at + 1, at + 1 + len(line)))
        at += 1 + len(line)
    tokens = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return tokens, np.concatenate(targets) if targets else np.zeros(0, np.int64)


def _gram_ids(tokens: np.ndarray, n: int, base: int, start: int, keys: list[np.ndarray] | None):
    """For k = 1..n, the number of the k-gram ending at each position (−1 where
    none: before the array's start, or reaching left past a ``start`` symbol, which
    only a gram's first token may be). With ``keys`` (a model's sorted k-gram
    keys), numbers are positions in those keys, −1 for k-grams the model never
    saw; without, the keys are made here. Returns (ids per order, keys per order)."""
    ids, made = [tokens.copy()], [None]
    if keys is None:
        made[0] = np.unique(tokens)
    else:
        made[0] = keys[0]
    ids[0] = _lookup(made[0], tokens)
    for k in range(2, n + 1):
        prev = np.full(len(tokens), -1, dtype=np.int64)
        prev[1:] = ids[-1][:-1]
        key = np.where((prev >= 0) & (tokens != start), prev * base + tokens, -1)
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
    0..n_words−1, ``<unk>`` and ``</s>`` among them), trained on ``lines`` (arrays
    of word ids, each ending with ``</s>``). ``discount``: one for every order
    instead of n1 / (n1 + 2·n2)."""

    def __init__(self, lines: list[np.ndarray], n_words: int, n: int,
                 discount: float | None = None):
        if n < 2:
            raise ValueError("order 2 or more")
        self.n, self.V = n, n_words
        self.start = n_words
        self.base = n_words + 1
        tokens, targets = padded(lines, self.start)
        ids, self.keys = _gram_ids(tokens, n, self.base, self.start, None)
        self.count, self.hist_total, self.followers, self.discount = [], [], [], []
        self.prefix = []  # each k-gram's (k−1)-gram prefix number
        for k in range(1, n + 1):
            at = targets[ids[k - 1][targets] >= 0]  # where a k-gram ends at a predicted word
            g = ids[k - 1][at]
            size = len(self.keys[k - 1])
            raw = np.bincount(g, minlength=size)
            if k == n:
                count = raw
            else:  # continuation counts: the distinct k+1-grams (·, this k-gram) ...
                longer = np.unique(ids[k][at][ids[k][at] >= 0])
                first = np.zeros(len(self.keys[k]), dtype=np.int64)
                has = ids[k][at] >= 0
                first[ids[k][at][has]] = g[has]  # (every occurrence: the same suffix)
                count = np.bincount(first[longer], minlength=size)
                begins = np.zeros(size, dtype=bool)  # ... but raw counts for those that
                begins[g[tokens[at - k + 1] == self.start]] = True  # begin with <s>
                count = np.where(begins, raw, count)
            self.count.append(count)
            n1, n2 = np.sum(count == 1), np.sum(count == 2)
            self.discount.append(discount if discount is not None
                                 else n1 / (n1 + 2 * n2) if n1 + n2 else 0.5)
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
        """log P of every token of ``lines`` (each ending with ``</s>``) given the
        words before it in its line, from ``<s>``."""
        tokens, targets = padded(lines, self.start)
        ids, _ = _gram_ids(tokens, self.n, self.base, self.start, self.keys)
        words = tokens[targets]
        return np.log(self._probs(ids, targets, words))

    def probs_after(self, history: list[int]) -> np.ndarray:
        """P(w | <s> history) for every word w (history: word ids, oldest first, up
        to the last n − 1 of them used)."""
        h = ([self.start] + list(history))[-(self.n - 1):]
        tokens = np.array([h + [w] for w in range(self.V)], dtype=np.int64).ravel()
        ids, _ = _gram_ids(tokens, self.n, self.base, self.start, self.keys)
        targets = np.arange(len(h), len(tokens), len(h) + 1)
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

    def write_arpa(self, path: str, words: list[str]) -> None:
        """The model as an ARPA file (``words[i]``: word i's text; ``<s>`` added,
        with log10 P = −99 as KenLM writes it). Each k-gram seen gets log10 P_k(w | h),
        each history its log10 backoff D·N1+(h·)/a(h·). For small models: the
        n-grams go through Python dictionaries."""
        names = [*words, "<s>"]
        grams = [[(int(key),) for key in self.keys[0]]]
        for k in range(2, self.n + 1):
            keys = self.keys[k - 1]
            grams.append([grams[-1][int(p)] + (int(w),)
                          for p, w in zip(keys // self.base, keys % self.base)])
        index = [{g: i for i, g in enumerate(order)} for order in grams]

        @functools.cache
        def prob(gram: tuple) -> float:  # P_k(w | h) for gram = h + (w,)
            k = len(gram)
            d, at = self.discount[k - 1], index[k - 1].get(gram)
            a = self.count[k - 1][at] if at is not None else 0
            if k == 1:
                total, follow = self.hist_total[0][0], self.followers[0][0]
                return max(a - d, 0) / total + d * follow / total / self.V
            lower = prob(gram[1:])
            h = index[k - 2].get(gram[:-1])
            total = self.hist_total[k - 1][h] if h is not None else 0.0
            if total <= 0:
                return lower
            return max(a - d, 0) / total + d * self.followers[k - 1][h] / total * lower

        def backoff(k: int, at: int) -> str:  # of the k-gram at ``at``, as a history
            if k == self.n or self.hist_total[k][at] <= 0:
                return ""
            d = self.discount[k]
            return f"\t{math.log10(d * self.followers[k][at] / self.hist_total[k][at]):.7f}"

        listed = []
        for k in range(1, self.n + 1):
            rows = []
            for at, gram in enumerate(grams[k - 1]):
                text = " ".join(names[t] for t in gram)
                if gram == (self.start,):
                    rows.append(f"-99\t{text}{backoff(1, at)}")
                elif self.count[k - 1][at] > 0 or k == 1:
                    rows.append(f"{math.log10(prob(gram)):.7f}\t{text}{backoff(k, at)}")
            listed.append(rows)
        seen_unigrams = {g[0] for g in grams[0]}
        extra = [f"{math.log10(prob((w,))):.7f}\t{names[w]}" for w in range(self.V)
                 if w not in seen_unigrams]  # (words never in the training text: <unk>, say)
        listed[0] += extra
        with open(path, "w", encoding="utf-8") as f:
            f.write("\\data\\\n")
            for k, rows in enumerate(listed, 1):
                f.write(f"ngram {k}={len(rows)}\n")
            for k, rows in enumerate(listed, 1):
                f.write(f"\n\\{k}-grams:\n")
                f.write("\n".join(rows) + "\n")
            f.write("\n\\end\\\n")
