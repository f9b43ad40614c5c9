"""Counting a corpus (every distinct word, exactly, with a numba hash table), the
token spool that lets epochs skip re-reading the text (and a Dask worker's spool of
the slices it trained), and encoding text blocks against a vocabulary."""
from __future__ import annotations

import os
import tempfile
import threading
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..errors import HSW2VError
from ..system.memory import map_large_allocations, total_memory
from ..system.parallel import read_ahead, start_threads
from ..system.progress import progress_bar
from ..system.signals import raise_pending
from ..text.reader import (
    BLOCK_BYTES,
    Source,
    describe,
    iter_blocks,
    plain_bytes,
)
from ..text.tokens import build_table, count_tokens, decode_spool, encode_block
from .counter import CountTable, Spill, grown, kept_types, merge_counts
from .vocab import Vocab, pack_words


@dataclass
class WordCounts:
    """The distinct words of a corpus that reached the counting pass's min_count
    (UTF-8 bytes, in no particular order) with their counts and first occurrences
    (a key that sorts in corpus order); the numbers of tokens and of distinct words
    (``n_types``, all of them); and ``table_ids``: for each counting table, each of
    its types' index here or -1 (the token spool holds those tables' ids; counted
    without a spool, the tables that spilled have none)."""

    word_bytes: np.ndarray
    offsets: np.ndarray
    counts: np.ndarray
    first: np.ndarray
    tokens: int
    n_types: int
    table_ids: list[np.ndarray] = field(default_factory=list)
    lines: int = 0
    """Lines, empty ones included (a last line without its newline counts)."""

    def __len__(self) -> int:
        return len(self.counts)

    def word(self, i: int) -> str:
        return self.word_bytes[self.offsets[i]:self.offsets[i + 1]].tobytes().decode("utf-8")

    def as_dict(self) -> dict[str, int]:
        """{word: count} in order of first occurrence; fine for small corpora and tests."""
        return {self.word(i): int(self.counts[i]) for i in np.argsort(self.first).tolist()}

    def to_vocab(self, min_count: int = 5, max_vocab: int | None = None):
        """The words with count ≥ min_count, most frequent first (first occurrence breaks ties)."""
        kept = self._kept(min_count, max_vocab)
        return Vocab([self.word(i) for i in kept.tolist()], self.counts[kept])

    def marked_vocab(self, vocab: Vocab, word_ids: np.ndarray) -> tuple[Vocab, np.ndarray]:
        """A language model's vocabulary: ``vocab`` (kept from these counts) with
        ``<unk>`` (every token outside it) and ``</s>`` (every line), and each type's
        id in it, from ``word_ids`` (each type's id in ``vocab``, or -1: ``<unk>``)."""
        marked, new_id = vocab.with_markers(self.tokens - vocab.total, self.lines)
        return marked, np.where(word_ids >= 0, new_id[np.maximum(word_ids, 0)], -1).astype(np.int32)

    def type_ids(self, min_count: int = 5, max_vocab: int | None = None) -> np.ndarray:
        """Each word's id in ``to_vocab(min_count, max_vocab)``, or -1 if it was dropped."""
        kept = self._kept(min_count, max_vocab)
        ids = np.full(len(self), -1, dtype=np.int32)
        ids[kept] = np.arange(len(kept), dtype=np.int32)
        return ids

    def spool_ids(self, ids: np.ndarray, unknown: int = -1) -> list[np.ndarray]:
        """``ids`` (one per word here, -1 for one left out) as each counting table's
        types see them, for :meth:`TokenSpool.blocks`; with ``unknown`` ≥ 0 a word
        left out, or not kept by the counting pass, takes that id."""
        ids = np.where(ids >= 0, ids, np.int32(unknown)).astype(np.int32)
        padded = np.append(ids, np.int32(unknown))  # index -1: a type the counting pass left out
        return [padded[t] for t in self.table_ids]

    def _kept(self, min_count: int, max_vocab: int | None) -> np.ndarray:
        kept = np.flatnonzero(self.counts >= min_count)
        return kept[np.lexsort((self.first[kept], -self.counts[kept]))][:max_vocab]


MAX_TYPES = 2**31 - 1
"""Distinct words a counting table may hold: type and word ids are int32."""


SPILL_FACTOR = 1.4
"""A table's share of the counting memory, times this, covers the table and the
temporaries of spilling it (each type's partition, 4 bytes, and an eighth of the
table gathered at a time: about 10 bytes a type of the 40-odd it holds), with
room to spare for the allocator."""


def default_count_memory() -> int:
    """A quarter of the memory this process may use (its cgroup's limit, inside a
    container: :func:`hsw2v.system.memory.total_memory`)."""
    return total_memory() // 4


