"""Standard intrinsic evaluations: word analogies (3CosAdd) and word-pair similarity.

Both reproduce gensim's ``KeyedVectors.evaluate_word_analogies`` and
``evaluate_word_pairs`` (default arguments, ``dummy4unknown=False``), with one
difference: a line that does not parse is an error here, where gensim skips it.
Blank lines are skipped.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from ..errors import HSW2VError
from ..model.vectors import Vectors
from ..system.files import check_regular_file

#: Upper bound on the number of float32 scores held at once (64 MiB).
_SCORE_BUDGET = 1 << 24


# ---------------------------------------------------------------- file reading


def _read_lines(path: str, what: str) -> list[str]:
    """Lines of a UTF-8 text file, or HSW2VError if it cannot be read."""
    check_regular_file(path, f"{'an' if what[0] in 'aeiou' else 'a'} {what} file")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")  # universal newlines, as gensim reads
    except FileNotFoundError:
        raise HSW2VError(f"{what} file not found: {path}") from None
    except UnicodeDecodeError as e:
        raise HSW2VError(f"{what} file {path} is not UTF-8 text: {e.reason}") from None
    except OSError as e:
        raise HSW2VError(f"cannot read {what} file {path}: {e.strerror or e}") from None


def _parse_analogies(path: str) -> list[tuple[str, list[tuple[int, list[str]]]]]:
    """Sections of ``(line number, [a, b, c, d])`` questions, in file order."""
    sections: list[tuple[str, list[tuple[int, list[str]]]]] = []
    for no, line in enumerate(_read_lines(path, "analogy"), 1):
        if line.startswith(": "):
            sections.append((line.lstrip(": ").strip(), []))  # gensim's lstrip(': ')
            continue
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise HSW2VError(f"{path}:{no}: expected 4 words or ': section', got {len(fields)} fields")
        if not sections:
            raise HSW2VError(f"{path}:{no}: question before the first ': section' line")
        sections[-1][1].append((no, fields))
    if not any(questions for _, questions in sections):
        raise HSW2VError(f"{path}: no analogy questions found")
    return sections


def _parse_pairs(path: str) -> list[tuple[str, str, float]]:
    """``(word1, word2, score)`` triples of a tab-separated file; ``#`` lines are comments."""
    pairs: list[tuple[str, str, float]] = []
    for no, line in enumerate(_read_lines(path, "word-pair"), 1):
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise HSW2VError(f"{path}:{no}: expected 'word1<TAB>word2<TAB>score', got {len(fields)} fields")
        try:
            score = float(fields[2])
        except ValueError:
            raise HSW2VError(f"{path}:{no}: score {fields[2].strip()!r} is not a number") from None
        if not math.isfinite(score):
            raise HSW2VError(f"{path}:{no}: score {fields[2].strip()!r} is not finite")
        pairs.append((fields[0], fields[1], score))
    if not pairs:
        raise HSW2VError(f"{path}: no word pairs found")
    return pairs


def _vocab(words: Sequence[str], case_insensitive: bool) -> tuple[dict[str, int], np.ndarray]:
    """Key -> first row with that key (gensim's ``ok_vocab``), and each row's first row.

    Keys are ``word.upper()`` when case-insensitive (as gensim does), else the word.
    """
    first: dict[str, int] = {}
    group = np.empty(len(words), dtype=np.int64)
    for i, w in enumerate(words):
        group[i] = first.setdefault(w.upper() if case_insensitive else w, i)
    return first, group


# ------------------------------------------------------------------- analogies


