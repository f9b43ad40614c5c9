"""hsw2v.counting.corpus: the counts against Python's, encoding text into a
vocabulary's ids, the token spool, and shards counted as their concatenation."""
from __future__ import annotations

import bz2
import gzip
from collections import Counter

import numpy as np
import pytest
import zstandard

from hsw2v.counting.corpus import TokenSpool, WordTable, count_words
from hsw2v.counting.vocab import Vocab
from hsw2v.text.reader import iter_blocks
from tests.helpers import random_text


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


@pytest.mark.parametrize("n", [2, 3, 7])
def test_spool_parts_are_contiguous_and_read_as_their_blocks(tmp_path, n):
    """TokenSpool.parts cuts the blocks into n runs in order, each cut at the block
    start nearest k/n of the spool's bytes (brute force over every start); each
    part read alone gives the same blocks as reading them all."""
    rng = np.random.default_rng(n)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(random_text(rng, int(rng.integers(1, 60))).replace("\n", " ")
                              for _ in range(400)) + "\n")
    with TokenSpool() as spool:
        counts = count_words(str(path), spool=spool, block_bytes=300)
        type_ids = counts.spool_ids(counts.type_ids(min_count=1))
        every = list(spool.blocks(type_ids))
        parts = spool.parts(n)
        assert len(parts) == n and len(every) > 3 * n
        sizes = np.diff(np.append(np.asarray(spool.starts), spool.bytes))
        starts = np.concatenate([[0], np.cumsum(sizes)])
        assert [first for _, first, _ in parts] == sorted(first for _, first, _ in parts)
        assert sum(count for *_, count in parts) == len(every)
        for k, (at, first, count) in enumerate(parts):
            assert at == starts[first]
            if k > 0:  # no block start lies nearer the cut's target
                target = k * spool.bytes / n
                assert abs(starts[first] - target) == np.abs(starts - target).min()
            got = list(spool.blocks(type_ids, 64, at, first, count))
            assert len(got) == count
            assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                       for a, b in zip(got, every[first:first + count]))


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
