"""hsw2v.text.reader: text read in blocks that keep every word and line (plain and
compressed, long lines streamed), corpus arguments, the openers table, and files
that are not text refused in one line."""
from __future__ import annotations

import bz2
import gzip
from collections import Counter

import numpy as np
import pytest
import zstandard

from hsw2v.counting.corpus import count_words
from hsw2v.errors import HSW2VError
from hsw2v.text.reader import iter_blocks
from tests.helpers import random_text


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


def test_corpus_arguments_that_name_nothing(tmp_path):
    from hsw2v.text.reader import corpus_files

    (tmp_path / "empty").mkdir()
    for args, fragment in [([str(tmp_path / "empty")], "holds no files"),
                           ([str(tmp_path / "*.nope")], "no file matches"),
                           ([str(tmp_path / "absent.txt")], "no such file"), (["-", "-"], "once")]:
        with pytest.raises(HSW2VError, match=fragment):
            corpus_files(args)


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
