"""numba kernels: corpus encoding and the CBOW / skip-gram SGD loops.

Every kernel is small, pure and compiled with ``nogil`` so that Python threads
run them in parallel (Hogwild: threads share the weights without locks). Each
thread owns its RNG state (a one-element uint64 array) and scratch buffers.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import literally, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

JIT = {"nogil": True, "fastmath": True, "cache": True}

_LCG_MUL = np.uint64(25214903917)
_LCG_ADD = np.uint64(11)
_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@intrinsic
def prefetch_row(typingctx, matrix, row):
    """Ask the CPU to start loading ``matrix[row]`` (a 2-D C-contiguous array)
    into the cache, every 64-byte line of it; a hint, with no effect on results."""
    sig = types.void(matrix, row)

    def codegen(context, builder, signature, args):
        aryty, rowty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(types.intp, 0)
        index = context.cast(builder, args[1], rowty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [index, zero])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        base = builder.bitcast(ptr, i8p)
        itemsize = context.get_abi_sizeof(context.get_data_type(aryty.dtype))
        n_bytes = builder.mul(builder.extract_value(ary.shape, 1),
                              context.get_constant(types.intp, itemsize))
        with cgutils.for_range_slice(builder, context.get_constant(types.intp, 0), n_bytes,
                                     context.get_constant(types.intp, 64)) as (offset, _):
            builder.call(fn, [builder.gep(base, [offset]), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(**JIT)
def lcg_next(r):
    """Next state of word2vec.c's 48-bit-multiplier linear congruential generator."""
    return r * _LCG_MUL + _LCG_ADD


@njit(**JIT)
def lcg_uniform(r):
    """A float in [0, 1) from the high 24 bits of a generator state."""
    return np.float32(r >> np.uint64(40)) * np.float32(1.0 / 16777216.0)


@njit(**JIT)
def fnv1a(buf, start, end):
    """FNV-1a hash of ``buf[start:end]``."""
    h = _FNV_OFFSET
    for k in range(start, end):
        h = (h ^ np.uint64(buf[k])) * _FNV_PRIME
    return h


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
    h = (_FNV_OFFSET ^ np.uint64(buf[i])) * _FNV_PRIME
    j = i + 1
    while j < n:
        c = buf[j]
        if is_space(c):
            break
        h = (h ^ np.uint64(c)) * _FNV_PRIME
        j += 1
    return j, h


