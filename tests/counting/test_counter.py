"""hsw2v.counting.counter: counting tables that grow, several threads counting as
one, bounded memory that spills and stays exact, and its errors."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from hsw2v.counting.corpus import TokenSpool, WordTable, count_words
from hsw2v.errors import HSW2VError
from hsw2v.text.reader import iter_blocks


def test_many_types_grow_the_table(tmp_path):
    words = [f"w{i}" for i in range(300_000)] * 2
    path = tmp_path / "many.txt"
    path.write_text(" ".join(words))
    counts = count_words(str(path))
    assert len(counts) == 300_000 and counts.tokens == 600_000
    assert set(counts.counts.tolist()) == {2}
    vocab = counts.to_vocab(min_count=1, max_vocab=10)
    assert vocab.words == [f"w{i}" for i in range(10)]  # ties: first occurrence first


@pytest.mark.parametrize(("threads", "min_count"), [(2, 1), (3, 1), (2, 3), (4, 3)])
def test_threads_count_exactly_as_one(tmp_path, threads, min_count):
    """Several threads, each counting blocks into its own table, then merged (the
    largest table takes in the others' words it holds; two or more others merge
    the rest by partition): the same words, counts and order of first occurrence
    as Counter over the text, and a spool that decodes to the text's blocks
    (written in order)."""
    rng = np.random.default_rng(threads)
    ranks = np.minimum(rng.zipf(1.2, 60_000), 5_000)
    lines = [" ".join(f"w{r}" for r in ranks[i:i + int(rng.integers(1, 90))])
             for i in range(0, len(ranks), 45)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n")
    want = Counter(path.read_text().split())  # insertion order: first occurrence
    with TokenSpool() as spool:
        counts = count_words(str(path), spool=spool, block_bytes=512, threads=threads,
                             min_count=min_count)
        assert list(counts.as_dict().items()) == [(w, c) for w, c in want.items() if c >= min_count]
        assert counts.tokens == sum(want.values()) and counts.n_types == len(want)
        ids = counts.type_ids(min_count=2)
        table = WordTable(counts.to_vocab(min_count=2).words)
        expected = [table.encode(b) for b in iter_blocks(str(path), block_bytes=512)]
        got = list(spool.blocks(counts.spool_ids(ids)))
        assert len(got) == len(expected) > 100 and len(set(spool.tables)) == threads
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                   for a, b in zip(got, expected))


@pytest.mark.parametrize(("threads", "min_count"), [(1, 1), (2, 1), (2, 3)])
def test_bounded_counting_spills_and_stays_exact(tmp_path, threads, min_count):
    """With 4 MiB for the tables, 600k tokens of 225k types spill to disk several
    times and merge from there: the words, counts and first occurrences equal
    Counter's over the text, and the spool still decodes to the text's blocks."""
    import hsw2v.counting.counter

    rng = np.random.default_rng(11)
    ranks = rng.zipf(1.05, 600_000) % 400_000
    text = "\n".join(" ".join(f"w{r}" for r in ranks[i:i + 700]) for i in range(0, 600_000, 700))
    path = tmp_path / "c.txt"
    path.write_text(text + "\n")
    want = Counter(text.split())
    spills = []
    real_spill = hsw2v.counting.counter.Spill

    class CountedSpill(real_spill):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            spills.append(self.n)

    with TokenSpool() as spool, pytest.MonkeyPatch.context() as mp:
        mp.setattr(hsw2v.counting.corpus, "Spill", CountedSpill)
        counts = count_words(str(path), spool=spool, block_bytes=1 << 16, threads=threads,
                             min_count=min_count, memory=4 << 20)
        assert len(spills) > 3, spills  # it did spill, more than once per thread
        kept = {w: c for w, c in want.items() if c >= min_count}
        assert list(counts.as_dict().items()) == list(kept.items())
        assert counts.n_types == len(want) and counts.tokens == 600_000
        ids = counts.type_ids(min_count=4)
        table = WordTable(counts.to_vocab(min_count=4).words)
        expected = [table.encode(b) for b in iter_blocks(str(path), block_bytes=1 << 16)]
        got = list(spool.blocks(counts.spool_ids(ids)))
        assert len(got) == len(expected)
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                   for a, b in zip(got, expected))
        spills.clear()  # without a spool, the merge keeps no id maps: the same counts
        alone = count_words(str(path), block_bytes=1 << 16, threads=threads,
                            min_count=min_count, memory=4 << 20)
        assert len(spills) > 3 and list(alone.as_dict().items()) == list(kept.items())


MEASURE_COUNTING = """
import sys, threading, time
from hsw2v.counting.corpus import TokenSpool, count_words
from hsw2v.text.reader import corpus_files

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

