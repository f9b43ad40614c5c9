"""The word2vec text format's numba kernels: float32 values as C's ``%.9g`` and
whole lines of rows. Loaded only when vectors are written (reading them, and
commands that only read, need no numba)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit.helpers import EXACT

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


_TENS = 10 ** np.arange(9, dtype=np.int64)
"""10^0 … 10^8: digit k of a nine-digit integer d is ``d // _TENS[8 - k] % 10``."""


@njit(**EXACT)
def format_g9(x, out, n):
    """Write float ``x`` like C's ``%.9g`` at ``out[n:]`` and return the new end.

    Nine significant digits are enough for any float32 to read back exactly; the
    digits come from one float64 scaling, within 1e-15 of the exact decimal, so a
    float32 always round-trips (a tie may round differently from C's printf).
    Bytes are written one by one (no strings, no allocation: each would add
    seconds to the first run's compile).
    """
    if np.isnan(x):
        out[n], out[n + 1], out[n + 2] = 110, 97, 110  # 'nan'
        return n + 3
    if x < 0 or (x == 0 and np.signbit(x)):
        out[n] = 45  # '-'
        n += 1
        x = -x
    if x == np.inf:
        out[n], out[n + 1], out[n + 2] = 105, 110, 102  # 'inf'
        return n + 3
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
    last = 8  # the last significant digit
    while last > 0 and d // _TENS[8 - last] % 10 == 0:
        last -= 1
    if -4 <= e < 9:
        if e >= 0:
            for k in range(e + 1):  # k <= e <= 8
                out[n] = 48 + d // _TENS[8 - k] % 10
                n += 1
            if last > e:
                out[n] = 46  # '.'
                n += 1
                for k in range(e + 1, last + 1):
                    out[n] = 48 + d // _TENS[8 - k] % 10
                    n += 1
        else:
            out[n], out[n + 1] = 48, 46  # '0.'
            n += 2
            for _ in range(-e - 1):
                out[n] = 48
                n += 1
            for k in range(last + 1):
                out[n] = 48 + d // _TENS[8 - k] % 10
                n += 1
        return n
    out[n] = 48 + d // _TENS[8]
    n += 1
    if last > 0:
        out[n] = 46
        n += 1
        for k in range(1, last + 1):
            out[n] = 48 + d // _TENS[8 - k] % 10
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