@njit(**JIT)
def is_space(c):
    """ASCII whitespace as Python's bytes.split() sees it: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or 9 <= c <= 13


@njit(**JIT)
def count_block(buf, table, arena, offsets, counts, n_types, arena_used, spool):
    """Count the words of ``buf``; a new word gets the next id and its bytes go to ``arena``.

    The caller guarantees room for ``len(buf)`` more bytes and ``len(buf) // 2 + 1``
    more words, with the table at most half full. Unless ``spool`` is empty, the
    block is also written there (see :func:`decode_spool`); it then needs room for
    ``len(buf) + 1`` entries (a token and a line end each take at least a byte).
    Returns (types, arena bytes, tokens, spool entries).
    """
    mask = np.uint64(len(table) - 1)
    emit = len(spool) > 0
    tokens = 0
    k = 0
    line_tokens = 0
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if is_space(c):
            if c == 10 and emit and line_tokens > 0:
                spool[k] = -1
                k += 1
                line_tokens = 0
            i += 1
            continue
        j, h = scan_word(buf, i)
        slot = h & mask
        while True:
            w = table[slot]
            if w < 0:
                w = n_types
                table[slot] = w
                arena[arena_used:arena_used + j - i] = buf[i:j]
                arena_used += j - i
                offsets[n_types + 1] = arena_used
                counts[n_types] = 1
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
            spool[k] = w
            k += 1
            line_tokens += 1
        tokens += 1
        i = j
    if emit:
        spool[k] = -2
        k += 1
    return n_types, arena_used, tokens, k


@njit(**JIT)
def decode_spool(spool, start, end, type_ids, ids, sent_ends):
    """Word ids and sentence ends of the block that starts at ``spool[start]``.

    A spool holds each token's type id (its index among the distinct words, in
    order of first occurrence), -1 after each non-empty line and -2 after each
    block; ``type_ids`` maps a type to its word id or -1 (not in the vocabulary).
    The result equals :func:`encode_block` on the block's text. Returns (index
    after the block, n_ids, n_sentences, whether the block ended before ``end``).
    """
    n_ids = 0
    n_sents = 0
    last_end = 0
    k = start
    while k < end:
        t = spool[k]
        k += 1
        if t >= 0:
            w = type_ids[t]
            if w >= 0:
                ids[n_ids] = w
                n_ids += 1
        else:
            if n_ids > last_end:
                sent_ends[n_sents] = n_ids
                n_sents += 1
                last_end = n_ids
            if t == -2:
                return k, n_ids, n_sents, True
    return k, n_ids, n_sents, False


@njit(**JIT)
def encode_block(buf, table, word_bytes, word_offsets, ids, sent_ends):
    """Turn a byte block into word ids, dropping words not in the vocabulary.

    Words are split on ASCII whitespace; a newline ends a sentence. Writes the ids
    and the exclusive end of each non-empty sentence; returns (n_ids, n_sentences).
    The block's end also ends a sentence.
    """
    n_ids = 0
    n_sents = 0
    last_end = 0
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i]
        if c == 10:  # newline
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
            if w >= 0:
                ids[n_ids] = w
                n_ids += 1
            i = j
    if n_ids > last_end:
        sent_ends[n_sents] = n_ids
        n_sents += 1
    return n_ids, n_sents


LUT_MAX = 16.0
"""Branch scores beyond ±LUT_MAX are saturated: σ is 1 or 0 to within 1.2e-7."""
_LUT_SIZE = 1 << 13
_LUT_SCALE = _LUT_SIZE / (2 * LUT_MAX)
_LUT_X = np.linspace(-LUT_MAX, LUT_MAX, _LUT_SIZE + 1)
SIGMOID = (1.0 / (1.0 + np.exp(-_LUT_X))).astype(np.float32)
NEG_LOG_SIGMOID = np.logaddexp(0.0, -_LUT_X).astype(np.float32)


@njit(**JIT)
def branch_loss_grad(z):
    """(−log σ(z), 1 − σ(z)) by linear interpolation in tables (error < 1e-6), branch-free.

    z is the score of the branch taken: h·u for code 0, −h·u for code 1. Beyond
    −LUT_MAX the loss continues as −z.
    """
    t = min(max((z + LUT_MAX) * _LUT_SCALE, 0.0), _LUT_SIZE - 1e-3)
    i = int(t)
    frac = t - i
    loss = NEG_LOG_SIGMOID[i] + frac * (NEG_LOG_SIGMOID[i + 1] - NEG_LOG_SIGMOID[i])
    sig = SIGMOID[i] + frac * (SIGMOID[i + 1] - SIGMOID[i])
    return loss + max(-z - LUT_MAX, 0.0), np.float32(1.0) - sig


@njit(**JIT)
def hs_step(h, target, syn1, hot_rows, hot_slot, path_offsets, path_nodes, path_codes, alpha,
            grad_h, scratch, dim):
    """One SGD step of hierarchical softmax for predicting ``target`` from ``h``.

    Updates the inner-node vectors on the target's path, adds the gradient step
    for ``h`` to ``grad_h`` (the caller applies it), and returns -log P(target | h)
    computed before the update. Inner node n is read from and written to
    ``hot_rows[hot_slot[n]]`` when ``hot_slot[n] >= 0`` (a thread's private copy of
    a node near the root, see :func:`sync_hot_rows`), else ``syn1[n]``.

    The path's nodes are distinct, so all the scores are taken first (independent
    dot products) and the table lookups run as one loop over ``scratch`` (at least
    the path's length), exactly as node-by-node updates would. ``dim`` is the
    vector size (see :func:`train_cbow`).
    """
    p0 = path_offsets[target]
    n = path_offsets[target + 1] - p0
    for p in range(n):
        node = path_nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        x = np.float32(0.0)
        for d in range(dim):
            x += h[d] * u[d]
        scratch[p] = x
    loss = 0.0
    for p in range(n):
        sign = np.float32(1.0) - np.float32(2.0) * np.float32(path_codes[p0 + p])  # code 0: σ(x)
        branch_loss, slope = branch_loss_grad(sign * scratch[p])
        loss += branch_loss
        scratch[p] = sign * slope * alpha
    for p in range(n):
        node = path_nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        g = scratch[p]
        for d in range(dim):
            grad_h[d] += g * u[d]
            u[d] += g * h[d]
    return loss


@njit(**JIT)
def sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base):
    """Add this thread's changes to its private copies of the hot inner nodes to the
    shared vectors, then refresh the copies from them.

    The nodes near the root lie on almost every path; when threads share them, every
    update moves their cache lines between cores. Private copies, merged every few
    thousand words, keep CBOW scaling with threads (local SGD for those rows).
    """
    dim = syn1.shape[1]
    for k in range(len(hot_nodes)):
        row = syn1[hot_nodes[k]]
        for d in range(dim):
            row[d] += hot_rows[k, d] - hot_base[k, d]
            hot_rows[k, d] = row[d]
            hot_base[k, d] = row[d]


@njit(**JIT)
def subsample(ids, start, end, keep_prob, r, sen, sen_pos):
    """Copy the words of ``ids[start:end]`` that survive subsampling into ``sen``.

    ``sen_pos`` gets each kept word's index in ``ids``. Returns (kept, rng state).
    """
    m = 0
    for k in range(start, end):
        w = ids[k]
        pk = keep_prob[w]
        if pk < 1.0:
            r = lcg_next(r)
            if lcg_uniform(r) >= pk:
                continue
        sen[m] = w
        sen_pos[m] = k
        m += 1
    return m, r


@njit(**JIT)
def skipgram_centre(target, ctx, n_ctx, syn0, syn1, hot_rows, hot_slot, path_offsets, path_nodes,
                    path_codes, alpha, H, grad, gram, cross, X, G, dim):
    """Skip-gram steps for one centre word and its ``n_ctx`` context words ``ctx``.

    Gives word2vec.c's result, where the context words take turns and each sees the
    node vectors as the previous ones left them, but reads each node vector once:
    context c's score on node u is h_c·u + Σ_{c'<c} g_c' (h_c·h_c'), from the Gram
    matrix of the contexts, and the gradient it sends to h_c picks up the matching
    Σ_{c'<c} (Σ_n g_cn g_c'n) h_c' at the end. The path's nodes are distinct, so
    the scores X (contexts × path) are three small matrix products and a loop over
    the path per context. Inner nodes with ``hot_slot[n] >= 0`` live in
    ``hot_rows`` (see :func:`hs_step`). Returns Σ_c −log P(target | c).

    The row selection is written out at each use on purpose: a helper returning
    either row made CBOW about 1.5× slower in a one-thread benchmark.
    """
    p0 = path_offsets[target]
    n = path_offsets[target + 1] - p0
    for c in range(n_ctx):
        row = syn0[ctx[c]]
        for d in range(dim):
            H[c, d] = row[d]
            grad[c, d] = 0.0
        for c2 in range(c):
            s = np.float32(0.0)
            for d in range(dim):
                s += H[c, d] * H[c2, d]
            gram[c, c2] = s
    for p in range(n):
        node = path_nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        for c in range(n_ctx):
            x = np.float32(0.0)
            for d in range(dim):
                x += H[c, d] * u[d]
            X[c, p] = x
    loss = 0.0
    for c in range(n_ctx):
        for c2 in range(c):
            m = gram[c, c2]
            for p in range(n):
                X[c, p] += G[c2, p] * m
        for p in range(n):
            sign = np.float32(1.0) - np.float32(2.0) * np.float32(path_codes[p0 + p])
            branch_loss, slope = branch_loss_grad(sign * X[c, p])
            loss += branch_loss
            G[c, p] = sign * slope * alpha
        for c2 in range(c):
            s = np.float32(0.0)
            for p in range(n):
                s += G[c, p] * G[c2, p]
            cross[c, c2] = s
    for p in range(n):
        node = path_nodes[p0 + p]
        slot = hot_slot[node]
        u = hot_rows[slot] if slot >= 0 else syn1[node]
        for c in range(n_ctx):
            gc = G[c, p]
            for d in range(dim):
                grad[c, d] += gc * u[d]
        for c in range(n_ctx):
            gc = G[c, p]
            for d in range(dim):
                u[d] += gc * H[c, d]
    for c in range(n_ctx):
        for c2 in range(c):
            m = cross[c, c2]
            for d in range(dim):
                grad[c, d] += m * H[c2, d]
        row = syn0[ctx[c]]
        for d in range(dim):
            row[d] += grad[c, d]
    return loss


def for_dim(kernel, *args):
    """``kernel`` compiled for ``args``, whose last one, the vector size, becomes a
    compile-time constant; call the result with arguments of the same types.

    The training kernels ask for that constant with ``numba.literally``. Called
    through the dispatcher, they would be typed again on every call (tens of
    milliseconds a block); the compiled entry point is called directly instead.
    """
    sig = tuple(kernel.typeof_pyval(a) for a in args[:-1]) + (types.literal(int(args[-1])),)
    kernel.compile(sig)
    return kernel.get_overload(sig)


@njit(**JIT)
def tick_sync(since_sync, sync_every, syn1, hot_nodes, hot_rows, hot_base):
    """Count one word; on every ``sync_every``-th, merge the private hot rows
    (:func:`sync_hot_rows`). Returns the new count."""
    since_sync += 1
    if since_sync == sync_every:
        sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
        return 0
    return since_sync


@njit(**JIT)
def shrunk_window(i, m, window, r):
    """word2vec.c's context span [lo, hi) around word ``i`` of an ``m``-word sentence:
    the window shrunk by a random b in [0, window). Returns (lo, hi, rng state)."""
    r = lcg_next(r)
    b = np.int64(r >> np.uint64(16)) % window
    return max(0, i - window + b), min(m, i + window - b + 1), r


@njit(**JIT)
def prefetch_next(sen, i, m, window, syn0, syn1, hot_slot, path_offsets, path_nodes):
    """Start loading what the example after ``sen[i]`` needs and the cache may not
    hold: the inner nodes on its path outside the thread's private rows, and the
    input vector of the word that enters the window. Only a hint to the CPU: while
    the current example computes, those rows come from memory."""
    if i + 1 < m:
        nxt = sen[i + 1]
        for p in range(path_offsets[nxt], path_offsets[nxt + 1]):
            if hot_slot[path_nodes[p]] < 0:
                prefetch_row(syn1, path_nodes[p])
        if i + 1 + window < m:
            prefetch_row(syn0, sen[i + 1 + window])


@njit(**JIT)
def max_path_length(path_offsets):
    """The longest path in a tree's CSR path arrays."""
    longest = 0
    for w in range(len(path_offsets) - 1):
        longest = max(longest, path_offsets[w + 1] - path_offsets[w])
    return longest


