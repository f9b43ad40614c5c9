#!/usr/bin/env python
"""Word-pair sets by frequency band: where one system's vectors trail another's.

Each pair goes to the band of its rarer word's rank in the first model's
vocabulary (count order); each model's Spearman correlation is computed over each
band's pairs (every pair, unseen words given the vectors their model builds), and
each system's figure is the mean over its models.

    python scripts/benchmarks/pair_bands.py --pairs DIR \\
        hsw2v=hl1.npz,hl2.npz fasttext=ft1.bin,ft2.bin

Models: hsw2v's ``.npz`` model files, fastText's ``.bin`` files (the fasttext-wheel
package), as ``bench_subwords.py --child`` saves them.
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np

from bench import DATA, pair_files
from bench_subwords import vectors_of

BANDS = ((0, 5_000), (5_000, 20_000), (20_000, None))


def read_pairs(path: Path) -> list[tuple[str, str, float]]:
    """The (word, word, score) lines of a tab-separated word-pair file."""
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if line.startswith("#") or len(fields) < 3:
            continue
        try:
            pairs.append((fields[0], fields[1], float(fields[2])))
        except ValueError:  # a header line
            continue
    return pairs


def cosines(vectors, pairs) -> np.ndarray:
    """Each pair's cosine, words looked up case-insensitively (first case variant),
    unseen ones built by the model (a null vector, cosine 0, where it builds none,
    as Bojanowski et al. (2017) score a word-only model's unseen words)."""
    index: dict[str, int] = {}
    for i, w in enumerate(vectors.words):
        index.setdefault(w.upper(), i)

    def vec(word: str) -> np.ndarray:
        i = index.get(word.upper())
        if i is not None:
            return vectors.matrix[i]
        built = vectors.unseen(word) if vectors.unseen is not None else None
        return np.zeros(vectors.matrix.shape[1]) if built is None else built  # (null: cosine 0)

    out = []
    for a, b, _ in pairs:
        x, y = vec(a), vec(b)
        out.append(float(x @ y) / (float(np.linalg.norm(x) * np.linalg.norm(y)) or 1.0))
    return np.array(out)


def main() -> None:
    from hsw2v.evaluation.evaluate import spearman

    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", help="a folder of word-pair files beside WS353 and SimLex-999")
    p.add_argument("systems", nargs="+", help="NAME=MODEL[,MODEL...]")
    a = p.parse_args()
    systems = {}
    for spec in a.systems:
        name, _, paths = spec.partition("=")
        systems[name] = [vectors_of("fasttext" if m.endswith(".bin") else "hsw2v", m)
                         for m in paths.split(",")]
    first = next(iter(systems.values()))[0]
    rank: dict[str, int] = {}
    for i, w in enumerate(first.words):
        rank.setdefault(w.upper(), i)
    names = list(systems)
    print("| set | band (rarer word's rank) | pairs | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 3) + "|")
    for path in [DATA / "wordsim353.tsv", DATA / "simlex999.txt", *pair_files(a.pairs)]:
        pairs = read_pairs(path)
        gold = np.array([g for *_, g in pairs])
        rarer = np.array([max(rank.get(x.upper(), len(rank)), rank.get(y.upper(), len(rank)))
                          for x, y, _ in pairs])
        cos = {n: [cosines(v, pairs) for v in models] for n, models in systems.items()}
        for lo, hi in BANDS:
            sel = (rarer >= lo) & (rarer < (hi if hi is not None else len(rank) + 1))
            if sel.sum() < 10:
                continue
            cells = [f"{statistics.mean(spearman(c[sel], gold[sel]) for c in cos[n]):.3f}"
                     for n in names]
            band = f"{lo:,}–{hi:,}" if hi else f"{lo:,}+"
            print(f"| {path.stem} | {band} | {int(sel.sum())} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
