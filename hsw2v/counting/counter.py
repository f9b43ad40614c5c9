"""Counting tables: a growing hash table of words with their counts and first
occurrences, one per counting thread, merged exactly at the end.

A word's first occurrence is a key, ``block << KEY_SHIFT | token``: its block's
index in the corpus and its index among the block's tokens. Merged tables keep
the smaller key, so sorting by it gives the order of first occurrence in the
corpus, whichever thread counted which block.
"""
from __future__ import annotations

import itertools
import os
import tempfile
import threading
from dataclasses import dataclass

import numpy as np

from ..errors import HSW2VError, param
from ..system.memory import release_free_memory
from ..text.tokens import (
    TypeArrays,
    build_table,
    count_block,
    fold_types,
    gather_band,
    gather_words,
    merge_types,
    partition_of,
    relabel,
)

KEY_SHIFT = 24
"""A block holds fewer than 2**24 tokens (blocks are about 1 MiB, at most 16 MiB)."""


def grown(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` copied into an array of at least ``size`` elements (doubling); the
    new room is zero pages the OS maps when they are written."""
    out = np.zeros(max(size, 2 * len(a)), dtype=a.dtype)
    out[:len(a)] = a
    return out


N_PARTS = 1024
"""Words are split into this many partitions by hash for merging; a merge takes a
run of consecutive partitions at a time."""


class CountTable:
    """Distinct words (bytes in ``arena``, word i at ``offsets[i]:offsets[i+1]``) in
    the order this table first saw them, with ``counts`` and ``first`` keys, and the
    open-addressing hash table that finds them. ``generation`` numbers the table
    among all a counting pass used (a table that spilled to disk is replaced)."""

    def __init__(self, generation: int = 0):
        self.generation = generation
        self.table = np.full(1 << 16, -1, dtype=np.int32)
        self.arena = np.empty(1 << 20, dtype=np.uint8)
        self.offsets = np.zeros((1 << 15) + 1, dtype=np.int64)
        self.counts = np.zeros(1 << 15, dtype=np.int64)
        self.first = np.zeros(1 << 15, dtype=np.int64)
        self.n_types = 0
        self.used = 0

    @classmethod
    def sized(cls, n_bytes: int, n_types: int) -> CountTable:
        """An empty table with room for exactly ``n_bytes`` word bytes and
        ``n_types`` types (a merge knows both)."""
        t = cls.__new__(cls)
        t.generation, t.n_types, t.used = 0, 0, 0
        t.arena = np.empty(n_bytes, dtype=np.uint8)
        t.offsets = np.zeros(n_types + 1, dtype=np.int64)
        t.counts = np.zeros(n_types, dtype=np.int64)
        t.first = np.zeros(n_types, dtype=np.int64)
        t.table = np.full(1 << (2 * n_types).bit_length(), -1, dtype=np.int32)
        return t

    @property
    def arrays(self) -> TypeArrays:
        return TypeArrays(self.arena, self.offsets, self.counts, self.first)

    @property
    def nbytes(self) -> int:
        """Memory the table has written: its words, its types' counts, first keys and
        offsets, and its hash table (the arrays' unused room is untouched)."""
        return self.used + 24 * self.n_types + 4 * len(self.table)

    def nbytes_after(self, n_bytes: int, n_types: int) -> int:
        """The most :attr:`nbytes` can reach while :meth:`count` adds ``n_bytes``
        word bytes and ``n_types`` types, the array being copied as it grows included."""
        need = self.n_types + n_types
        slots = len(self.table) if 2 * need <= len(self.table) else 1 << (2 * need).bit_length()
        copy = max(self.used, 8 * self.n_types) if len(self.counts) < need else 0
        return self.used + n_bytes + 24 * need + 4 * slots + copy

    def reserve(self, n_bytes: int, n_types: int) -> None:
        """Room for ``n_bytes`` more word bytes and ``n_types`` more types, with the
        hash table at most half full. Arrays grow by doubling; their new room is not
        written (the OS maps it when it is used)."""
        need = self.n_types + n_types
        if len(self.arena) - self.used < n_bytes:
            self.arena = grown(self.arena, self.used + n_bytes)
        if len(self.counts) < need:
            self.counts = grown(self.counts, need)
            self.first = grown(self.first, need)
            self.offsets = grown(self.offsets, need + 1)
        if 2 * need > len(self.table):
            self.table = None  # the old table goes before the new one is filled
            self.table = np.full(1 << (2 * need).bit_length(), -1, dtype=np.int32)
            build_table(self.arena, self.offsets[:self.n_types + 1], self.table)

    def count(self, buf: np.ndarray, block: int, codes: np.ndarray,
              new_types: int) -> tuple[int, int]:
        """Count the words of block number ``block``, which holds at most
        ``new_types`` words this table lacks; with a non-empty ``codes`` (room for
        ``4 * len(buf) + 8`` bytes), also write its spool codes there. Returns
        (tokens, spool bytes)."""
        self.reserve(len(buf), new_types)
        self.n_types, self.used, tokens, k = count_block(
            buf, self.table, self.arena, self.offsets, self.counts, self.first,
            block << KEY_SHIFT, self.n_types, self.used, codes)
        return tokens, k

    def partitions(self, skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each type's partition (see :data:`N_PARTS`; ``N_PARTS`` itself, none, for
        the types with ``skip >= 0``), and each partition's types and word bytes."""
        part = np.empty(self.n_types, dtype=np.int32)
        types, nbytes = np.zeros(N_PARTS, dtype=np.int64), np.zeros(N_PARTS, dtype=np.int64)
        skip = np.empty(0, dtype=np.int32) if skip is None else skip
        partition_of(self.arena, self.offsets, self.n_types, skip, part, types, nbytes)
        return part, types, nbytes


class Spill:
    """A counting table written to an unnamed temporary file in ``directory`` with
    its types grouped by partition, so that a merge reads one run of partitions
    at a time. Regions: each type's id in the table (int32), counts and first keys
    (int64), word lengths (int32), then the words' bytes."""

    def __init__(self, table: CountTable, directory: str | None = None):
        self.generation = table.generation
        n = self.n = table.n_types
        part, types, nbytes = table.partitions()
        self.types = np.concatenate([[0], np.cumsum(types)])
        self.bytes = np.concatenate([[0], np.cumsum(nbytes)])
        self.region = {"ids": 0, "counts": 4 * n, "first": 12 * n, "lengths": 20 * n,
                       "bytes": 24 * n}
        self.file = tempfile.TemporaryFile(prefix="hsw2v-counts-", dir=directory)  # noqa: SIM115
        try:
            for lo, hi in _groups(28 * types + nbytes, SPILL_BANDS, 1):
                self._write_band(table, part, lo, hi)
        except OSError as e:
            self.file.close()
            raise HSW2VError(f"cannot spill word counts to {directory or tempfile.gettempdir()}: "
                             f"{e.strerror or e}; free some space or raise {param('count_memory')}") from None

    def _write_band(self, table: CountTable, part: np.ndarray, lo: int, hi: int) -> None:
        """Gather partitions ``lo..hi-1`` (one pass over the table) and write each
        region's stretch of them."""
        a, b = int(self.types[lo]), int(self.types[hi])
        type_at = self.types[lo:hi] - a
        byte_at = self.bytes[lo:hi] - self.bytes[lo]
        band = {"ids": np.empty(b - a, dtype=np.int32), "counts": np.empty(b - a, dtype=np.int64),
                "first": np.empty(b - a, dtype=np.int64), "lengths": np.empty(b - a, dtype=np.int32)}
        words = np.empty(int(self.bytes[hi] - self.bytes[lo]), dtype=np.uint8)
        gather_band(table.arrays, part, lo, hi, type_at, byte_at, band["ids"], band["counts"],
                    band["first"], band["lengths"], words)
        fd = self.file.fileno()
        for name, values in band.items():
            _pwrite(fd, values, self.region[name] + a * values.itemsize)
        _pwrite(fd, words, self.region["bytes"] + int(self.bytes[lo]))

    def _read(self, name: str, dtype, lo: int, hi: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize
        return np.frombuffer(_pread(self.file.fileno(), (hi - lo) * size,
                                    self.region[name] + lo * size), dtype=dtype)

    def ids(self, lo_part: int, hi_part: int) -> np.ndarray:
        """The table ids of the types in partitions ``lo_part..hi_part-1``."""
        return self._read("ids", np.int32, self.types[lo_part], self.types[hi_part])

    def segment(self, lo_part: int, hi_part: int) -> TypeArrays:
        """The types of partitions ``lo_part..hi_part-1``."""
        a, b = self.types[lo_part], self.types[hi_part]
        offsets = np.zeros(b - a + 1, dtype=np.int64)
        np.cumsum(self._read("lengths", np.int32, a, b), out=offsets[1:])
        words = np.frombuffer(_pread(self.file.fileno(), int(offsets[-1]),
                                     self.region["bytes"] + int(self.bytes[lo_part])), dtype=np.uint8)
        return TypeArrays(words, offsets, self._read("counts", np.int64, a, b),
                          self._read("first", np.int64, a, b))

    def close(self) -> None:
        self.file.close()


SPILL_BANDS = 8
"""A spill gathers its types in this many runs of partitions, one at a time: its
temporaries are an eighth of the table."""


def _pwrite(fd: int, values: np.ndarray, offset: int) -> None:
    """All of ``values``'s bytes at ``offset`` (os.pwrite may write fewer)."""
    view = memoryview(values).cast("B")
    while len(view):
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _pread(fd: int, size: int, offset: int) -> bytes:
    """Exactly ``size`` bytes at ``offset`` (os.pread may return fewer)."""
    parts = []
    while size > 0:
        got = os.pread(fd, min(size, 1 << 30), offset)
        if not got:
            raise HSW2VError("a spilled count file ended early")
        parts.append(got)
        size -= len(got)
        offset += len(got)
    return b"".join(parts) if len(parts) != 1 else parts[0]


@dataclass
class Merged:
    """The counted types with count ≥ min_count (in no particular order), the number
    of distinct words in all, and for each table generation, each of its types'
    index among the kept ones (-1: dropped)."""

    types: TypeArrays
    n_types: int
    table_ids: dict[int, np.ndarray]


def kept_types(table: CountTable, min_count: int) -> Merged:
    """One table's types with count ≥ min_count: nothing to merge."""
    n = table.n_types
    if min_count <= 1:
        types = TypeArrays(table.arena[:table.used], table.offsets[:n + 1], table.counts[:n],
                           table.first[:n])
        return Merged(types, n, {table.generation: np.arange(n, dtype=np.int32)})
    types, rel = _kept(table, min_count)
    return Merged(types, n, {table.generation: rel})


def _kept(table: CountTable, min_count: int,
          among: np.ndarray | None = None) -> tuple[TypeArrays, np.ndarray]:
    """The table's types with count ≥ min_count (and ``among`` true, if given),
    gathered, and each type's index among them (-1: dropped)."""
    n = table.n_types
    keep = table.counts[:n] >= min_count
    if among is not None:
        keep &= among
    kept = np.flatnonzero(keep)
    del keep
    rel = np.full(n, -1, dtype=np.int32)
    rel[kept] = np.arange(len(kept), dtype=np.int32)
    lengths = table.offsets[kept + 1] - table.offsets[kept]
    words = np.empty(int(lengths.sum()), dtype=np.uint8)
    offsets = np.empty(len(kept) + 1, dtype=np.int64)
    gather_words(table.arena, table.offsets, kept, words, offsets)
    return TypeArrays(words, offsets, table.counts[kept], table.first[kept]), rel


def merge_two(a: TypeArrays, b: TypeArrays) -> tuple[TypeArrays, int]:
    """Two sets of counted types as one (each holds a word at most once): counts add
    up and the first occurrence is the earlier. Returns the types and their number."""
    dst = CountTable()
    dst.reserve(int(a.offsets[-1] + b.offsets[-1]), len(a.counts) + len(b.counts))
    none = np.empty(0, dtype=np.int32)
    for src, fresh in ((a, True), (b, False)):
        to_dst = np.empty(len(src.counts), dtype=np.int32)
        dst.n_types, dst.used = merge_types(src, len(src.counts), none, 0, 0, dst.arrays,
                                            dst.table, dst.n_types, dst.used, to_dst, fresh)
    n = dst.n_types
    return TypeArrays(dst.arena[:dst.used], dst.offsets[:n + 1], dst.counts[:n], dst.first[:n]), n


FOLD_CHUNK = 1 << 18
"""Source types a folding task looks up (see :func:`fold`)."""


def fold(base: CountTable, table: CountTable, threads: int) -> np.ndarray:
    """Add the counts of ``table``'s types that ``base`` already holds to ``base``,
    in place, on ``threads`` threads; each of ``table``'s types' id in ``base``, or -1."""
    found = np.empty(table.n_types, dtype=np.int32)
    dst = TypeArrays(base.arena, base.offsets, base.counts, base.first)

    def task(k: int) -> None:
        lo = k * FOLD_CHUNK
        fold_types(table.arrays, lo, min(lo + FOLD_CHUNK, table.n_types), base.table, dst, found)

    run_parallel(task, -(-table.n_types // FOLD_CHUNK), threads)
    return found


def concatenated(parts: list[TypeArrays]) -> TypeArrays:
    """Counted types one after another."""
    byte_base = np.concatenate([[0], np.cumsum([p.offsets[-1] for p in parts])])
    offsets = np.concatenate([[0]] + [p.offsets[1:] + byte_base[g] for g, p in enumerate(parts)])
    return TypeArrays(np.concatenate([p.arena for p in parts]), offsets.astype(np.int64),
                      np.concatenate([p.counts for p in parts]),
                      np.concatenate([p.first for p in parts]))


def merge_counts(tables: list[CountTable], spills: list[Spill], min_count: int, threads: int,
                 memory: int, ids: bool = True) -> Merged:
    """Merge counting tables in memory and spilled ones, exactly, keeping the types
    with count ≥ min_count, in about ``memory`` bytes beyond the tables'. Without
    ``ids``, a merge of spilled tables leaves out their types' ids (``table_ids``),
    which only a token spool needs.

    In memory, the largest table takes in the others' types that it holds, in place
    (:func:`fold`: lookups, no copies); the types it lacks are merged by partition
    (:func:`merge_partitions`), or are final when one other table had them. After a
    spill, everything is merged by partition."""
    live = [t for t in tables if t.n_types]
    if spills or len(live) < 2:
        return merge_partitions(live, spills, min_count, threads, memory, ids=ids)
    base = max(live, key=lambda t: t.n_types)
    rest = [t for t in live if t is not base]
    found = [fold(base, t, threads) for t in rest]
    kept, rel = _kept(base, min_count)
    n_base = len(kept.counts)
    if len(rest) == 1:
        new = found[0] < 0
        others, rel_other = _kept(rest[0], min_count, new)
        rel_other[rel_other >= 0] += n_base
        merged = Merged(others, int(new.sum()), {rest[0].generation: rel_other})
    else:
        merged = merge_partitions(rest, [], min_count, threads, memory, found, n_base)
    for t, f in zip(rest, found):
        ids = merged.table_ids[t.generation]
        at = np.flatnonzero(f >= 0)
        ids[at] = rel[f[at]]
    merged.table_ids[base.generation] = rel
    return Merged(concatenated([kept, merged.types]), base.n_types + merged.n_types,
                  merged.table_ids)


MERGE_BYTES_PER_TYPE = 72
"""What merging takes for each source type of a group, at most: the merged table
(counts, first keys, offsets and hash slots: 40 bytes), the source's id map (4) and
its segment read back from a spill (28), besides the words' bytes (twice: the
merged table's arena and the segment)."""


def merge_partitions(live: list[CountTable], spills: list[Spill], min_count: int, threads: int,
                     memory: int, skip: list[np.ndarray] | None = None,
                     first_id: int = 0, ids: bool = True) -> Merged:
    """Merge counting tables in memory and spilled ones, exactly: ``threads`` threads
    each merge a run of partitions at a time, keeping the types with count ≥
    min_count, numbered from ``first_id``. The types of ``live[i]`` with
    ``skip[i] >= 0`` are left out (and their ids untouched).

    ``memory`` bounds what the merge adds to the live tables: each type's id map
    (the result, 4 bytes a type of every table), then the runs being merged, which
    are as many as it takes for ``threads`` of them to fit in the rest. Without
    ``ids``, there are no id maps (``table_ids`` is empty)."""
    parts, n_part, b_part = _partition_sizes(live, spills, skip)
    maps = {t.generation: np.full(t.n_types if ids else 0, -1, dtype=np.int32) for t in live}
    maps.update({s.generation: np.full(s.n if ids else 0, -1, dtype=np.int32) for s in spills})
    fixed = sum(m.nbytes for m in maps.values()) + sum(p.nbytes for p in parts)
    cost = MERGE_BYTES_PER_TYPE * n_part + 2 * b_part
    room = max((memory - fixed) // threads, 1 << 20)
    groups = _groups(cost, -(-int(cost.sum()) // room), threads)
    results: list = [None] * len(groups)
    none = np.empty(0, dtype=np.int32)  # no partitions to filter by; no new ids to map to

    def merge_group(g: int) -> None:
        """Merge the group's types; its ids in ``maps`` become its kept types' (-1:
        dropped), numbered from 0 (``number_group`` adds the group's base)."""
        lo, hi = groups[g]
        dst = CountTable.sized(int(b_part[lo:hi].sum()), int(n_part[lo:hi].sum()))
        for t, part in zip(live, parts):  # the first table's words are all new
            dst.n_types, dst.used = merge_types(t.arrays, t.n_types, part, lo, hi, dst.arrays,
                                                dst.table, dst.n_types, dst.used, maps[t.generation],
                                                t is live[0])
        spilled = []
        for s in spills:
            seg = s.segment(lo, hi)
            to_dst = np.empty(len(seg.counts) if ids else 0, dtype=np.int32)
            dst.n_types, dst.used = merge_types(seg, len(seg.counts), none, 0, 0, dst.arrays,
                                                dst.table, dst.n_types, dst.used, to_dst,
                                                not live and s is spills[0])
            del seg
            spilled.append((s, to_dst))
        n_merged = dst.n_types
        kept, rel = _kept(dst, min_count)
        del dst
        if ids:
            for t, part in zip(live, parts):
                relabel(maps[t.generation], part, lo, hi, rel, 0)
            for s, to_dst in spilled:
                maps[s.generation][s.ids(lo, hi)] = rel[to_dst]
        results[g] = (kept, n_merged)
        release_free_memory()

    run_parallel(merge_group, len(groups), threads)
    base = first_id + np.concatenate([[0], np.cumsum([len(r[0].counts) for r in results])])

    def number_group(g: int) -> None:
        lo, hi = groups[g]
        if base[g] == 0:
            return
        for t, part in zip(live, parts):
            relabel(maps[t.generation], part, lo, hi, none, base[g])
        for s in spills:
            at = s.ids(lo, hi)
            ids = maps[s.generation][at]
            maps[s.generation][at] = np.where(ids >= 0, ids + base[g], -1)

    if ids:
        run_parallel(number_group, len(groups), threads)
    else:
        maps = {}
    return Merged(concatenated([r[0] for r in results]), sum(r[1] for r in results), maps)


def _partition_sizes(live: list[CountTable], spills: list[Spill],
                     skip: list[np.ndarray] | None) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Each live table's partition of every type (``skip``: see :func:`merge_partitions`),
    and the types and word bytes of each partition over all tables."""
    n_part = np.zeros(N_PARTS, dtype=np.int64)
    b_part = np.zeros(N_PARTS, dtype=np.int64)
    parts = []
    for i, t in enumerate(live):
        part, types, nbytes = t.partitions(skip[i] if skip else None)
        parts.append(part)
        n_part += types
        b_part += nbytes
    for s in spills:
        n_part += np.diff(s.types)
        b_part += np.diff(s.bytes)
    return parts, n_part, b_part


def _groups(cost: np.ndarray, at_least: int, threads: int) -> list[tuple[int, int]]:
    """Runs of consecutive partitions of about equal cost: at least ``at_least`` of
    them, a multiple of ``threads`` (fewer only when there are too few partitions)."""
    n = -(-max(at_least, 1) // threads) * threads
    edges = np.searchsorted(np.cumsum(cost), np.arange(1, n) * (cost.sum() / n), side="right")
    bounds = sorted({0, len(cost), *np.minimum(edges, len(cost)).tolist()})
    return list(itertools.pairwise(bounds))


def run_parallel(task, n: int, threads: int) -> None:
    """``task(i)`` for i in range(n), on ``threads`` threads; the first error re-raises."""
    items = iter(range(n))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work() -> None:
        while not failures:
            with lock:
                i = next(items, None)
            if i is None:
                return
            try:
                task(i)
            except BaseException as e:  # noqa: BLE001 (re-raised below)
                failures.append(e)

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads - 1)]
    for w in workers:
        w.start()
    work()
    for w in workers:
        w.join()
    if failures:
        raise failures[0]