@njit(**JIT)
def train_skipgram(ids, sent_ends, n_sents, syn0, syn1, path_offsets, path_nodes,
                   path_codes, keep_prob, window, alpha0, alpha1, rng, sen, sen_pos,
                   hot_nodes, hot_slot, hot_rows, hot_base, sync_every, dim):
    """Skip-gram over one block: each context word's vector predicts the centre word.

    The learning rate falls linearly from ``alpha0`` at the block's first word to
    ``alpha1`` after its last. The ``hot_*`` inner nodes are trained in this thread's
    private rows, merged every ``sync_every`` words (see :func:`train_cbow`).
    ``dim`` must equal ``syn0.shape[1]``: numba compiles (and caches) a version for
    each vector size, with the loops over it unrolled.
    Returns (sum of -log P, number of examples).
    """
    literally(dim)
    n_words = sent_ends[n_sents - 1] if n_sents > 0 else 0
    slope = (alpha1 - alpha0) / max(n_words, 1)
    width = 2 * window
    longest = max_path_length(path_offsets)
    H = np.empty((width, dim), dtype=np.float32)
    grad = np.empty((width, dim), dtype=np.float32)
    gram = np.empty((width, width), dtype=np.float32)
    cross = np.empty((width, width), dtype=np.float32)
    X = np.empty((width, longest), dtype=np.float32)
    G = np.empty((width, longest), dtype=np.float32)
    ctx = np.empty(width, dtype=np.int32)
    r = rng[0]
    loss = 0.0
    n_examples = 0
    start = 0
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    since_sync = 0
    for s in range(n_sents):
        end = sent_ends[s]
        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)
        start = end
        for i in range(m):
            since_sync = tick_sync(since_sync, sync_every, syn1, hot_nodes, hot_rows, hot_base)
            alpha = np.float32(alpha0 + slope * sen_pos[i])
            prefetch_next(sen, i, m, window, syn0, syn1, hot_slot, path_offsets, path_nodes)
            lo, hi, r = shrunk_window(i, m, window, r)
            n_ctx = 0
            for j in range(lo, hi):
                if j != i:
                    ctx[n_ctx] = sen[j]
                    n_ctx += 1
            if n_ctx > 0:
                loss += skipgram_centre(sen[i], ctx, n_ctx, syn0, syn1, hot_rows, hot_slot,
                                        path_offsets, path_nodes, path_codes, alpha, H, grad,
                                        gram, cross, X, G, dim)
                n_examples += n_ctx
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    rng[0] = r
    return loss, n_examples