ONE_THREAD_BLOCKS = 8
"""Text known to fit in this many blocks is counted on one thread. A second thread
saves little there (8 ms of 55 on the bundled 6 MB corpus), and merging two tables
takes kernels of their own: 0.7 s of compiling on a first run."""


def count_words(path: Source, progress: bool = False, spool: TokenSpool | None = None,
                block_bytes: int = BLOCK_BYTES, threads: int = 1, min_count: int = 1,
                memory: int | None = None) -> WordCounts:
    """Count every word of the corpus in one streaming pass, exactly, writing its
    tokens to ``spool`` if one is given; keep the words seen ``min_count`` times.

    ``threads`` count blocks in parallel (one for text that fits in
    :data:`ONE_THREAD_BLOCKS` blocks), each into its own table
    (:class:`hsw2v.counting.counter.CountTable`), and the spool takes the blocks in corpus
    order. The tables share ``memory`` bytes (default: a quarter of RAM); a table
    that outgrows its share spills to an unnamed file in $TMPDIR and starts again.
    At the end the tables merge by hash partition, in parallel, from memory or,
    after a spill, from disk, so the counts equal an unbounded count's.
    """
    memory = memory or default_count_memory()
    size = plain_bytes(path)
    if size is not None and size <= ONE_THREAD_BLOCKS * block_bytes:
        threads = 1
    map_large_allocations()
    counting = _Counting(path, spool, block_bytes, threads, memory)
    try:
        with progress_bar(progress, unit="word", unit_scale=True, desc="vocab", leave=False) as bar:
            counting.run(bar)
        merged = counting.merged(min_count)
    finally:
        counting.close()
    if len(merged.types.counts) > MAX_TYPES:
        raise HSW2VError(f"{describe(path)}: more than {MAX_TYPES:,} distinct words reach "
                         f"min-count {min_count}; raise it")
    none = np.empty(0, dtype=np.int32)  # a table that counted nothing
    table_ids = [merged.table_ids.get(g, none) for g in range(counting.generations)]
    return WordCounts(*merged.types, counting.tokens, merged.n_types, table_ids, counting.lines)


class _Counting:
    """One counting pass (:func:`count_words`): ``threads`` take the corpus's blocks in
    turn, each counting into its own table (spilling it to disk past its share of
    ``memory``), and hand their blocks' codes to the spool in corpus order."""

    def __init__(self, path: Source, spool: TokenSpool | None, block_bytes: int, threads: int,
                 memory: int) -> None:
        self.path, self.spool, self.threads, self.memory = path, spool, threads, memory
        buffers = (2 + 2 * threads + (4 * threads if spool is not None else 0)) * block_bytes
        self.share = max(int((memory - buffers) / (threads * SPILL_FACTOR)), 4 << 20)
        self.tables = [CountTable(t) for t in range(threads)]
        self.spills: list[Spill] = []
        self.blocks = enumerate(read_ahead(iter_blocks(path, block_bytes), depth=2 + threads))
        self.lock, self.turn = threading.Lock(), threading.Condition()
        self.written = self.tokens = self.lines = 0
        self.generations = threads  # tables made so far (a spill starts a new one)
        self.failures: list[BaseException] = []

    def run(self, bar) -> None:
        """Count every block on the threads; re-raise the first failure."""
        workers = [threading.Thread(target=self._work, args=(t, bar), daemon=True)
                   for t in range(1, self.threads)]
        workers = workers[:start_threads(workers, "counting", fewer=True)]  # (this thread counts too)
        self._work(0, bar)
        for w in workers:  # not after Ctrl-C: a worker may wait for input that never comes
            while w.is_alive() and not any(isinstance(e, KeyboardInterrupt) for e in self.failures):
                w.join(0.05)
                raise_pending()
        if self.failures:
            raise self.failures[0]

    def _work(self, t: int, bar) -> None:
        """Thread ``t``: count blocks into its table until none is left."""
        codes = np.empty(0, dtype=np.uint8)
        try:
            while not self.failures:
                raise_pending()
                with self.lock:
                    b, block = next(self.blocks, (-1, b""))
                if b < 0:
                    return
                buf = np.frombuffer(block, dtype=np.uint8)
                table, n_tokens = self._room(t, buf)
                room = 4 * len(buf) + 8 if self.spool is not None and self.spool.usable else 0
                if len(codes) < room:
                    codes = np.empty(room, dtype=np.uint8)
                n, k = table.count(buf, b, codes[:room], n_tokens)
                with self.turn:  # the spool takes the blocks in order
                    if self.spool is not None:  # (not whether it is usable: that may change)
                        self.turn.wait_for(lambda b=b: self.written == b or self.failures)
                    if k and not self.failures:
                        self.spool.write(codes[:k], table.generation)
                    self.written += 1
                    self.tokens += n
                    self.lines += block.count(b"\n")
                    self.turn.notify_all()
                    bar.update(n)
        except BaseException as e:  # noqa: BLE001 (re-raised by the calling thread)
            self.failures.append(e)
            with self.turn:
                self.turn.notify_all()

    def _room(self, t: int, buf: np.ndarray) -> tuple[CountTable, int]:
        """Thread ``t``'s table with room for ``buf``'s words within its share (its
        words spilled to disk first if not), and a bound on their number."""
        table = self.tables[t]
        n_tokens = len(buf) // 2 + 1  # at most as many new words
        if table.nbytes_after(len(buf), n_tokens) > self.share:
            n_tokens = count_tokens(buf)  # exactly (a pass over the block)
        if table.nbytes_after(len(buf), n_tokens) > self.share and table.n_types:
            spill = Spill(table, spool_directory(self.spool))
            with self.lock:
                self.spills.append(spill)
                table = self.tables[t] = CountTable(self.generations)
                self.generations += 1
        check_types(table, len(buf), self.path)
        return table, n_tokens

    def merged(self, min_count: int):
        """The tables merged by hash partition (from disk after a spill), keeping the
        words seen ``min_count`` times."""
        live = [t for t in self.tables if t.n_types]
        if self.spills or sum(t.nbytes for t in live) > self.memory // 2:  # merge from disk
            self.spills += [Spill(t, spool_directory(self.spool)) for t in live]
            live = self.tables = []
        if not self.spills and len(live) <= 1:
            return kept_types(live[0] if live else self.tables[0], min_count)
        return merge_counts(live, self.spills, min_count, self.threads,
                            self.memory - sum(t.nbytes for t in live), ids=self.spool is not None)

    def close(self) -> None:
        for spill in self.spills:
            spill.close()


