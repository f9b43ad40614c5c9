"""hsw2v.model.text_rows: float32 values as C's ``%.9g`` and whole word2vec text rows,
against Python's own formatting of the same floats."""
from __future__ import annotations

import numpy as np

from hsw2v.model.text_rows import format_text_rows


def test_text_values_print_like_printf_and_round_trip():
    """The formatting kernel writes what '%.9g' writes, and every float32 reads back."""
    from hsw2v.model.text_rows import format_g9

    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, 1e-4, 9.99999e-5, 1e8, 1e9, 123456789, 1234567890, 0.1,
               3.4e38, 1e-45, 1.17549435e-38, np.inf, -np.inf, 100.0, 5e-5]
    spread = rng.normal(0, 1, 5000) * 10.0 ** rng.integers(-40, 38, 5000)
    values = np.concatenate([special, rng.normal(0, 0.3, 20000), spread]).astype(np.float32)
    out = np.empty(32, np.uint8)
    for v in values:
        text = out[:format_g9(np.float64(v), out, 0)].tobytes().decode()
        assert text == f"{float(v):.9g}"
        assert np.float32(float(text)) == v or (np.isinf(v) and float(text) == v)
    assert out[:format_g9(np.float64("nan"), out, 0)].tobytes() == b"nan"


def rows_reference(words: list[str], matrix: np.ndarray, start: int, end: int) -> bytes:
    """word2vec text lines for rows ``start:end``, formatted by Python."""
    return "".join(f"{words[w]} " + " ".join(f"{float(x):.9g}" for x in matrix[w]) + "\n"
                   for w in range(start, end)).encode("utf-8")


def test_text_rows_are_pythons_g9_lines():
    """Rows of words (non-ASCII ones too) and values of every magnitude and sign,
    any range of them: the bytes of Python's lines, the count returned, and nothing
    written past them in a buffer of the documented size."""
    rng = np.random.default_rng(3)
    words = ["the", "naïve", "€uro", "x", "日本語", "a_b-c", "Zz", "q"]
    matrix = (rng.normal(0, 1, (len(words), 7))
              * 10.0 ** rng.integers(-40, 38, (len(words), 7))).astype(np.float32)
    matrix[0, :4] = [0.0, -0.0, 1.0, -1e-45]
    matrix[1, :3] = [3.4e38, 1e-4, 123456789.0]
    encoded = [w.encode("utf-8") for w in words]
    word_bytes = np.frombuffer(b"".join(encoded), np.uint8)
    word_offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded])]).astype(np.int64)
    for start, end in ((0, len(words)), (2, 5), (7, 8), (4, 4)):
        size = 17 * matrix.shape[1] * (end - start) + len(word_bytes) + 2 * (end - start)
        out = np.full(size + 64, 0xAA, np.uint8)
        n = format_text_rows(word_bytes, word_offsets, matrix, start, end, out)
        want = rows_reference(words, matrix, start, end)
        assert n == len(want) <= size
        assert out[:n].tobytes() == want
        assert (out[n:] == 0xAA).all()
        back = [line.split(" ") for line in out[:n].tobytes().decode("utf-8").splitlines()]
        assert [b[0] for b in back] == words[start:end]
        assert np.array_equal(np.array([b[1:] for b in back], np.float32).reshape(-1, 7),
                              matrix[start:end])