files = corpus_files([sys.argv[1]])
count_words(files, min_count=3, threads=2, memory=8 << 20)  # load every kernel first
time.sleep(0.2)
spool = TokenSpool() if sys.argv[3] == "spool" else None
before, peak, done = rss(), [0], threading.Event()

def watch():
    while not done.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.001)

watcher = threading.Thread(target=watch)
watcher.start()
memory = int(sys.argv[2]) << 20 if sys.argv[2] != "0" else None
counts = count_words(files, min_count=3, threads=2, memory=memory, spool=spool)
done.set()
watcher.join()
print(peak[0] - before, counts.n_types)
print(*sorted(counts.to_vocab(min_count=3).words))
"""


@pytest.mark.newest_only
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.parametrize("spool", ["spool", "no-spool"])
def test_count_memory_bounds_the_resident_set(tmp_path, spool):
    """In a real process, counting 6M tokens of about 1.7M types: unbounded, the
    tables grow by about 115 MiB; with 48 MiB they spill and the resident set
    grows by at most 5% more than 48 MiB (the spool's id maps of every spilled
    table included), and the vocabulary is the same."""
    rng = np.random.default_rng(7)
    ranks = rng.zipf(1.1, 6_000_000) % 10**9
    path = tmp_path / "zipf.txt"
    lines = (" ".join(f"{r:x}" for r in ranks[j:j + 1000]) + "\n" for j in range(0, len(ranks), 1000))
    with open(path, "w") as f:
        f.writelines(lines)
    runs = {}
    for budget in (0, 48):
        out = subprocess.run([sys.executable, "-c", MEASURE_COUNTING, str(path), str(budget), spool],
                             capture_output=True, text=True, check=True, timeout=600).stdout
        growth, n_types = out.split("\n")[0].split()
        runs[budget] = (int(growth), int(n_types), out.split("\n")[1])
    assert runs[0][1] == runs[48][1] > 1_500_000
    assert runs[0][2] == runs[48][2]  # the same vocabulary, exactly
    assert runs[0][0] > 1.5 * (48 << 20), runs  # about 115 MiB
    assert runs[48][0] < 1.05 * (48 << 20), runs


@pytest.mark.parametrize("threads", [2, 3])
def test_an_error_in_one_counting_thread_stops_them_all(tmp_path, threads):
    """Invalid UTF-8 deep in the corpus, with threads waiting for their turn to
    write the spool: one error naming the byte offset, not a hang."""
    good = ("w1 w2 w3 " * 40 + "\n").encode()
    path = tmp_path / "c.txt"
    path.write_bytes(good * 200 + b"bad \xff word\n" + good * 200)
    with TokenSpool() as spool, pytest.raises(HSW2VError, match=f"invalid UTF-8 at byte {len(good) * 200 + 4}"):
        count_words(str(path), spool=spool, block_bytes=256, threads=threads)


def test_too_many_types_is_one_clear_error(tmp_path, monkeypatch):
    """Type ids are int32: counting stops with one line before a table would hold
    more types than MAX_TYPES (lowered here to 1,000 to reach it)."""
    import hsw2v.counting.corpus

    path = tmp_path / "c.txt"
    path.write_text(" ".join(f"w{i}" for i in range(3000)) + "\n")
    monkeypatch.setattr(hsw2v.counting.corpus, "MAX_TYPES", 1000)
    with pytest.raises(HSW2VError, match="distinct words and counting, near the limit of 1,000") as e:
        count_words(str(path), block_bytes=64)
    seen = int(str(e.value).split(": ")[1].split()[0].replace(",", ""))
    assert 900 < seen <= 1000
    monkeypatch.setattr(hsw2v.counting.corpus, "MAX_TYPES", 3100)  # room for them all
    assert len(count_words(str(path), block_bytes=64)) == 3000
