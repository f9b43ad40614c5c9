"""Synthetic Zipf corpora for the scale benchmarks: tokens drawn from numpy's Zipf
distribution (exponent 1.1: about 4.5M types in 20M tokens, 35M in 200M), each
rank spelled as a word of up to eight letters, in lines of 1,000 words, written
as shards of plain text.

    python scripts/tools/zipf_corpus.py OUT_DIR --tokens 20M [--shards 8] [--seed 1] [--exponent 1.1]

Exponent 1.3 grows the vocabulary about as English text does (2.4M types in 200M
tokens); 1.1 is the hard case for counting (42.7M types in 200M tokens).
"""
from __future__ import annotations

import argparse
import os

import numpy as np

LETTERS = 8
MAX_RANK = 26**LETTERS - 1


def words_bytes(ranks: np.ndarray, line_words: int = 1000, offset: int = 0) -> bytes:
    """The ranks as base-26 words (a = 0 …), each followed by a space, or a newline
    after every ``line_words``-th token of the corpus (``offset``: tokens before)."""
    ranks = (ranks % (MAX_RANK + 1)).astype(np.int64)  # the heavy tail wraps, staying distinct
    digits = np.stack([(ranks // 26**k) % 26 for k in range(LETTERS)], axis=1)[:, ::-1]
    length = np.ones(len(ranks), dtype=np.int64)
    for k in range(1, LETTERS):
        length += ranks >= 26**k
    cells = np.full((len(ranks), LETTERS + 1), 0, dtype=np.uint8)
    cells[:, :LETTERS] = digits + ord("a")
    keep = np.arange(LETTERS + 1)[None, :] >= (LETTERS - length)[:, None]
    ends = np.where((offset + np.arange(1, len(ranks) + 1)) % line_words == 0, ord("\n"), ord(" "))
    cells[:, LETTERS] = ends
    return cells[keep].tobytes()


def write_corpus(directory: str, tokens: int, shards: int = 8, seed: int = 1,
                 exponent: float = 1.1, chunk: int = 1 << 20) -> list[str]:
    """Write ``tokens`` Zipf tokens as ``shards`` files in ``directory``; their paths."""
    rng = np.random.default_rng(seed)
    paths = []
    per_shard = -(-tokens // shards)
    done = 0
    for s in range(shards):
        path = os.path.join(directory, f"shard-{s:04d}.txt")
        with open(path, "wb") as f:
            left = min(per_shard, tokens - done)
            while left > 0:
                n = min(chunk, left)
                f.write(words_bytes(rng.zipf(exponent, n) - 1, offset=done))
                done += n
                left -= n
        paths.append(path)
    return paths


def parse_count(text: str) -> int:
    """'20M', '200M', '1.5G' or a plain number."""
    scale = {"K": 10**3, "M": 10**6, "G": 10**9}
    if text[-1].upper() in scale:
        return int(float(text[:-1]) * scale[text[-1].upper()])
    return int(text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--tokens", default="20M")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--exponent", type=float, default=1.1)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for p in write_corpus(args.out_dir, parse_count(args.tokens), args.shards, args.seed,
                           args.exponent):
        print(p)
