"""hsw2v.evaluation.evaluate against gensim's KeyedVectors evaluations."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.evaluation.evaluate import (
    evaluate_analogies,
    evaluate_word_pairs,
    pearson,
    rank_average,
    spearman,
)
from hsw2v.model.vectors import Vectors
from tests.helpers import SHARED_DATA

DATA = SHARED_DATA


def evaluation_file(name: str) -> Path:
    """A standard evaluation file: the shared copy beside the checkout, else the
    identical one gensim (a test dependency) ships with its tests."""
    if (DATA / name).exists():
        return DATA / name
    return Path(importlib.import_module("gensim.test.utils").datapath(name))


# ----------------------------------------------------------------- fixtures


def planted(seed: int, dim: int = 16) -> tuple[Vectors, list[str]]:
    """~300 words where capital_i ~ country_i + offset and adverb_i ~ adjective_i + offset2.

    Noise makes some analogies right and some wrong. Mixed-case words, pairs of
    words differing only in case, and 8 case variants of "foo" sitting next to the
    answers (to exercise gensim's top-5 window) are included. Returns the vectors
    and a questions-words style text.
    """
    rng = np.random.default_rng(seed)
    vecs: dict[str, np.ndarray] = {}
    off1, off2 = rng.normal(size=dim) * 1.5, rng.normal(size=dim) * 1.5
    for i in range(40):
        base = rng.normal(size=dim)
        vecs[f"Country{i}"] = base
        vecs[f"Capital{i}"] = base + off1 + rng.normal(size=dim) * 0.9
    for i in range(30):
        base = rng.normal(size=dim)
        vecs[f"adj{i}"] = base
        vecs[f"adj{i}ly"] = base + off2 + rng.normal(size=dim) * 0.7
    for i in range(0, 40, 4):  # lower-case twins with different vectors
        vecs[f"capital{i}"] = rng.normal(size=dim)
        vecs[f"country{i + 1}"] = vecs[f"Country{i + 1}"] + rng.normal(size=dim) * 0.3
    foo = ["foo", "Foo", "fOo", "foO", "FOo", "FoO", "fOO", "FOO"]
    for w in foo:  # close to Capital0's neighbourhood
        vecs[w] = vecs["Capital1"] + rng.normal(size=dim) * 0.2
    while len(vecs) < 300:
        vecs[f"filler{len(vecs)}"] = rng.normal(size=dim)
    words = list(vecs)
    rng.shuffle(words)  # arbitrary "frequency" order: which twin comes first varies
    matrix = np.stack([vecs[w] for w in words]).astype(np.float32)

    def case(w: str) -> str:
        return rng.choice([w, w.lower(), w.upper()])

    lines = [": capital-world"]
    for _ in range(150):
        i, j = rng.choice(40, size=2, replace=False)
        lines.append(" ".join(case(w) for w in (f"Country{i}", f"Capital{i}", f"Country{j}", f"Capital{j}")))
    lines += ["", "   "]  # blank lines between questions are skipped, as gensim does
    lines.append(": gram-adverbs")
    for _ in range(120):
        i, j = rng.choice(30, size=2, replace=False)
        lines.append(" ".join(case(w) for w in (f"adj{i}", f"adj{i}ly", f"adj{j}", f"adj{j}ly")))
    lines.append(": foo-section")
    for i in range(20):  # foo and its variants are query words; answers near them
        lines.append(f"{case('foo')} Capital1 Country{i} Capital{i}")
        lines.append(f"Country0 FOO Country{i} Capital{i}")
    lines += ["Country1 Capital1 foo FOO", "adj1 adj1ly adj1 adj1ly"]  # answer = query word
    lines.append(": oov-heavy")
    for i in range(10):
        lines.append(f"Country{i} Capital{i} nowhere{i} Capital{i + 1}")
        lines.append(f"adj{i} adj{i}ly Country{i} Capital{i}")
    lines.append(": Xmas-empty-section")
    return Vectors(words, matrix), lines


def gensim_kv(vectors: Vectors):
    gensim_models = importlib.import_module("gensim.models")
    kv = gensim_models.KeyedVectors(vector_size=vectors.dim)
    kv.add_vectors(vectors.words, vectors.matrix)
    return kv


def assert_analogies_match(ours: dict, kv, path: Path, restrict: int, case_insensitive: bool) -> None:
    score, sections = kv.evaluate_word_analogies(
        str(path), restrict_vocab=restrict, case_insensitive=case_insensitive
    )
    total = sections.pop()
    assert total["section"] == "Total accuracy"
    assert [s["section"] for s in ours["sections"]] == [s["section"] for s in sections]
    for mine, theirs in zip(ours["sections"], sections):
        right, wrong = len(theirs["correct"]), len(theirs["incorrect"])
        assert (mine["correct"], mine["incorrect"]) == (right, wrong), mine
        assert mine["accuracy"] == (right / (right + wrong) if right + wrong else 0.0)
    assert ours["correct"] == len(total["correct"])
    assert ours["incorrect"] == len(total["incorrect"])
    assert ours["accuracy"] == pytest.approx(score, abs=1e-12)


def count_questions(lines: list[str]) -> int:
    return sum(1 for line in lines if line.split() and not line.startswith(": "))


# ------------------------------------------------------------------ analogies


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("restrict", [300, 200])
@pytest.mark.parametrize("case_insensitive", [True, False])
def test_analogies_match_gensim(tmp_path, seed, restrict, case_insensitive):
    vectors, lines = planted(seed)
    path = tmp_path / "q.txt"
    path.write_text("\n".join(lines) + "\n")
    ours = evaluate_analogies(vectors, str(path), restrict=restrict, case_insensitive=case_insensitive)
    assert_analogies_match(ours, gensim_kv(vectors), path, restrict, case_insensitive)
    n = count_questions(lines)
    assert ours["correct"] + ours["incorrect"] + ours["oov"] == n
    assert ours["oov_rate"] == pytest.approx(ours["oov"] / n)
    assert ours["oov"] == sum(s["oov"] for s in ours["sections"])
    by_name = {s["section"]: s for s in ours["sections"]}
    assert by_name["Xmas-empty-section"] == {
        "section": "Xmas-empty-section", "correct": 0, "incorrect": 0, "oov": 0, "accuracy": 0.0
    }
    if case_insensitive and restrict == 300:
        assert 0 < by_name["capital-world"]["correct"] < 150  # the plant is neither trivial nor hopeless
        assert by_name["oov-heavy"]["oov"] == 10


def test_analogies_small_batches_and_tiny_vocab(tmp_path, monkeypatch):
    """Batching does not change results; a vocab with no eligible answer is handled like gensim."""
    import hsw2v.evaluation.evaluate as ev

    vectors, lines = planted(3)
    path = tmp_path / "q.txt"
    path.write_text("\n".join(lines))
    full = evaluate_analogies(vectors, str(path))
    monkeypatch.setattr(ev, "_SCORE_BUDGET", 300 * 7)  # batches of 7 questions
    assert evaluate_analogies(vectors, str(path)) == full

    tiny = Vectors(["a", "b", "c", "C", "d"], np.eye(5, dtype=np.float32) + 0.1)
    # With restrict=4 only "C" is a candidate: gensim then "predicts" C, right for "a b c c".
    path.write_text(": s\na b c d\nb a c C\na b c c\nC a b d\n")
    for restrict in (4, 5):
        ours = evaluate_analogies(tiny, str(path), restrict=restrict)
        assert_analogies_match(ours, gensim_kv(tiny), path, restrict, True)


def test_analogies_real_file(tmp_path):
    questions = evaluation_file("questions-words.txt")
    kv_mod = importlib.import_module("gensim.models")
    lines = questions.read_text().splitlines()
    rng = np.random.default_rng(7)
    dim = 32
    # Words as they appear, some lower-cased twins, and filler; section offsets plant structure.
    section_of: dict[str, list[int]] = {}
    s = -1
    order: list[str] = []
    for line in lines:
        if line.startswith(": "):
            s += 1
            continue
        for k, w in enumerate(line.split()):
            order.append(w)
            if k % 2:
                section_of.setdefault(w, []).append(s)
    offsets = rng.normal(size=(s + 1, dim)) * 0.8
    vocab = list(dict.fromkeys(order))
    vocab += [w.lower() for w in vocab[::3] if w.lower() != w]
    vocab += [f"filler{i}" for i in range(3000 - len(vocab))]
    vocab = list(dict.fromkeys(vocab))
    rng.shuffle(vocab)
    matrix = rng.normal(size=(len(vocab), dim))
    for i, w in enumerate(vocab):
        for sec in set(section_of.get(w, ())):
            matrix[i] += offsets[sec]
    vectors = Vectors(vocab, matrix.astype(np.float32))
    kv = kv_mod.KeyedVectors(vector_size=dim)
    kv.add_vectors(vectors.words, vectors.matrix)
    ours = evaluate_analogies(vectors, str(questions), restrict=2500)
    assert ours["correct"] > 0 and ours["oov"] > 0
    assert_analogies_match(ours, kv, questions, 2500, True)
    _, theirs = kv.evaluate_word_analogies(str(questions), restrict_vocab=2500)
    for half, syntactic in (("semantic", False), ("syntactic", True)):  # (gensim's sections)
        part = [t for t in theirs if t["section"] != "Total accuracy"
                and t["section"].startswith("gram") == syntactic]
        assert ours[half]["correct"] == sum(len(t["correct"]) for t in part) > 0
        assert ours[half]["incorrect"] == sum(len(t["incorrect"]) for t in part)
    assert ours["semantic"]["correct"] + ours["syntactic"]["correct"] == ours["correct"]


# ----------------------------------------------------------------- word pairs


def pair_lines(vectors: Vectors, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    u = vectors.unit
    lines = ["# comment", "# Word 1\tWord 2\tHuman (mean)"]
    for _ in range(120):
        i, j = rng.integers(len(vectors), size=2)
        score = round(float(u[i] @ u[j]) * 5 + 5 + rng.normal(), 1)  # rounding makes ties
        w1, w2 = (rng.choice([w, w.upper(), w.lower()]) for w in (vectors.words[i], vectors.words[j]))
        lines.append(f"{w1}\t{w2}\t{score}")
    lines += [lines[5], lines[9], f"{vectors.words[3]}\t{vectors.words[3]}\t10.0", "", "zzz_unknown\tfoo\t3"]
    lines += ["Country1\tnope\t2.5"]
    return lines


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case_insensitive", [True, False])
def test_word_pairs_match_gensim(tmp_path, seed, case_insensitive):
    vectors, _ = planted(seed)
    path = tmp_path / "pairs.tsv"
    lines = pair_lines(vectors, seed)
    path.write_text("\n".join(lines) + "\n")
    ours = evaluate_word_pairs(vectors, str(path), case_insensitive=case_insensitive)
    pearson, spear, oov_pct = gensim_kv(vectors).evaluate_word_pairs(str(path), case_insensitive=case_insensitive)
    if case_insensitive:  # both functions' defaults
        assert evaluate_word_pairs(vectors, str(path)) == ours
        assert gensim_kv(vectors).evaluate_word_pairs(str(path))[0] == pearson
    assert ours["spearman"] == pytest.approx(spear[0], abs=1e-6)
    assert ours["pearson"] == pytest.approx(pearson[0], abs=1e-6)
    assert ours["oov_rate"] * 100 == pytest.approx(oov_pct, abs=1e-9)
    assert ours["pairs"] + ours["oov"] == sum(1 for x in lines if x and not x.startswith("#"))
    assert ours["oov"] >= 2


@pytest.mark.parametrize("name", ["wordsim353.tsv", "simlex999.txt"])
def test_word_pairs_real_files(name):
    path = evaluation_file(name)
    kv_mod = importlib.import_module("gensim.models")
    words = re.findall(r"[^\t\n]+", "\n".join(
        "\t".join(line.split("\t")[:2]) for line in path.read_text().splitlines() if not line.startswith("#")
    ))
    vocab = list(dict.fromkeys(words))
    vocab = vocab[: int(len(vocab) * 0.9)] + [f"filler{i}" for i in range(200)]  # some OOV
    rng = np.random.default_rng(11)
    vectors = Vectors(vocab, rng.normal(size=(len(vocab), 24)).astype(np.float32))
    kv = kv_mod.KeyedVectors(vector_size=24)
    kv.add_vectors(vectors.words, vectors.matrix)
    ours = evaluate_word_pairs(vectors, str(path))
    _pearson, spear, oov_pct = kv.evaluate_word_pairs(str(path))
    assert ours["spearman"] == pytest.approx(spear[0], abs=1e-6)
    assert ours["oov_rate"] * 100 == pytest.approx(oov_pct, abs=1e-9)
    assert ours["oov"] > 0


# ---------------------------------------------------------------- correlations


def test_spearman_matches_scipy_with_ties():
    stats = importlib.import_module("scipy.stats")
    rng = np.random.default_rng(5)
    for n in (2, 3, 10, 200):
        x = rng.integers(0, 5, size=n).astype(float)  # many ties
        y = np.round(x + rng.normal(size=n), 1)
        np.testing.assert_allclose(rank_average(x), stats.rankdata(x))
        if np.ptp(x) and np.ptp(y):
            assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert spearman(np.array([1.0, 2, 2, 3]), np.array([3.0, 2, 2, 1])) == pytest.approx(-1.0)
    assert np.isnan(spearman(np.ones(4), np.arange(4.0)))


# --------------------------------------------------------------------- errors


@pytest.fixture
def small() -> Vectors:
    return Vectors(["a", "b", "c", "d"], np.eye(4, dtype=np.float32))


def one_line(msg: str) -> bool:
    return "\n" not in msg and msg.strip() == msg and msg


def test_missing_files(small, tmp_path):
    for fn in (evaluate_analogies, evaluate_word_pairs):
        with pytest.raises(HSW2VError, match="not found") as e:
            fn(small, str(tmp_path / "nope.txt"))
        assert one_line(str(e.value))


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("", "no analogy questions"),
        ("\n: only-a-header\n\n", "no analogy questions"),
        (": s\na b c d\na b c\n", r"q\.txt:3: expected 4 words"),
        (": s\na b c d e\n", r"q\.txt:2: expected 4 words"),
        ("a b c d\n", r"q\.txt:1: question before the first"),
    ],
)
def test_bad_analogy_files(small, tmp_path, text, pattern):
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(HSW2VError, match=pattern) as e:
        evaluate_analogies(small, str(path))
    assert one_line(str(e.value))


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("", "no word pairs"),
        ("# only a comment\n\n", "no word pairs"),
        ("a\tb\t1\na b 2\n", r"p\.tsv:2: expected 'word1<TAB>word2<TAB>score', got 1 fields"),
        ("# c\na\tb\t1\tx\n", r"p\.tsv:2: expected"),
        ("a\tb\tfoo\n", r"p\.tsv:1: score 'foo' is not a number"),
        ("a\tb\tnan\n", r"p\.tsv:1: score 'nan' is not finite"),
        ("x\ty\t1\n", "none of the 1 pairs"),
    ],
)
def test_bad_pair_files(small, tmp_path, text, pattern):
    path = tmp_path / "p.tsv"
    path.write_text(text)
    with pytest.raises(HSW2VError, match=pattern) as e:
        evaluate_word_pairs(small, str(path))
    assert one_line(str(e.value))


def test_restrict_must_be_positive(small, tmp_path):
    questions, pairs = tmp_path / "q.txt", tmp_path / "p.tsv"
    questions.write_text(": s\na b c d\n")
    pairs.write_text("a\ta\t1\nb\ta\t2\n")
    for fn, path in ((evaluate_analogies, questions), (evaluate_word_pairs, pairs)):
        with pytest.raises(HSW2VError, match="^restrict must be positive$"):
            fn(small, str(path), restrict=0)
    assert evaluate_analogies(small, str(questions), restrict=1)["oov"] == 1
    assert evaluate_word_pairs(small, str(pairs), restrict=1)["pairs"] == 1


def test_unreadable_files_name_the_file_and_the_reason(small, tmp_path):
    (tmp_path / "latin1.txt").write_bytes(b": s\ncaf\xe9 a b c\n")
    for fn, what in ((evaluate_analogies, "analogy"), (evaluate_word_pairs, "word-pair")):
        with pytest.raises(HSW2VError, match=f"^{what} file not found: "):
            fn(small, str(tmp_path / "nope.txt"))
        with pytest.raises(HSW2VError, match=f"^cannot read {what} file .*: Is a directory$"):
            fn(small, str(tmp_path))
        with pytest.raises(HSW2VError, match=f"^{what} file .*latin1.txt is not UTF-8 text: "):
            fn(small, str(tmp_path / "latin1.txt"))


def test_defaults_are_gensims():
    """Case folding defaults to gensim's, and so does the word pairs' restrict; the
    analogies' restrict is word2vec.c's compute-accuracy threshold, 30000."""
    import inspect

    kv = importlib.import_module("gensim.models").KeyedVectors
    theirs = inspect.signature(kv.evaluate_word_analogies).parameters
    ours = inspect.signature(evaluate_analogies).parameters
    assert ours["case_insensitive"].default == theirs["case_insensitive"].default
    theirs = inspect.signature(kv.evaluate_word_pairs).parameters
    ours = inspect.signature(evaluate_word_pairs).parameters
    assert ours["restrict"].default == theirs["restrict_vocab"].default
    assert ours["case_insensitive"].default == theirs["case_insensitive"].default


def test_all_questions_out_of_vocabulary(small, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text(": s\na b c zz\n: t\nyy a b c\n")
    out = evaluate_analogies(small, str(path))
    assert (out["correct"], out["incorrect"], out["oov"]) == (0, 0, 2)
    assert out["accuracy"] == 0.0 and out["oov_rate"] == 1.0
    assert [s["oov"] for s in out["sections"]] == [1, 1]


def test_exact_replay_only_where_case_variants_need_it(tmp_path, monkeypatch):
    """The batched 3CosAdd answers every question itself, except those where a, b
    or c has 5 or more other case variants (gensim's top-5 window then matters);
    only those are replayed one by one, and the results still equal gensim's."""
    import hsw2v.evaluation.evaluate as ev

    planted_vectors, lines = planted(1)
    # "bar" in 6 spellings (5 others: replayed), "qux" in 5 (4 others: not replayed)
    rng = np.random.default_rng(4)
    extra = ["bar", "Bar", "bAr", "baR", "BAr", "BAR", "qux", "Qux", "qUx", "quX", "QUX"]
    near = planted_vectors.matrix[planted_vectors.words.index("Capital2")]
    vectors = Vectors(planted_vectors.words + extra, np.vstack(
        [planted_vectors.matrix, near + rng.normal(size=(len(extra), near.size)) * 0.2]
    ).astype(np.float32))
    lines += [": variants"] + [f"{w} Capital2 Country{i} Capital{i}"
                               for w in ("bar", "QUX") for i in range(3, 9)]
    path = tmp_path / "q.txt"
    path.write_text("\n".join(lines) + "\n")
    replayed = []
    replay = ev._solve_like_gensim
    monkeypatch.setattr(ev, "_solve_like_gensim", lambda *a: replayed.append(1) or replay(*a))
    ours = evaluate_analogies(vectors, str(path))
    assert_analogies_match(ours, gensim_kv(vectors), path, 30000, True)
    keys = [w.upper() for w in vectors.words]
    variants = {k: keys.count(k) - 1 for k in keys}
    need = sum(1 for line in lines if len(line.split()) == 4 and not line.startswith(": ")
               and all(w.upper() in variants for w in line.split())
               and sum(variants[k] for k in {w.upper() for w in line.split()[:3]}) >= 5)
    assert need > 0 and len(replayed) == need


def test_zero_vectors_score_zero_like_gensim(tmp_path):
    vectors = Vectors(["a", "b", "c", "z"], np.array(
        [[1, 0], [0.6, 0.8], [-1, 0.2], [0, 0]], dtype=np.float32))
    path = tmp_path / "p.tsv"
    path.write_text("a\tb\t9\nb\tc\t2\na\tc\t1\nz\ta\t5\nz\tc\t4\n")
    ours = evaluate_word_pairs(vectors, str(path))
    pearson_, spear, _ = gensim_kv(vectors).evaluate_word_pairs(str(path))
    assert ours["spearman"] == pytest.approx(spear[0], abs=1e-9)
    assert ours["pearson"] == pytest.approx(pearson_[0], abs=1e-9)


def test_pearson_is_clipped_to_one_and_nan_below_two_values():
    """Exactly linear data give |r| = 1 at most, though rounding in the plain
    formula (written here) goes past 1 for many of these inputs."""
    import math

    rng = np.random.default_rng(0)
    past = 0
    for _ in range(200):
        x = rng.normal(size=int(rng.integers(2, 30)))
        for y, sign in ((x * 3.7 + 1.1, 1), (-x * 2.3 + 0.4, -1)):
            xm, ym = x - x.mean(), y - y.mean()
            past += abs(float(xm @ ym) / math.sqrt(float(xm @ xm) * float(ym @ ym))) > 1
            r = pearson(x, y)
            assert abs(r) <= 1 and r == pytest.approx(sign)
    assert past > 50
    assert math.isnan(pearson(np.array([1.0]), np.array([2.0])))