@njit(**JIT)
def train_cbow(ids, sent_ends, n_sents, syn0, syn1, path_offsets, path_nodes,
               path_codes, keep_prob, window, alpha0, alpha1, cbow_mean, rng, sen, sen_pos,
               h, grad_h, hot_nodes, hot_slot, hot_rows, hot_base, sync_every, dim):
    """CBOW over one block: the mean (or sum) of the context vectors predicts the word.

    As in word2vec.c, the whole gradient step for h is added to every context
    vector. The ``hot_*`` inner nodes are trained in this thread's private rows,
    merged into ``syn1`` every ``sync_every`` words and at the end (see
    :func:`sync_hot_rows`; pass no hot nodes to train ``syn1`` directly). ``dim``
    is as in :func:`train_skipgram`. Returns (sum of -log P, number of examples).
    """
    literally(dim)
    n_words = sent_ends[n_sents - 1] if n_sents > 0 else 0
    slope = (alpha1 - alpha0) / max(n_words, 1)
    scratch = np.empty(max_path_length(path_offsets), dtype=np.float32)
    r = rng[0]
    loss = 0.0
    n_examples = 0
    start = 0
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    since_sync = 0
    for s in range(n_sents):
        end = sent_ends[s]
        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)
        start = end
        for i in range(m):
            since_sync = tick_sync(since_sync, sync_every, syn1, hot_nodes, hot_rows, hot_base)
            alpha = np.float32(alpha0 + slope * sen_pos[i])
            prefetch_next(sen, i, m, window, syn0, syn1, hot_slot, path_offsets, path_nodes)
            lo, hi, r = shrunk_window(i, m, window, r)
            if hi - lo < 2:
                continue
            h[:] = 0.0
            for j in range(lo, hi):
                if j != i:
                    c = syn0[sen[j]]
                    for d in range(dim):
                        h[d] += c[d]
            if cbow_mean:
                inv = np.float32(1.0) / np.float32(hi - lo - 1)
                for d in range(dim):
                    h[d] *= inv
            grad_h[:] = 0.0
            loss += hs_step(h, sen[i], syn1, hot_rows, hot_slot, path_offsets, path_nodes,
                            path_codes, alpha, grad_h, scratch, dim)
            for j in range(lo, hi):
                if j != i:
                    c = syn0[sen[j]]
                    for d in range(dim):
                        c[d] += grad_h[d]
            n_examples += 1
    sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)
    rng[0] = r
    return loss, n_examples