def evaluate_analogies(
    vectors: Vectors, path: str, restrict: int = 30000, case_insensitive: bool = True
) -> dict:
    """Accuracy of 3CosAdd on a questions-words.txt style file, as gensim computes it.

    Only the first ``restrict`` words are used, both to look up question words and
    as candidate answers. With ``case_insensitive`` words are compared by
    ``str.upper()`` and the first (most frequent) case variant gives the vector.
    A question with a word outside that vocabulary is skipped and counted as OOV;
    otherwise the answer is the nearest word (cosine) to ``b - a + c`` other than
    a, b, c and their case variants. Accuracies are over answered questions (0.0
    when none); ``oov_rate`` is a fraction of all questions.

    Parameters
    ----------
    vectors
        The word vectors (:meth:`Model.keyed_vectors` or :func:`read_vectors`).
    path
        The questions file (``: section`` lines, then ``a b c d`` lines).
    restrict
        How many of the most frequent words take part.
    case_insensitive
        Compare words by ``str.upper()``.

    Returns
    -------
    dict
        The overall and per-section accuracies, and the out-of-vocabulary counts;
        for a file with ``gram…`` sections and others (the Google set), also the
        ``semantic`` and ``syntactic`` halves' counts and accuracies.
    """
    if restrict < 1:
        raise HSW2VError("restrict must be positive")
    sections = _parse_analogies(path)
    n = min(restrict, len(vectors))
    ok, group = _vocab(vectors.words[:n], case_insensitive)
    fold = str.upper if case_insensitive else (lambda w: w)

    # Questions in vocabulary, as rows of their key's first occurrence.
    rows: list[list[int]] = []
    owner: list[int] = []  # section index of each answered question
    oov = [0] * len(sections)
    for s, (_, questions) in enumerate(sections):
        for _, words in questions:
            r = [ok.get(fold(w), -1) for w in words]
            if -1 in r:
                oov[s] += 1
            else:
                rows.append(r)
                owner.append(s)

    right = np.zeros(len(rows), dtype=bool)
    if rows:
        q = np.asarray(rows, dtype=np.int64)
        right = _solve(vectors.unit[:n], group, q)

    counts = np.zeros((len(sections), 2), dtype=np.int64)  # [correct, incorrect]
    np.add.at(counts, (np.asarray(owner, dtype=np.int64), (~right).astype(np.int64)), 1)
    out_sections = []
    for s, (name, _) in enumerate(sections):
        c, i = int(counts[s, 0]), int(counts[s, 1])
        out_sections.append(
            {"section": name, "correct": c, "incorrect": i, "oov": oov[s], "accuracy": _ratio(c, c + i)}
        )
    correct, incorrect, n_oov = int(counts[:, 0].sum()), int(counts[:, 1].sum()), sum(oov)
    return {
        "sections": out_sections,
        **_halves(out_sections),
        "correct": correct,
        "incorrect": incorrect,
        "oov": n_oov,
        "accuracy": _ratio(correct, correct + incorrect),
        "oov_rate": _ratio(n_oov, correct + incorrect + n_oov),
    }


SYNTACTIC_PREFIX = "gram"
"""The Google set's syntactic sections are named ``gram1-adjective-to-adverb`` and on;
the others (capitals, currencies, cities, family) are its semantic half."""


