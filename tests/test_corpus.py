import bz2
import gzip
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import zstandard

from hsw2v.counting.corpus import TokenSpool, WordTable, count_words
from hsw2v.counting.vocab import Vocab
from hsw2v.errors import HSW2VError
from hsw2v.text.reader import iter_blocks

WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "  "]


def random_text(rng, n_words):
    vocab = ["a", "bb", "ccc", "dé", "éé", "日本", "x" * 30]
    parts = []
    for _ in range(n_words):
        parts.append(vocab[rng.integers(len(vocab))])
        parts.append(WHITESPACE[rng.integers(len(WHITESPACE))])
    return "".join(parts)


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 20])
def test_blocks_keep_every_word(tmp_path, block):
    text = random_text(np.random.default_rng(block), 3000)
    path = tmp_path / "c.txt"
    path.write_bytes(text.encode())
    blocks = list(iter_blocks(str(path), block_bytes=block))
    last_line_open = bool(text.rsplit("\n", 1)[-1].strip())  # words after the last newline
    assert b"".join(blocks) == text.encode() + (b"\n" if last_line_open else b"")
    for b in blocks[:-1]:
        assert b[-1:].isspace()
    counts = count_words(str(path))
    assert counts.tokens == len(text.split())
    assert counts.as_dict() == Counter(text.split())
    # ids follow first occurrence
    assert [counts.word(i) for i in range(len(counts))] == list(dict.fromkeys(text.split()))


