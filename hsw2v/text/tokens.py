"""numba kernels that turn text into word ids: a hash table of words, counting
with a growing table, encoding a block against a fixed vocabulary, and decoding
the token spool.

Words are runs of non-whitespace bytes, hashed with FNV-1a while they are scanned.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ..jit.helpers import (
    FNV_OFFSET,
    FNV_PRIME,
    JIT,
    copy_items,
    fnv1a,
    is_space,
    prefetch_item,
)


@njit(**JIT)
def build_table(word_bytes, word_offsets, table):
    """Fill an open-addressing table (size a power of two, -1 = empty) with word ids."""
    mask = np.uint64(len(table) - 1)
    for w in range(len(word_offsets) - 1):
        slot = fnv1a(word_bytes, word_offsets[w], word_offsets[w + 1]) & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = w


@njit(**JIT)
def count_tokens(buf):
    """The number of words in ``buf`` (runs of non-whitespace bytes)."""
    n = 0
    inside = False
    for i in range(len(buf)):
        space = is_space(buf[i])
        if not space and not inside:
            n += 1
        inside = not space
    return n


@njit(**JIT)
def find_hashed(buf, start, end, h, table, word_bytes, word_offsets):
    """Id of the word ``buf[start:end]`` whose FNV-1a hash is ``h``, or -1."""
    mask = np.uint64(len(table) - 1)
    slot = h & mask
    n = end - start
    while True:
        w = table[slot]
        if w < 0:
            return -1
        lo = word_offsets[w]
        if word_offsets[w + 1] - lo == n:
            same = True
            for k in range(n):
                if word_bytes[lo + k] != buf[start + k]:
                    same = False
                    break
            if same:
                return w
        slot = (slot + np.uint64(1)) & mask


@njit(**JIT)
def scan_word(buf, i):
    """End of the word starting at ``buf[i]`` (a non-space byte) and its FNV-1a hash,
    in one pass."""
    n = len(buf)
    h = (FNV_OFFSET ^ np.uint64(buf[i])) * FNV_PRIME
    j = i + 1
    while j < n:
        c = buf[j]
        if is_space(c):
            break
        h = (h ^ np.uint64(c)) * FNV_PRIME
        j += 1
    return j, h


@njit(**JIT)
def put_varint(out, k, value):
    """Write ``value`` (≥ 0) at ``out[k]`` as LEB128: 7 bits a byte, low bits first,
    the high bit set on every byte but the last. Returns the index after it."""
    while value >= 128:
        out[k] = (value & 127) | 128
        value >>= 7
        k += 1
    out[k] = value
    return k + 1


LINE_END = 0
BLOCK_END = 1
"""Spool codes: a token of type t is t + 2."""


@njit(**JIT)
def count_block(buf, table, arena, offsets, counts, first, key_base, n_types, arena_used, spool):
    """Count the words of ``buf``; a new word gets the next id, its bytes go to
    ``arena`` and ``first[id]`` is ``key_base`` plus its index among the block's tokens.

    The caller guarantees room for ``len(buf)`` more bytes and as many more words
    as ``buf`` has (:func:`count_tokens`, or ``len(buf) // 2 + 1``), with the table
    at most half full. Unless ``spool`` is empty, the block is also written there (see :func:`decode_spool`); it then needs room for
    ``4 * len(buf) + 8`` bytes (a token, at most 5 bytes, and a line end each take
    at least a byte of text). Returns (types, arena bytes, tokens, spool bytes).
    """
    mask = np.uint64(len(table) - 1)
    emit = len(spool) > 0
    tokens = 0
    k = 0
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if is_space(c):
            if c == 10 and emit:  # (every line, empty ones too: a language model predicts </s>)
                spool[k] = LINE_END
                k += 1
            i += 1
            continue
        j, h = scan_word(buf, i)
        slot = h & mask
        while True:
            w = table[slot]
            if w < 0:
                w = n_types
                table[slot] = w
                copy_items(arena, arena_used, buf, i, j)
                arena_used += j - i
                offsets[n_types + 1] = arena_used
                counts[n_types] = 1
                first[n_types] = key_base + tokens
                n_types += 1
                break
            lo = offsets[w]
            if offsets[w + 1] - lo == j - i:
                same = True
                for q in range(j - i):
                    if arena[lo + q] != buf[i + q]:
                        same = False
                        break
                if same:
                    counts[w] += 1
                    break
            slot = (slot + np.uint64(1)) & mask
        if emit:
            k = put_varint(spool, k, np.int64(w) + 2)
        tokens += 1
        i = j
    if emit:
        spool[k] = BLOCK_END
        k += 1
    return n_types, arena_used, tokens, k


class TypeArrays(NamedTuple):
    """Counted types as one value for the kernels: word ``i`` is
    ``arena[offsets[i]:offsets[i+1]]``, seen ``counts[i]`` times, first at key ``first[i]``."""

    arena: np.ndarray  # uint8
    offsets: np.ndarray  # int64 (n+1)
    counts: np.ndarray  # int64 (n)
    first: np.ndarray  # int64 (n)


@njit(**JIT)
def partition_of(arena, offsets, n, skip, out, types, nbytes):
    """``out[i]``: the partition of word i, from the high half of its FNV-1a hash
    (the hash tables use the low bits), one of ``len(types)``; adds each word to
    its partition's ``types`` and its length to ``nbytes``. A word with
    ``skip[i] >= 0`` (when ``skip`` is not empty) gets ``len(types)``: none."""
    n_parts = np.uint64(len(types))
    for i in range(n):
        if len(skip) > 0 and skip[i] >= 0:
            out[i] = len(types)
            continue
        p = (fnv1a(arena, offsets[i], offsets[i + 1]) >> np.uint64(32)) % n_parts
        out[i] = p
        types[p] += 1
        nbytes[p] += offsets[i + 1] - offsets[i]


@njit(**JIT)
def relabel(ids, part, lo_part, hi_part, new_ids, base):
    """``ids[i] = new_ids[ids[i]] + base`` for the entries whose partition lies in
    ``lo_part..hi_part-1`` (-1 stays -1 in ``new_ids``; an empty ``new_ids``
    leaves the ids as they are, and -1 stays -1)."""
    for i in range(len(ids)):
        if lo_part <= part[i] < hi_part:
            w = ids[i] if len(new_ids) == 0 or ids[i] < 0 else new_ids[ids[i]]
            ids[i] = w + base if w >= 0 else -1


MERGE_BATCH = 16
"""merge_types hashes this many words ahead and prefetches their table slots and
entries: a merge is bound by cache misses."""


@njit(**JIT)
def merge_types(src, n_src, src_part, lo_part, hi_part, dst, table, n_types, arena_used,
                to_merged, fresh):
    """Add counted types ``src`` (:class:`TypeArrays`) to the table of ``dst``:
    counts add up, the first occurrence is the earlier. With a non-empty
    ``src_part``, only the types whose partition lies in ``lo_part..hi_part-1``.
    ``to_merged[i]`` gets source type i's id in ``dst`` (unless ``to_merged`` is
    empty). ``fresh`` says none of
    the source's words is in ``dst`` yet (it then skips comparing words). The
    caller guarantees room as for :func:`count_block`. Returns (types, arena bytes)."""
    arena, offsets, counts, first = dst
    mask = np.uint64(len(table) - 1)
    every = len(src_part) == 0
    batch = np.empty(MERGE_BATCH, dtype=np.int64)
    slots = np.empty(MERGE_BATCH, dtype=np.uint64)
    i = 0
    while i < n_src:
        m = 0
        while i < n_src and m < MERGE_BATCH:
            if every or lo_part <= src_part[i] < hi_part:
                batch[m] = i
                slots[m] = fnv1a(src.arena, src.offsets[i], src.offsets[i + 1]) & mask
                prefetch_item(table, slots[m])
                m += 1
            i += 1
        for q in range(m):
            w = table[slots[q]]
            if w >= 0:
                prefetch_item(counts, w)
                prefetch_item(offsets, w)
        for q in range(m):
            j = batch[q]
            lo, hi = src.offsets[j], src.offsets[j + 1]
            slot = slots[q]
            while True:
                w = table[slot]
                if w < 0:
                    w = n_types
                    table[slot] = w
                    copy_items(arena, arena_used, src.arena, lo, hi)
                    arena_used += hi - lo
                    offsets[n_types + 1] = arena_used
                    counts[w] = 0
                    first[w] = src.first[j]
                    n_types += 1
                    break
                if not fresh and offsets[w + 1] - offsets[w] == hi - lo:
                    same = True
                    base = offsets[w]
                    for k in range(hi - lo):
                        if arena[base + k] != src.arena[lo + k]:
                            same = False
                            break
                    if same:
                        break
                slot = (slot + np.uint64(1)) & mask
            counts[w] += src.counts[j]
            first[w] = min(first[w], src.first[j])
            if len(to_merged) > 0:
                to_merged[j] = w
    return n_types, arena_used


@njit(**JIT)
def fold_types(src, lo, hi, table, dst, found):
    """For the source types ``lo..hi-1`` (:class:`TypeArrays`) that the table of
    ``dst`` already holds: add their counts there and keep the earlier first
    occurrence. ``found[i]``: source type i's id in ``dst``, or -1. Only reads the
    table, and writes only the entries it finds: threads may fold disjoint ranges
    of one source into one ``dst`` at once (a source's types are distinct)."""
    arena, offsets, counts, first = dst
    mask = np.uint64(len(table) - 1)
    hashes = np.empty(MERGE_BATCH, dtype=np.uint64)
    for start in range(lo, hi, MERGE_BATCH):
        end = min(start + MERGE_BATCH, hi)
        for i in range(start, end):
            h = fnv1a(src.arena, src.offsets[i], src.offsets[i + 1])
            hashes[i - start] = h
            prefetch_item(table, h & mask)
        for i in range(start, end):
            w = table[hashes[i - start] & mask]
            if w >= 0:
                prefetch_item(offsets, w)
                prefetch_item(counts, w)
                prefetch_item(first, w)
        for i in range(start, end):
            w = find_hashed(src.arena, src.offsets[i], src.offsets[i + 1], hashes[i - start],
                            table, arena, offsets)
            if w >= 0:
                counts[w] += src.counts[i]
                first[w] = min(first[w], src.first[i])
            found[i] = w


@njit(**JIT)
def gather_band(types, part, lo_part, hi_part, type_at, byte_at, ids, counts, first, lengths,
                words):
    """Copy the types (:class:`TypeArrays`) whose partition ``part[i]`` lies in
    ``lo_part..hi_part-1`` into arrays grouped by partition, in table order within
    each: type i goes to index ``type_at[p - lo_part]`` (which then moves on) of
    ``ids`` (i itself), ``counts``, ``first`` and ``lengths``, and its bytes to
    ``words`` at ``byte_at[p - lo_part]``. One pass in table order."""
    arena, offsets, src_counts, src_first = types
    for i in range(len(part)):
        p = part[i]
        if lo_part <= p < hi_part:
            k = type_at[p - lo_part]
            type_at[p - lo_part] = k + 1
            ids[k] = i
            counts[k] = src_counts[i]
            first[k] = src_first[i]
            lo, hi = offsets[i], offsets[i + 1]
            lengths[k] = hi - lo
            w = byte_at[p - lo_part]
            copy_items(words, w, arena, lo, hi)
            byte_at[p - lo_part] = w + hi - lo


@njit(**JIT)
def gather_words(arena, offsets, order, out, out_offsets):
    """Copy the words ``order`` lists into ``out``, in that order, with their offsets."""
    k = 0
    out_offsets[0] = 0
    for j in range(len(order)):
        lo, hi = offsets[order[j]], offsets[order[j] + 1]
        copy_items(out, k, arena, lo, hi)
        k += hi - lo
        out_offsets[j + 1] = k


@njit(**JIT)
def decode_spool(spool, start, end, type_ids, line_end, ids, sent_ends):
    """Word ids and sentence ends of the block that starts at byte ``spool[start]``.

    A spool is a byte string of LEB128 codes (see :func:`put_varint`): a token of
    type t (its index among the distinct words, in order of first occurrence, so
    that frequent words take one or two bytes) is t + 2; ``LINE_END`` follows each
    line and ``BLOCK_END`` each block. ``type_ids`` maps a type to its
    word id or -1 (not in the vocabulary); ``line_end`` ≥ 0 is the id that ends
    every line (a language model's ``</s>``). The result equals
    :func:`encode_block` on the block's text. Returns (index after the block, n_ids,
    n_sentences, whether the block ended before ``end``).
    """
    n_ids = 0
    n_sents = 0
    last_end = 0
    k = start
    while k < end:
        b = spool[k]
        k += 1
        code = np.int64(b & 127)
        shift = 7
        while b >= 128:
            if k >= end:
                return k, n_ids, n_sents, False
            b = spool[k]
            k += 1
            code |= np.int64(b & 127) << shift
            shift += 7
        if code >= 2:
            w = type_ids[code - 2]
            if w >= 0:
                ids[n_ids] = w
                n_ids += 1
        else:
            if code == LINE_END and line_end >= 0:
                ids[n_ids] = line_end
                n_ids += 1
            if n_ids > last_end:
                sent_ends[n_sents] = n_ids
                n_sents += 1
                last_end = n_ids
            if code == BLOCK_END:
                return k, n_ids, n_sents, True
    return k, n_ids, n_sents, False


@njit(**JIT)
def spool_ids(ids, sent_ends, n_sents, out):
    """A block's word ids and sentence ends as spool codes at ``out`` (at least
    5 bytes an id, plus one a sentence and one), a type being a word id: with
    ``type_ids`` the identity, :func:`decode_spool` gives them back. Returns the
    codes' length."""
    k = 0
    i = 0
    for s in range(n_sents):
        while i < sent_ends[s]:
            k = put_varint(out, k, np.int64(ids[i]) + 2)
            i += 1
        out[k] = LINE_END
        k += 1
    out[k] = BLOCK_END
    return k + 1


@njit(**JIT)
def encode_block(buf, table, word_bytes, word_offsets, unknown, line_end, ids, sent_ends):
    """Turn a byte block into word ids.

    Words are split on ASCII whitespace; a newline ends a sentence. A word not in
    the vocabulary is dropped, or takes the id ``unknown`` if that is ≥ 0; with
    ``line_end`` ≥ 0, that id ends every line, an empty one too (a language
    model's ``<unk>`` and ``</s>``). Writes the ids and the exclusive end of each
    non-empty sentence; returns (n_ids, n_sentences). The block's end also ends a
    sentence (without ``line_end``: only a newline ends a line).
    """
    n_ids = 0
    n_sents = 0
    last_end = 0
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if c == 10:  # newline
            if line_end >= 0:
                ids[n_ids] = line_end
                n_ids += 1
            if n_ids > last_end:
                sent_ends[n_sents] = n_ids
                n_sents += 1
                last_end = n_ids
            i += 1
        elif is_space(c):
            i += 1
        else:
            j, h = scan_word(buf, i)
            w = find_hashed(buf, i, j, h, table, word_bytes, word_offsets)
            if w < 0:
                w = unknown
            if w >= 0:
                ids[n_ids] = w
                n_ids += 1
            i = j
    if n_ids > last_end:
        sent_ends[n_sents] = n_ids
        n_sents += 1
    return n_ids, n_sents