def _halves(sections: list[dict]) -> dict:
    """The semantic and syntactic halves' totals (Mikolov et al. 2013), as a section's
    counts, where the file has sections of both kinds (the Google set); else none."""
    halves = {"semantic": [s for s in sections if not s["section"].startswith(SYNTACTIC_PREFIX)],
              "syntactic": [s for s in sections if s["section"].startswith(SYNTACTIC_PREFIX)]}
    if not all(halves.values()):
        return {}
    out = {}
    for name, part in halves.items():
        c, i = sum(s["correct"] for s in part), sum(s["incorrect"] for s in part)
        out[name] = {"correct": c, "incorrect": i, "oov": sum(s["oov"] for s in part),
                     "accuracy": _ratio(c, c + i)}
    return out


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def _solve(unit: np.ndarray, group: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether 3CosAdd answers each question ``q[i] = (a, b, c, d)`` (rows) with ``d``.

    Rows sharing a's, b's or c's key are never the answer. gensim only looks at
    its top 5 candidates after removing a, b and c themselves, so questions whose
    keys have 5 or more other case variants (or no eligible candidate) are
    replayed exactly by ``_solve_like_gensim``.
    """
    n = len(unit)
    sizes = np.bincount(group, minlength=n)
    members: dict[int, np.ndarray] = {
        int(g): np.flatnonzero(group == g) for g in np.flatnonzero(sizes > 1)
    }
    right = np.zeros(len(q), dtype=bool)
    batch = max(1, min(1024, _SCORE_BUDGET // max(n, 1)))
    for start in range(0, len(q), batch):
        qb = q[start : start + batch]
        query = unit[qb[:, 1]] + unit[qb[:, 2]] - unit[qb[:, 0]]
        norms = np.linalg.norm(query, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        scores = (query / norms) @ unit.T
        idx = np.arange(len(qb))
        for col in range(3):
            scores[idx, qb[:, col]] = -np.inf
        variants = np.zeros(len(qb), dtype=np.int64)  # other rows sharing a key of a, b, c
        for i in np.flatnonzero((sizes[qb[:, :3]] > 1).any(axis=1)):
            for g in set(qb[i, :3].tolist()):
                if g in members:
                    scores[i, members[g]] = -np.inf
                    variants[i] += len(members[g]) - 1
        best = scores.argmax(axis=1)
        hit = group[best] == qb[:, 3]
        hopeless = np.isneginf(scores[idx, best])
        for i in np.flatnonzero((variants >= 5) | hopeless):
            hit[i] = _solve_like_gensim(unit, group, qb[i])
        right[start : start + len(qb)] = hit
    return right


def _solve_like_gensim(unit: np.ndarray, group: np.ndarray, q: np.ndarray) -> bool:
    """gensim's loop: first of the top 5 non-query rows whose key is not a, b or c."""
    a, b, c, d = (int(x) for x in q)
    query = unit[b] + unit[c] - unit[a]
    norm = np.linalg.norm(query)
    scores = unit @ (query / norm if norm > 0 else query)
    order = np.argsort(-scores, kind="stable")
    top = order[~np.isin(order, (a, b, c))][:5]
    predicted = None
    for row in top:
        predicted = int(group[row])
        if predicted not in (a, b, c):
            break
    return predicted == d


# ------------------------------------------------------------------ word pairs


def evaluate_word_pairs(
    vectors: Vectors, path: str, case_insensitive: bool = True, *, restrict: int = 300000
) -> dict:
    """Correlation of cosine similarity with human scores, as gensim computes it.

    Words are looked up among the first ``restrict`` words (by ``str.upper()``
    and first case variant when ``case_insensitive``). Pairs with an unknown
    word are skipped: ``oov`` counts them and ``oov_rate`` is their fraction
    (0..1, not gensim's percent) of all pairs. ``pairs`` is the number used.
    Vectors that build the vectors of unseen words (a subword model's,
    :attr:`Vectors.unseen`) score every pair whose words they can build, as
    Bojanowski et al. (2017) score fastText: ``built`` counts those words.

    Parameters
    ----------
    vectors
        The word vectors.
    path
        Tab-separated ``word1, word2, score`` lines (``#`` comments allowed).
    case_insensitive
        Compare words by ``str.upper()``.
    restrict
        How many of the most frequent words take part.

    Returns
    -------
    dict
        ``pearson``, ``spearman``, ``pairs``, ``oov``, ``oov_rate`` and ``built``.
    """
    if restrict < 1:
        raise HSW2VError("restrict must be positive")
    pairs = _parse_pairs(path)
    ok, _ = _vocab(vectors.words[: min(restrict, len(vectors))], case_insensitive)
    fold = str.upper if case_insensitive else (lambda w: w)
    left, right, gold = [], [], []
    built: dict[str, int] = {}  # an unseen word's row among the built ones
    built_rows: list[np.ndarray] = []

    def row(word: str) -> int | None:
        found = ok.get(fold(word))
        if found is not None or vectors.unseen is None:
            return found
        if word not in built:
            vector = vectors.unseen(word)
            if vector is None:
                return None
            built[word] = len(vectors) + len(built_rows)
            built_rows.append(vector)
        return built[word]

    for w1, w2, score in pairs:
        r1, r2 = row(w1), row(w2)
        if r1 is not None and r2 is not None:
            left.append(r1)
            right.append(r2)
            gold.append(score)
    used, oov = len(gold), len(pairs) - len(gold)
    if used == 0:
        raise HSW2VError(f"{path}: none of the {len(pairs)} pairs has both words in the vocabulary")
    matrix = np.concatenate([vectors.matrix, built_rows]) if built_rows else vectors.matrix
    model = _pair_cosines(matrix, left, right)
    g = np.asarray(gold, dtype=np.float64)
    return {
        "spearman": spearman(g, model),
        "pearson": pearson(g, model),
        "pairs": used,
        "oov": oov,
        "oov_rate": oov / len(pairs),
        "built": len(built_rows),
    }


def _pair_cosines(matrix: np.ndarray, left: list[int], right: list[int]) -> np.ndarray:
    """Cosines of row pairs, rounded exactly as gensim's ``similarity`` rounds them.

    gensim scales each row in float64 and stores it as float32, then takes a
    float32 ``np.dot``. Self-pairs then come out as 1.0 or 1.0 +- 1 ulp depending
    on the row, which decides ties in the Spearman ranks, so it is replayed here
    bit for bit (one BLAS dot per pair: test sets have a few thousand pairs).
    """
    rows = np.unique(np.r_[left, right])
    m = matrix[rows].astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", m, m))
    norms[norms == 0] = 1.0  # gensim leaves zero vectors unscaled
    unit = (m * (1.0 / norms)[:, None]).astype(np.float32)
    pos = {int(r): i for i, r in enumerate(rows)}
    return np.array([float(np.dot(unit[pos[a]], unit[pos[b]])) for a, b in zip(left, right)])


# ---------------------------------------------------------------- correlations


def rank_average(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, ties sharing their average rank (scipy's ``rankdata``)."""
    x = np.asarray(x)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.r_[True, xs[1:] != xs[:-1]]
    bounds = np.flatnonzero(np.r_[starts, True])  # start of each tie group, then n
    avg = (bounds[:-1] + bounds[1:] + 1) / 2.0  # mean of ranks start+1 .. end
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = avg[np.cumsum(starts) - 1]
    return ranks


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation; NaN when fewer than 2 values or either input is constant."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 2:
        return float("nan")
    xm, ym = x - x.mean(), y - y.mean()
    den = math.sqrt(float(xm @ xm) * float(ym @ ym))
    if den == 0:
        return float("nan")
    return float(np.clip(float(xm @ ym) / den, -1.0, 1.0))


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rank correlation with average ranks for ties (scipy's ``spearmanr``)."""
    return pearson(rank_average(x), rank_average(y))


def report_lines(report: dict) -> Iterator[str]:
    """The text form of ``hsw2v evaluate``'s report: per-section and total accuracy, then
    one line per word-pair file."""
    if "analogies" in report:
        a = report["analogies"]
        for sec in a["sections"]:
            yield (f"{sec['section']:<32} {sec['correct']:>6}/{sec['correct'] + sec['incorrect']:<6}"
                   f" {100 * sec['accuracy']:6.2f}%  ({sec['oov']} OOV)")
        for name, part in [(f"{h} half", a[h]) for h in ("semantic", "syntactic") if h in a] + [
                ("analogy total", a)]:
            yield (f"{name:<32} {part['correct']:>6}/{part['correct'] + part['incorrect']:<6}"
                   f" {100 * part['accuracy']:6.2f}%  ({part['oov']} OOV)")
    for p, r in report["pairs"].items():
        yield (f"{p}: spearman {r['spearman']:.4f}, pearson {r['pearson']:.4f}, "
               f"{r['pairs']} pairs, OOV {100 * r['oov_rate']:.1f}%"
               + (f", {r['built']} words built from n-grams" if r.get("built") else ""))