@pytest.mark.parametrize("block", [64, 1000])
def test_blocks_keep_lines_whole(tmp_path, block):
    """A block ends at a newline where one lies in its second half, so lines shorter
    than half a block are never cut; blocks stay near the size asked for."""
    rng = np.random.default_rng(block)
    lines = [" ".join(f"w{k}" for k in rng.integers(0, 50, rng.integers(0, block // 8)))
             for _ in range(300)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines))  # (no newline after the last line)
    blocks = list(iter_blocks(str(path), block_bytes=block))
    assert all(b.endswith(b"\n") for b in blocks)
    assert max(len(b) for b in blocks) <= block
    assert [ln for b in blocks for ln in b.decode().split("\n")[:-1]] == lines


def test_long_line_is_streamed(tmp_path, monkeypatch):
    words = [f"w{i % 97}" for i in range(200_000)]
    path = tmp_path / "line.txt"
    path.write_text(" ".join(words))  # one line, no newline
    sizes = [len(b) for b in iter_blocks(str(path), block_bytes=4096)]
    assert max(sizes) < 4096 + 10
    counts = count_words(str(path))
    assert counts.tokens == 200_000 and counts.counts.sum() == 200_000 and len(counts) == 97


def test_compressed(tmp_path):
    text = "the cat sat\non the mat\n" * 50
    gz, bz = tmp_path / "c.txt.gz", tmp_path / "c.txt.bz2"
    gz.write_bytes(gzip.compress(text.encode()))
    bz.write_bytes(bz2.compress(text.encode()))
    for p in (gz, bz):
        counts = count_words(str(p))
        assert counts.tokens == 300 and counts.as_dict()["the"] == 100


@pytest.mark.parametrize(
    "payload, message",
    [
        (b"good words \xff\xfe bad", "invalid UTF-8 at byte 11"),
        (b"abc \x00\x01\x02 def", "NUL byte"),
        (bytes(range(256)) * 4, "NUL byte"),
    ],
)
def test_rejects_binary_and_invalid_utf8(tmp_path, payload, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(payload)
    with pytest.raises(HSW2VError, match=message):
        count_words(str(path))


def test_corrupt_zstd(tmp_path):
    path = tmp_path / "c.txt.zst"
    data = zstandard.ZstdCompressor().compress(b"a b c\n" * 10000)
    path.write_bytes(data[:len(data) // 2] + b"\xff" * 64 + data[len(data) // 2:])
    with pytest.raises(HSW2VError, match="c.txt.zst: cannot read"):
        count_words(str(path))


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate" * 10)
    with pytest.raises(HSW2VError, match="cannot read"):
        count_words(str(path))


def test_missing_file():
    with pytest.raises(HSW2VError, match="no such file"):
        count_words("/nonexistent/corpus.txt")


def test_giant_token_is_rejected(tmp_path):
    path = tmp_path / "giant.txt"
    path.write_bytes(b"a" * 200_000)
    with pytest.raises(HSW2VError, match="without whitespace"):
        count_words(str(path))


def test_encode_matches_python_split():
    rng = np.random.default_rng(3)
    text = random_text(rng, 5000).encode()
    words = ["a", "ccc", "日本", "éé"]
    table = WordTable(words)
    ids, ends = table.encode(text)
    index = {w: i for i, w in enumerate(words)}
    expected, expected_ends = [], []
    for line in text.decode().split("\n"):
        sent = [index[w] for w in line.split() if w in index]
        if sent:
            expected.extend(sent)
            expected_ends.append(len(expected))
    assert ids.tolist() == expected
    assert ends.tolist() == expected_ends


def test_many_types_grow_the_table(tmp_path):
    words = [f"w{i}" for i in range(300_000)] * 2
    path = tmp_path / "many.txt"
    path.write_text(" ".join(words))
    counts = count_words(str(path))
    assert len(counts) == 300_000 and counts.tokens == 600_000
    assert set(counts.counts.tolist()) == {2}
    vocab = counts.to_vocab(min_count=1, max_vocab=10)
    assert vocab.words == [f"w{i}" for i in range(10)]  # ties: first occurrence first


def test_to_vocab_matches_dict_version(tmp_path):
    text = random_text(np.random.default_rng(9), 4000)
    path = tmp_path / "c.txt"
    path.write_text(text)
    counts = count_words(str(path))
    for min_count in (1, 50, 400):
        a = counts.to_vocab(min_count)
        b = Vocab.from_counts(Counter(text.split()), min_count)
        assert a.words == b.words and a.counts.tolist() == b.counts.tolist()


@pytest.mark.parametrize("block", [16, 333, 1 << 20])
def test_spool_gives_the_blocks_encoding_gives(tmp_path, block):
    """Reading word ids back from the counting pass's spool equals encoding the text
    again: same blocks, ids and sentence ends (lines of dropped words included)."""
    rng = np.random.default_rng(block)
    lines = [random_text(rng, int(rng.integers(0, 40))).replace("\n", " ") for _ in range(300)]
    lines[5] = lines[6] = ""  # empty lines
    lines[7] = "rare1 rare2"  # a line of words under min-count
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n")
    with TokenSpool() as spool:
        counts = count_words(str(path), spool=spool, block_bytes=block)
        vocab = counts.to_vocab(min_count=2)
        assert "rare1" not in vocab.words
        table = WordTable(vocab.words)
        expected = [table.encode(b) for b in iter_blocks(str(path), block_bytes=block)]
        got = list(spool.blocks(counts.spool_ids(counts.type_ids(min_count=2))))
        assert len(got) == len(expected) > (1 if block < 1000 else 0)
        for (ids, ends), (want_ids, want_ends) in zip(got, expected):
            assert np.array_equal(ids, want_ids) and np.array_equal(ends, want_ends)
        for chunk in (1, 8, 100):  # blocks cut across reads, longer than the buffer
            again = list(spool.blocks(counts.spool_ids(counts.type_ids(min_count=2)), chunk=chunk))
            assert len(again) == len(got)
            assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                       for a, b in zip(again, got))


def leb128_bytes(value: int) -> int:
    """Bytes of ``value`` as LEB128 (7 bits a byte)."""
    return max(1, -(-value.bit_length() // 7))


def test_spool_codes_are_compact_and_exact(tmp_path):
    """A Zipfian corpus of 40k types (1-, 2- and 3-byte codes): the spool decodes to
    the text's blocks for every read size (codes cut across reads), and its size is
    exactly the LEB128 length of each token's first-occurrence index + 2, one byte
    per line end and per block end: under 2 bytes a token."""
    rng = np.random.default_rng(3)
    ranks = np.minimum(rng.zipf(1.1, 300_000), 40_000)
    lines = [" ".join(f"w{r}" for r in ranks[i:i + 500]) for i in range(0, len(ranks), 500)]
    path = tmp_path / "zipf.txt"
    path.write_text("\n".join(lines) + "\n")
    first: dict[str, int] = {}
    size = len(lines)  # line ends
    for word in path.read_text().split():
        size += leb128_bytes(first.setdefault(word, len(first)) + 2)
    with TokenSpool() as spool:
        counts = count_words(str(path), spool=spool, block_bytes=1 << 16)
        blocks = list(iter_blocks(str(path), block_bytes=1 << 16))
        assert spool.bytes == size + len(blocks)
        assert spool.bytes < 2 * counts.tokens
        assert max(first.values()) + 2 >= 1 << 14  # some codes take three bytes
        type_ids = counts.spool_ids(counts.type_ids(min_count=1))
        table = WordTable(counts.to_vocab(min_count=1).words)
        expected = [table.encode(b) for b in blocks]
        for chunk in (3, 1000, 4 << 20):
            got = list(spool.blocks(type_ids, chunk=chunk))
            assert len(got) == len(expected)
            assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                       for a, b in zip(got, expected))


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


def test_failed_spool_is_given_up(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("a b c\n" * 100)

    class FullDisk:
        def seek(self, offset, whence=0):
            return offset

        def write(self, data):
            raise OSError(28, "No space left on device")

        def close(self):
            pass

    spool = TokenSpool()
    spool.file.close()
    spool.file = FullDisk()
    counts = count_words(str(path), spool=spool)
    assert counts.tokens == 300 and not spool.usable


def test_shards_count_and_train_as_their_concatenation(tmp_path):
    """A directory of mixed shards (plain, .gz, .bz2, .zst, one without a final newline,
    one in a subdirectory) gives the vocabulary and, with one thread, the very
    vectors of their concatenation (sorted order, each file ending its sentence;
    the corpus is under one block, so the blocks' learning-rate slices agree)."""
    import hsw2v
    from hsw2v.text.reader import corpus_files

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(30)]
    texts = ["\n".join(" ".join(rng.choice(words, 9)) for _ in range(40)) for _ in range(5)]
    shards = tmp_path / "shards"
    (shards / "sub").mkdir(parents=True)
    (shards / "a.txt").write_text(texts[0])  # no final newline
    (shards / "b.txt.gz").write_bytes(gzip.compress((texts[1] + "\n").encode()))
    (shards / "c.txt.bz2").write_bytes(bz2.compress((texts[2] + "\n").encode()))
    half = len(texts[3]) // 2  # two zstd frames, as pzstd or cat of .zst files writes
    frames = [zstandard.ZstdCompressor().compress(t.encode()) for t in (texts[3][:half], texts[3][half:])]
    (shards / "c2.txt.zst").write_bytes(b"".join(frames))
    (shards / "sub" / "d.txt").write_text(texts[4] + "\n")
    whole = tmp_path / "whole.txt"
    whole.write_text("\n".join(texts) + "\n")
    files = corpus_files([str(shards)])
    assert [f[len(str(shards)) + 1:] for f in files] == ["a.txt", "b.txt.gz", "c.txt.bz2",
                                                         "c2.txt.zst", "sub/d.txt"]
    assert count_words(files).as_dict() == count_words(str(whole)).as_dict()
    assert corpus_files([str(shards / "*.txt*")]) == files[:4]
    kw = {"min_count": 1, "dim": 8, "epochs": 2, "threads": 1, "seed": 3, "progress": False}
    a, b = hsw2v.train(files, **kw), hsw2v.train(str(whole), **kw)
    assert a.words == b.words
    assert np.array_equal(a.vectors, b.vectors) and np.array_equal(a.node_vectors, b.node_vectors)
    # a word at the end of a file without a newline does not join the next file's first
    assert texts[0].split()[-1] + texts[1].split()[0] not in count_words(files).as_dict()


def test_corpus_arguments_that_name_nothing(tmp_path):
    from hsw2v.text.reader import corpus_files

    (tmp_path / "empty").mkdir()
    for args, fragment in [([str(tmp_path / "empty")], "holds no files"),
                           ([str(tmp_path / "*.nope")], "no file matches"),
                           ([str(tmp_path / "absent.txt")], "no such file"), (["-", "-"], "once")]:
        with pytest.raises(HSW2VError, match=fragment):
            corpus_files(args)


def test_shards_of_several_blocks_count_as_their_concatenation(tmp_path):
    """Past one block, shards still give the counts, the vocabulary and so the tree
    of their concatenation (the vectors may differ: each file has blocks of its own,
    see docs/guides/commands.md)."""
    from hsw2v.text.reader import BLOCK_BYTES, corpus_files
    from hsw2v.trees.tree import huffman

    rng = np.random.default_rng(9)
    words = np.array([f"w{i}" for i in range(500)])
    shards = tmp_path / "shards"
    shards.mkdir()
    texts = []
    for k in range(3):  # each shard over a block, with lines longer than a block
        lines = [" ".join(rng.choice(words, size=int(n))) for n in rng.integers(10, 400_000, 3)]
        texts.append("\n".join(lines) + "\n")
        (shards / f"{k}.txt").write_text(texts[-1])
    assert all(len(t) > BLOCK_BYTES for t in texts)
    whole = tmp_path / "whole.txt"
    whole.write_text("".join(texts))
    a, b = count_words(corpus_files([str(shards)])), count_words(str(whole))
    assert a.as_dict() == b.as_dict() and a.tokens == b.tokens
    va, vb = a.to_vocab(1, None), b.to_vocab(1, None)
    assert va.words == vb.words  # ties keep the order of first occurrence either way
    assert np.array_equal(huffman(va.counts).children, huffman(vb.counts).children)


def test_a_new_input_format_is_one_entry_in_the_openers_table(tmp_path, monkeypatch):
    """An input format joins by one entry of ``text.reader.openers`` (here .xz, through
    the standard library's lzma): counting reads it like the plain text, and the Dask
    engine's shards take it whole, as the entry says, while plain text is sized in bytes."""
    import lzma

    from hsw2v.distributed.driver import shard_size
    from hsw2v.text import reader

    text = b"the cat sat on the mat\nthe dog sat\n" * 50
    (tmp_path / "c.txt").write_bytes(text)
    (tmp_path / "c.txt.xz").write_bytes(lzma.compress(text))
    monkeypatch.setitem(reader.openers, ".xz",
                        reader.Opener(lambda path: lzma.open(path, "rb"), slices=False))
    plain = count_words(str(tmp_path / "c.txt"), progress=False)
    packed = count_words(str(tmp_path / "c.txt.xz"), progress=False)
    words = lambda c: {c.word(i): int(c.counts[i]) for i in range(len(c))}
    assert words(packed) == words(plain) == {w.decode(): n for w, n in Counter(text.split()).items()}
    assert shard_size(str(tmp_path / "c.txt.xz"), packed) == (packed.tokens, -1)
    assert shard_size(str(tmp_path / "c.txt"), plain) == (plain.tokens, len(text))