def spool_directory(spool: TokenSpool | None) -> str | None:
    """Where spilled counts go: beside the token spool, else in $TMPDIR."""
    return spool.directory if spool is not None else None


def check_types(table: CountTable, block_bytes: int, path: Source) -> None:
    """Stop before a table could hold more types than ids can number."""
    if table.n_types + block_bytes // 2 + 1 > MAX_TYPES:
        raise HSW2VError(f"{describe(path)}: {table.n_types:,} distinct words and counting, near "
                         f"the limit of {MAX_TYPES:,} (ids are 32-bit); split or clean the corpus")


class TokenSpool:
    """The corpus's tokens as the counting pass saw them, in an unnamed temporary
    file, so that training epochs read word ids back instead of decompressing and
    tokenizing the text again.

    Each token is its type id (the word's index in :class:`WordCounts`) as a
    variable-length code, with codes for the end of a non-empty line and of a block
    (see :func:`hsw2v.text.tokens.decode_spool`): about 1.5 bytes a token on Zipfian
    text, in the temporary directory (``TMPDIR``). Before each write it checks the
    disk's free space; if there is too little, or a write fails, the spool is
    dropped and ``usable`` turns false: callers then read the text. ``bytes`` is
    its size.
    """

    RESERVE = 64 << 20
    """Bytes the spool leaves free on its disk."""

    def __init__(self, directory: str | None = None):
        self.directory = directory
        self.file = tempfile.TemporaryFile(prefix="hsw2v-tokens-", dir=directory)  # noqa: SIM115
        self.usable = True
        self.failure = ""
        self.bytes = 0
        self.tables = array("i")  # the counting table of each block
        self.starts = array("q")  # the byte where each block starts
        self.lock = threading.RLock()  # (writes append; reads say where they start)

    def write(self, codes: np.ndarray, table: int = 0) -> None:
        """Append a block's spool bytes, counted by ``table``, leaving the disk at
        least RESERVE bytes free; on failure, give the spool up and say why in
        ``failure``."""
        with self.lock:
            if not self.usable:
                return
            try:
                if self._free_bytes() < len(codes) + self.RESERVE:
                    self.failure = f"less than {self.RESERVE >> 20} MiB would be left free"
                    self.close()
                    return
                self.file.seek(self.bytes)
                self.file.write(np.ascontiguousarray(codes, dtype=np.uint8))
                self.starts.append(self.bytes)
                self.bytes += len(codes)
                self.tables.append(table)
            except OSError as e:
                self.failure = e.strerror or str(e)
                self.close()

    def _free_bytes(self) -> int:
        """Free bytes on the spool's disk (unbounded if the file system cannot say)."""
        try:
            st = os.fstatvfs(self.file.fileno())
        except (AttributeError, OSError, ValueError):
            return 1 << 62
        return st.f_bavail * st.f_frsize

    def blocks(self, type_ids: list[np.ndarray], chunk: int = 4 << 20, at: int = 0, first: int = 0,
               count: int | None = None, line_end: int = -1
               ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(word ids, sentence ends) of each block, as :meth:`WordTable.encode` gives
        them for the block's text; ``type_ids[t]`` maps the type ids of counting
        table t to word ids or -1 (see :meth:`WordCounts.spool_ids`), and
        ``line_end`` ≥ 0 ends every line (a language model's ``</s>``). The file is
        read ``chunk`` bytes at a time (more for a longer block). Without the
        other arguments, every block; else ``count`` blocks from block ``first``,
        which starts at byte ``at``."""
        buf = np.empty(chunk, dtype=np.uint8)
        ids = np.empty(len(buf), dtype=np.int32)
        ends = np.empty(len(buf), dtype=np.int64)
        start = have = 0
        block, last = first, len(self.tables) if count is None else first + count
        while block < last:
            nxt, n_ids, n_sents, complete = decode_spool(buf, start, have,
                                                         type_ids[self.tables[block]], line_end,
                                                         ids, ends)
            if complete:
                start = nxt
                block += 1
                yield ids[:n_ids].copy(), ends[:n_sents].copy()
                continue
            rest = have - start  # an unfinished block: move it to the front, read more
            buf[:rest] = buf[start:have]
            start, have = 0, rest
            if have == len(buf):  # a block longer than the buffer
                buf = grown(buf, 2 * len(buf))
                ids, ends = np.empty(len(buf), dtype=np.int32), np.empty(len(buf), dtype=np.int64)
            with self.lock:
                self.file.seek(at)
                got = self.file.readinto(memoryview(buf[have:]))
            if not got:
                return
            have += got
            at += got

    def parts(self, n: int) -> list[tuple[int, int, int]]:
        """The blocks cut into ``n`` contiguous parts of about equal bytes, each as
        (byte, first block, blocks): :meth:`blocks`'s ``at``, ``first`` and ``count``.
        A part may have no block (fewer blocks than parts)."""
        starts = np.append(np.frombuffer(self.starts, dtype=np.int64), self.bytes)
        cuts = [0]
        for k in range(1, n):  # the block start nearest k/n of the bytes, in order
            target = k * self.bytes / n
            right = min(int(np.searchsorted(starts, target)), len(starts) - 1)
            left = max(right - 1, 0)
            near = left if target - starts[left] <= starts[right] - target else right
            cuts.append(max(near, cuts[-1]))
        cuts.append(len(self.tables))
        return [(int(starts[a]), a, b - a) for a, b in zip(cuts[:-1], cuts[1:])]

    @staticmethod
    def warm_up() -> None:
        """Load the decoding kernel (compiled, or from numba's cache)."""
        none = np.empty(0, dtype=np.int32)
        decode_spool(np.empty(0, dtype=np.uint8), 0, 0, none, -1, none, np.empty(0, dtype=np.int64))

    def close(self) -> None:
        """Delete the file (it is unnamed, so it also goes when the process ends)."""
        with self.lock:
            self.usable = False
            self.file.close()

    def __enter__(self) -> TokenSpool:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class WordTable:
    """The vocabulary as a hash table that the encoding kernel reads. With
    ``unknown`` ≥ 0, a word outside it takes that id instead of being dropped; with
    ``line_end`` ≥ 0, that id ends every line (see :meth:`of_vocab`)."""

    def __init__(self, words: list[str], unknown: int = -1, line_end: int = -1):
        self.word_bytes, self.word_offsets = pack_words(words)
        size = 1 << max(4, (2 * len(words)).bit_length())
        self.table = np.full(size, -1, dtype=np.int32)
        self.unknown, self.line_end = unknown, line_end
        build_table(self.word_bytes, self.word_offsets, self.table)

    @classmethod
    def of_vocab(cls, vocab: Vocab) -> WordTable:
        """The table of ``vocab``, with its ``<unk>`` and ``</s>`` if it has sentence
        markers (:attr:`Vocab.markers`)."""
        return cls(vocab.words, vocab.unknown_id, vocab.end_id)

    def encode(self, block: bytes) -> tuple[np.ndarray, np.ndarray]:
        """Word ids of a block and the ends of its sentences."""
        buf = np.frombuffer(block, dtype=np.uint8)
        cap = (len(buf) if self.line_end >= 0 else len(buf) // 2) + 2
        ids = np.empty(cap, dtype=np.int32)
        ends = np.empty(cap, dtype=np.int64)
        n_ids, n_sents = encode_block(buf, self.table, self.word_bytes, self.word_offsets,
                                      self.unknown, self.line_end, ids, ends)
        return ids[:n_ids].copy(), ends[:n_sents].copy()
