"""Vocab: construction, min_count/max_vocab pruning and word2vec.c's vocab file,
checked against brute-force references written here."""
from __future__ import annotations

import errno
import os
import random
from collections import Counter

import numpy as np
import pytest

from hsw2v.counting.vocab import Vocab, pack_words
from hsw2v.errors import HSW2VError


def ref_prune(counts: dict, min_count: int, max_vocab: int | None):
    """Words with count >= min_count, count descending, insertion order on ties."""
    kept = [(w, c) for w, c in counts.items() if c >= min_count]
    kept = sorted(kept, key=lambda wc: -wc[1])  # sorted() is stable
    return kept if max_vocab is None else kept[:max_vocab]


def as_pairs(v: Vocab):
    return list(zip(v.words, v.counts.tolist()))


def test_pack_words_is_utf8_with_offsets():
    words = ["a", "naïve", "日本", ""]
    data, offsets = pack_words(words)
    raw = b"".join(w.encode("utf-8") for w in words)
    assert data.tobytes() == raw and offsets.tolist() == [0, 1, 7, 13, 13]
    assert all(raw[offsets[i]:offsets[i + 1]].decode("utf-8") == w for i, w in enumerate(words))


def test_vocab_basics_and_int64_counts():
    v = Vocab(["b", "a"], np.array([3, 2], dtype=np.int32))
    assert v.counts.dtype == np.int64 and v.counts.tolist() == [3, 2]
    assert v.index == {"b": 0, "a": 1} and len(v) == 2 and "a" in v and "c" not in v
    assert v.total == 5 and isinstance(v.total, int)
    assert Vocab(["x"], [2.0]).counts.dtype == np.int64


def test_vocab_refuses_mismatched_lengths_and_repeated_words():
    with pytest.raises(HSW2VError) as e:
        Vocab(["a", "b"], [1])
    assert str(e.value) == "vocab: words and counts differ in length"
    with pytest.raises(HSW2VError) as e:
        Vocab(["a", "b", "a"], [3, 2, 1])
    assert str(e.value) == "vocab: a word appears twice"


def test_from_counts_defaults_to_word2vec_min_count_5():
    counts = Counter({"four": 4, "five": 5, "six": 6, "many": 100})
    assert as_pairs(Vocab.from_counts(counts)) == [("many", 100), ("six", 6), ("five", 5)]
    v = Vocab(["many", "six", "five", "four"], [100, 6, 5, 4])
    assert as_pairs(v.pruned()) == [("many", 100), ("six", 6), ("five", 5)]


@pytest.mark.parametrize("seed", range(5))
def test_from_counts_and_pruned_match_brute_force(seed):
    rng = random.Random(seed)
    counts = {f"w{i}": rng.randint(1, 8) for i in range(60)}  # many ties
    for min_count in (1, 3, 8, 9):
        for max_vocab in (None, 1, 7, 59, 60, 100):
            want = ref_prune(counts, min_count, max_vocab)
            assert as_pairs(Vocab.from_counts(counts, min_count, max_vocab)) == want
            full = Vocab.from_counts(counts, 1)
            assert as_pairs(full.pruned(min_count, max_vocab)) == ref_prune(
                dict(as_pairs(full)), min_count, max_vocab)
            assert as_pairs(full.pruned(min_count=min_count, max_vocab=max_vocab)) == want


def test_from_counts_decodes_byte_words():
    counts = {"naïve".encode(): 7, b"the": 9, "日本".encode(): 7}
    v = Vocab.from_counts(counts, min_count=1)
    assert v.words == ["the", "naïve", "日本"] and v.counts.tolist() == [9, 7, 7]


def test_save_writes_word_count_lines(tmp_path):
    path = tmp_path / "vocab.txt"
    Vocab(["the", "naïve", "日本"], [9, 7, 7]).save(str(path))
    assert path.read_bytes() == "the 9\nnaïve 7\n日本 7\n".encode()


def test_load_sorts_by_count_keeping_file_order_on_ties(tmp_path):
    """Many ties (an unstable sort would reorder them) and blank lines anywhere."""
    rng = random.Random(1)
    pairs = [(f"w{i}", rng.choice([1, 2, 3])) for i in range(200)]
    lines = [f"{w} {c}" for w, c in pairs]
    lines.insert(50, "")
    lines.insert(120, "   ")
    path = tmp_path / "vocab.txt"
    path.write_text("\n\n" + "\n".join(lines) + "\n\n", encoding="utf-8")
    v = Vocab.load(str(path))
    assert as_pairs(v) == sorted(pairs, key=lambda wc: -wc[1])
    assert v.counts.dtype == np.int64


