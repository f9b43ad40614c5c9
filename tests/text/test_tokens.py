"""hsw2v.text.tokens: the kernels that count, encode, spool and merge words, against
plain Python (``bytes.split``, dicts and Counters, LEB128 written out by hand)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from hsw2v.text import tokens
from hsw2v.text.tokens import TypeArrays

from tests.jit.test_helpers import fnv1a_reference

SPACES = [b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"  ", b"\n\n", b" \n "]


def random_block(rng, n_words: int, n_types: int = 60) -> bytes:
    """Words of a Zipf-like vocabulary (some non-ASCII) between runs of ASCII
    whitespace, empty lines among them, with space at either end or not."""
    vocab = [f"w{i}".encode() if i % 5 else f"é{i}日".encode() for i in range(n_types)]
    weights = 1 / np.arange(1, n_types + 1)
    picks = rng.choice(n_types, n_words, p=weights / weights.sum())
    gaps = rng.integers(0, len(SPACES), n_words + 1)
    return (SPACES[gaps[0]] if rng.random() < 0.5 else b"") + b"".join(
        vocab[w] + SPACES[g] for w, g in zip(picks, gaps[1:]))


def encode_reference(block: bytes, index: dict[bytes, int], unknown: int = -1,
                     line_end: int = -1) -> tuple[list[int], list[int]]:
    """Word ids and the ends of the non-empty sentences, line by line in Python."""
    ids, ends = [], []
    lines = block.split(b"\n")
    for k, line in enumerate(lines):
        ids += [i for w in line.split() if (i := index.get(w, unknown)) >= 0]
        if k < len(lines) - 1 and line_end >= 0:
            ids.append(line_end)
        if ids and (not ends or ends[-1] < len(ids)):
            ends.append(len(ids))
    return ids, ends


def leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 127, value >> 7
        out.append(low | (128 if value else 0))
        if not value:
            return bytes(out)


def table_of(words: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The words packed as the kernels take them, and a table of theirs built by
    ``build_table`` (a quarter full at most: collisions and probing)."""
    word_bytes = np.frombuffer(b"".join(words), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(np.int64)
    table = np.full(1 << max(2, (4 * len(words)).bit_length()), -1, np.int32)
    tokens.build_table(word_bytes, offsets, table)
    return word_bytes, offsets, table


class Counting:
    """Counted types, in arrays with room for ``room`` bytes and words, as a caller of
    ``count_block`` keeps them."""

    def __init__(self, room: int):
        self.arena = np.zeros(room, np.uint8)
        self.offsets = np.zeros(room + 1, np.int64)
        self.counts = np.zeros(room, np.int64)
        self.first = np.zeros(room, np.int64)
        self.table = np.full(1 << (2 * room).bit_length(), -1, np.int32)
        self.n_types = self.used = self.tokens = 0

    def count(self, block: bytes, spool: bool = False) -> bytes:
        buf = np.frombuffer(block, np.uint8)
        codes = np.zeros(4 * len(buf) + 8 if spool else 0, np.uint8)
        self.n_types, self.used, n, k = tokens.count_block(
            buf, self.table, self.arena, self.offsets, self.counts, self.first, self.tokens,
            self.n_types, self.used, codes)
        assert n == len(block.split())
        self.tokens += n
        return codes[:k].tobytes()

    def words(self) -> list[bytes]:
        return [self.arena[self.offsets[i]:self.offsets[i + 1]].tobytes()
                for i in range(self.n_types)]

    def arrays(self) -> TypeArrays:
        n = self.n_types
        return TypeArrays(self.arena[:self.used], self.offsets[:n + 1], self.counts[:n],
                          self.first[:n])


def test_count_tokens_is_the_length_of_bytes_split():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 50, 3000):
        block = random_block(rng, n)
        assert tokens.count_tokens(np.frombuffer(block, np.uint8)) == len(block.split())
    for block in (b"", b"   ", b"\n\n", b"a", b" a", b"a ", b"a\x0bb\x0cc\rd", b"\x00 \xff"):
        assert tokens.count_tokens(np.frombuffer(block, np.uint8)) == len(block.split())