EXACT = {"nogil": True, "cache": True}
"""For number formatting: fastmath would assume away the NaN and infinity checks."""

_POW10 = 10.0 ** np.arange(-22, 23)
"""Powers of ten exact in float64 (10^-22 … 10^22); ``_POW10[k + 22] == 10.0**k``."""


@njit(**EXACT)
def _scale_pow10(a, k):
    """a · 10^k in float64, in at most a few exactly-represented steps."""
    while k > 22:
        a *= _POW10[44]
        k -= 22
    while k < -22:
        a *= _POW10[0]
        k += 22
    return a * _POW10[k + 22]


@njit(**EXACT)
def _put(out, n, text):
    """Append the ASCII bytes of ``text`` (a short literal) to ``out`` at ``n``."""
    for ch in text:
        out[n] = ord(ch)
        n += 1
    return n


@njit(**EXACT)
def format_g9(x, out, n):
    """Write float ``x`` like C's ``%.9g`` at ``out[n:]`` and return the new end.

    Nine significant digits are enough for any float32 to read back exactly; the
    digits come from one float64 scaling, within 1e-15 of the exact decimal, so a
    float32 always round-trips (a tie may round differently from C's printf).
    """
    if np.isnan(x):
        return _put(out, n, "nan")
    if x < 0 or (x == 0 and np.signbit(x)):
        out[n] = 45  # '-'
        n += 1
        x = -x
    if x == np.inf:
        return _put(out, n, "inf")
    if x == 0:
        out[n] = 48
        return n + 1
    e = int(np.floor(np.log10(x)))
    d = np.int64(np.rint(_scale_pow10(x, 8 - e)))
    if d >= 1_000_000_000:
        e += 1
        d = np.int64(np.rint(_scale_pow10(x, 8 - e)))
    elif d < 100_000_000:
        e -= 1
        d = np.int64(np.rint(_scale_pow10(x, 8 - e)))
    digits = np.empty(9, dtype=np.uint8)
    for k in range(8, -1, -1):
        digits[k] = 48 + d % 10
        d //= 10
    last = 8
    while last > 0 and digits[last] == 48:
        last -= 1
    if -4 <= e < 9:
        if e >= 0:
            for k in range(e + 1):
                out[n] = digits[k]  # k <= e <= 8
                n += 1
            if last > e:
                out[n] = 46  # '.'
                n += 1
                for k in range(e + 1, last + 1):
                    out[n] = digits[k]
                    n += 1
        else:
            n = _put(out, n, "0.")
            for _ in range(-e - 1):
                out[n] = 48
                n += 1
            for k in range(last + 1):
                out[n] = digits[k]
                n += 1
        return n
    out[n] = digits[0]
    n += 1
    if last > 0:
        out[n] = 46
        n += 1
        for k in range(1, last + 1):
            out[n] = digits[k]
            n += 1
    out[n] = 101  # 'e'
    n += 1
    if e < 0:
        out[n] = 45
        e = -e
    else:
        out[n] = 43  # '+'
    n += 1
    if e >= 100:
        out[n] = 48 + e // 100
        n += 1
    out[n] = 48 + (e // 10) % 10
    out[n + 1] = 48 + e % 10
    return n + 2


@njit(**EXACT)
def format_text_rows(word_bytes, word_offsets, matrix, start, end, out):
    """word2vec text lines (``word v1 … vD\\n``, values as ``%.9g``) for rows
    ``start:end`` into ``out``, which must hold 17 bytes per value plus the words
    and a space and newline per row. Returns the number of bytes written."""
    n = 0
    for w in range(start, end):
        for k in range(word_offsets[w], word_offsets[w + 1]):
            out[n] = word_bytes[k]
            n += 1
        for d in range(matrix.shape[1]):
            out[n] = 32
            n = format_g9(np.float64(matrix[w, d]), out, n + 1)
        out[n] = 10
        n += 1
    return n