def test_load_round_trips_save(tmp_path):
    path = tmp_path / "vocab.txt"
    v = Vocab(["the", "naïve", "日本", "x"], [2**40, 7, 7, 1])
    v.save(str(path))
    back = Vocab.load(str(path))
    assert back.words == v.words and back.counts.tolist() == v.counts.tolist()


def load_error(tmp_path, content: bytes) -> str:
    path = tmp_path / "vocab.txt"
    path.write_bytes(content)
    with pytest.raises(HSW2VError) as e:
        Vocab.load(str(path))
    return str(e.value).replace(str(path), "PATH")


@pytest.mark.parametrize("content, message", [
    (b"a 1\nb x\n", "PATH:2: expected 'word count', got 'b x'"),
    (b"a 1\n\nb 2 3\n", "PATH:3: expected 'word count', got 'b 2 3'"),
    (b"a\n", "PATH:1: expected 'word count', got 'a'"),
    (b"a -1\n", "PATH:1: expected 'word count', got 'a -1'"),
    (b"", "PATH: no 'word count' lines"),
    (b"\n  \n", "PATH: no 'word count' lines"),
])
def test_load_refuses_malformed_lines(tmp_path, content, message):
    assert load_error(tmp_path, content) == message


def test_load_error_quotes_at_most_60_characters(tmp_path):
    line = "word " + "".join(chr(ord("a") + i % 26) for i in range(95))
    assert load_error(tmp_path, (line + "\n").encode()) == \
        f"PATH:1: expected 'word count', got {line[:60]!r}"


def test_load_refuses_invalid_utf8_naming_the_byte(tmp_path):
    data = "naïve 3\nbad".encode() + b"\xff 2\n"
    at = data.index(b"\xff")
    assert load_error(tmp_path, data) == f"PATH: invalid UTF-8 at byte {at}"


def test_load_refuses_missing_and_unreadable_paths(tmp_path):
    missing = str(tmp_path / "absent.txt")
    with pytest.raises(HSW2VError) as e:
        Vocab.load(missing)
    assert str(e.value) == f"{missing}: no such file"
    with pytest.raises(HSW2VError) as e:
        Vocab.load(str(tmp_path))
    assert str(e.value) == f"{tmp_path}: cannot read: {os.strerror(errno.EISDIR)}"


def test_a_vocabulary_file_round_trips_every_space_like_character(tmp_path):
    """``vocab -o v`` then ``train --read-vocab v``: the words split as the corpus
    reader splits them (ASCII whitespace, ``bytes.split()``), so a word holding any
    other space-like character (U+00A0, U+2028, U+3000, ...) comes back whole
    (hostile round four, item 3)."""
    import sys
    import unicodedata

    from tests.helpers import run_hsw2v

    odd = [chr(c) for c in range(sys.maxunicode + 1)
           if (chr(c).isspace() or unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp", "Cc"))
           and not chr(c).isascii() and not 0xD800 <= c <= 0xDFFF]
    assert "\u00a0" in odd and "\u2028" in odd and "\u3000" in odd and "\x85" in odd
    words = [f"km{c}x" for c in odd] + ["plain", "km"]
    corpus = tmp_path / "c.txt"
    corpus.write_bytes("\n".join(" ".join(words) for _ in range(3)).encode("utf-8"))
    expected = sorted(w.decode("utf-8") for w in corpus.read_bytes().split())  # the reference
    assert len(set(expected)) == len(words)
    r = run_hsw2v(tmp_path, "vocab", "c.txt", "-o", "v.txt", "--min-count", "1")
    assert r.returncode == 0, r.stderr
    assert sorted(Vocab.load(str(tmp_path / "v.txt")).words) == sorted(set(expected))
    r = run_hsw2v(tmp_path, "train", "c.txt", "--read-vocab", "v.txt", "--min-count", "1",
                  "--epochs", "1", "--dim", "8", "-o", "o.txt", "--save-model", "m.npz", "--quiet")
    assert r.returncode == 0, r.stderr
    r = run_hsw2v(tmp_path, "vocab", "--model", "m.npz", "-o", "back.txt")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.txt").read_bytes() == (tmp_path / "v.txt").read_bytes()