@pytest.mark.parametrize(("unknown", "line_end"), [(-1, -1), (-1, 0), (3, -1), (3, 0)])
def test_encode_block_is_a_dict_lookup_of_split_lines(unknown, line_end):
    """Ids of the vocabulary's words (the others dropped, or ``unknown``), sentences
    ending at newlines and at the block's end, with ``line_end`` after every line."""
    rng = np.random.default_rng(1)
    block = random_block(rng, 4000, n_types=80)
    words = sorted(set(block.split()))[::2]  # half the words are out of the vocabulary
    index = {w: i for i, w in enumerate(words)}
    word_bytes, offsets, table = table_of(words)
    buf = np.frombuffer(block, np.uint8)
    ids, ends = np.empty(len(buf) + 2, np.int32), np.empty(len(buf) + 2, np.int64)
    n_ids, n_sents = tokens.encode_block(buf, table, word_bytes, offsets, unknown, line_end,
                                         ids, ends)
    want_ids, want_ends = encode_reference(block, index, unknown, line_end)
    assert ids[:n_ids].tolist() == want_ids and ends[:n_sents].tolist() == want_ends
    for i, w in enumerate(words):  # every word is found in the table, and nothing else
        assert tokens.find_hashed(word_bytes, offsets[i], offsets[i + 1],
                                  np.uint64(fnv1a_reference(w)), table, word_bytes, offsets) == i
    stranger = np.frombuffer(b"nowhere", np.uint8)
    assert tokens.find_hashed(stranger, 0, 7, np.uint64(fnv1a_reference(b"nowhere")), table,
                              word_bytes, offsets) == -1


def test_count_block_is_a_counter_in_order_of_first_occurrence():
    """Blocks counted one after another into the same arrays: the types in order of
    first occurrence, their bytes, counts and the key of their first token; the spool
    codes written out by hand, and decoded as the block's encoding."""
    rng = np.random.default_rng(2)
    blocks = [random_block(rng, n) for n in (3000, 1, 0, 2500)]
    counting = Counting(sum(map(len, blocks)))
    every: list[bytes] = []
    for block in blocks:
        codes = counting.count(block, spool=True)
        every += block.split()
        seen = {w: i for i, w in enumerate(dict.fromkeys(every))}
        assert counting.words() == list(seen)
        counter = Counter(every)
        assert counting.counts[:counting.n_types].tolist() == [counter[w] for w in seen]
        assert counting.first[:counting.n_types].tolist() == [every.index(w) for w in seen]
        want = b"".join(b"".join(leb128(seen[w] + 2) for w in line.split()) + leb128(tokens.LINE_END)
                        for line in block.split(b"\n")[:-1])
        want += b"".join(leb128(seen[w] + 2) for w in block.split(b"\n")[-1].split())
        assert codes == want + leb128(tokens.BLOCK_END)

        spool = np.frombuffer(codes, np.uint8)
        for dropped in (False, True):  # every type a word, or every third one out
            type_ids = np.arange(counting.n_types, dtype=np.int32)
            if dropped:
                type_ids[::3] = -1
            cap = len(codes) + 1
            ids, ends = np.empty(cap, np.int32), np.empty(cap, np.int64)
            k, n_ids, n_sents, complete = tokens.decode_spool(spool, 0, len(spool), type_ids, -1,
                                                              ids, ends)
            index = {w: int(type_ids[i]) for w, i in seen.items()}
            want_ids, want_ends = encode_reference(block, index)
            assert (k, complete) == (len(spool), True)
            assert ids[:n_ids].tolist() == want_ids and ends[:n_sents].tolist() == want_ends


def test_varints_and_spooled_ids_come_back():
    """``put_varint`` writes LEB128 as written out by hand; ids spooled by ``spool_ids``
    decode to the same ids and sentences, and a spool cut short says so."""
    out = np.zeros(16, np.uint8)
    for value in (0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**35 + 5):
        end = tokens.put_varint(out, 3, value)
        assert out[3:end].tobytes() == leb128(value)
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 1 << 22, 5000).astype(np.int32)
    ends = np.unique(np.append(rng.integers(1, 5000, 40), 5000)).astype(np.int64)
    codes = np.zeros(5 * len(ids) + len(ends) + 1, np.uint8)
    n = tokens.spool_ids(ids, ends, len(ends), codes)
    identity = np.arange(1 << 22, dtype=np.int32)
    got_ids, got_ends = np.empty(len(ids) + 1, np.int32), np.empty(len(ends) + 1, np.int64)
    k, n_ids, n_sents, complete = tokens.decode_spool(codes, 0, n, identity, -1, got_ids, got_ends)
    assert (k, complete) == (n, True)
    assert np.array_equal(got_ids[:n_ids], ids) and np.array_equal(got_ends[:n_sents], ends)
    k, _, _, complete = tokens.decode_spool(codes, 0, n - 1, identity, -1, got_ids, got_ends)
    assert not complete and k == n - 1


def test_merging_and_folding_types_add_counts_and_keep_the_first_key():
    """Two counts merged: counts summed, the earlier first key, ``to_merged`` each
    source type's id; only the chosen partitions (the high half of FNV-1a, modulo
    their number) when asked. Folding adds a source's types that the table already
    holds and finds no others."""
    rng = np.random.default_rng(4)
    a_block, b_block = random_block(rng, 2000, 70), random_block(rng, 2000, 90)
    a, b = Counting(len(a_block) + len(b_block)), Counting(len(b_block))
    a.count(a_block)
    b.tokens = 1 << 24  # b's keys come after a's
    b.count(b_block)
    b_words = b.words()
    n_parts = 4
    part = np.empty(b.n_types, np.int32)
    per_part, nbytes = np.zeros(n_parts, np.int64), np.zeros(n_parts, np.int64)
    tokens.partition_of(b.arena, b.offsets, b.n_types, np.empty(0, np.int32), part, per_part,
                        nbytes)
    want_part = [(fnv1a_reference(w) >> 32) % n_parts for w in b_words]
    assert part.tolist() == want_part
    assert per_part.tolist() == [want_part.count(p) for p in range(n_parts)]
    assert nbytes.tolist() == [sum(len(w) for w, p in zip(b_words, want_part) if p == q)
                               for q in range(n_parts)]

    a_words = a.words()
    before = {w: (int(c), int(f)) for w, c, f in zip(a_words, a.counts, a.first)}
    after_b = {w: (int(c), int(f)) for w, c, f in zip(b_words, b.counts, b.first)}
    to_merged = np.full(b.n_types, -1, np.int64)
    room = TypeArrays(a.arena, a.offsets, a.counts, a.first)  # (the whole arrays: room to add)
    a.n_types, a.used = tokens.merge_types(b.arrays(), b.n_types, part, 1, 3, room, a.table,
                                           a.n_types, a.used, to_merged, False)
    merged = {w: (int(c), int(f)) for w, c, f in zip(a.words(), a.counts, a.first)}
    chosen = {w for w, p in zip(b_words, want_part) if 1 <= p < 3}
    want = dict(before)
    for w in chosen:
        c, f = after_b[w]
        want[w] = (want[w][0] + c, min(want[w][1], f)) if w in want else (c, f)
    assert merged == want
    assert a.words()[:len(a_words)] == a_words  # new types come after
    for j, w in enumerate(b_words):
        assert to_merged[j] == (a.words().index(w) if w in chosen else -1)

    c = Counting(len(a_block))  # fold b into a table of a's words
    c.count(a_block)
    found = np.empty(b.n_types, np.int64)
    tokens.fold_types(b.arrays(), 0, b.n_types, c.table, c.arrays(), found)
    for j, w in enumerate(b_words):
        assert found[j] == (a_words.index(w) if w in before else -1)
    folded = {w: (int(n), int(f)) for w, n, f in zip(c.words(), c.counts, c.first)}
    assert folded == {w: (n + after_b[w][0], min(f, after_b[w][1])) if w in after_b else (n, f)
                      for w, (n, f) in before.items()}


def test_words_and_bands_are_gathered_in_order():
    """``gather_words`` copies the listed words in that order; ``gather_band`` groups
    the types of some partitions by partition, in table order within each; ``relabel``
    maps the ids of those partitions, -1 staying -1."""
    rng = np.random.default_rng(5)
    counting = Counting(20_000)
    counting.count(random_block(rng, 3000, 200))
    words, n = counting.words(), counting.n_types
    order = rng.permutation(n)[: n // 2]
    out, out_offsets = np.zeros(counting.used, np.uint8), np.zeros(len(order) + 1, np.int64)
    tokens.gather_words(counting.arena, counting.offsets, order, out, out_offsets)
    assert [out[out_offsets[j]:out_offsets[j + 1]].tobytes() for j in range(len(order))] == [
        words[i] for i in order]

    part = rng.integers(0, 5, n).astype(np.int32)
    lo, hi = 1, 4
    band = [i for p in range(lo, hi) for i in range(n) if part[i] == p]
    type_at = np.cumsum([0] + [int((part == p).sum()) for p in range(lo, hi - 1)]).astype(np.int64)
    byte_at = np.cumsum([0] + [sum(len(words[i]) for i in range(n) if part[i] == p)
                               for p in range(lo, hi - 1)]).astype(np.int64)
    m = len(band)
    ids, counts, first, lengths = (np.zeros(m, np.int64) for _ in range(4))
    gathered = np.zeros(sum(len(words[i]) for i in band), np.uint8)
    tokens.gather_band(counting.arrays(), part, lo, hi, type_at, byte_at, ids, counts, first,
                       lengths, gathered)
    assert ids.tolist() == band
    assert counts.tolist() == [int(counting.counts[i]) for i in band]
    assert first.tolist() == [int(counting.first[i]) for i in band]
    assert lengths.tolist() == [len(words[i]) for i in band]
    assert gathered.tobytes() == b"".join(words[i] for i in band)

    given = rng.integers(-1, n, n).astype(np.int64)
    new_ids = rng.permutation(n).astype(np.int64)
    new_ids[::4] = -1
    for mapping, base in ((new_ids, 7), (np.empty(0, np.int64), 100)):
        got = given.copy()
        tokens.relabel(got, part, lo, hi, mapping, base)
        for i in range(n):
            w = given[i] if len(mapping) == 0 or given[i] < 0 else mapping[given[i]]
            want = (w + base if w >= 0 else -1) if lo <= part[i] < hi else given[i]
            assert got[i] == want
