#!/usr/bin/env python
"""Word-pair sets by frequency band: where one system's vectors trail another's.

Each pair goes to the band of its rarer word's rank in the first model's
vocabulary (count order); each band's pairs are scored by hsw2v's evaluator as
``bench_subwords.py`` scores a whole set (every pair, unseen words given the
vectors their model builds), and each system's figure is the mean over its models.

    python scripts/benchmarks/pair_bands.py --pairs DIR \\
        hsw2v=hl1.npz,hl2.npz fasttext=ft1.bin,ft2.bin

Models: hsw2v's ``.npz`` model files, fastText's ``.bin`` files (the fasttext-wheel
package), as ``bench_subwords.py --child`` saves them.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench import DATA, pair_files
from bench_subwords import vectors_of

BANDS = ((0, 5_000), (5_000, 20_000), (20_000, None))


def main() -> None:
    from hsw2v.evaluation.evaluate import _parse_pairs, _vocab, evaluate_word_pairs

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
    rank, _ = _vocab(next(iter(systems.values()))[0].words, case_insensitive=True)
    names = list(systems)
    print("| set | band (rarer word's rank) | pairs | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 3) + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in [DATA / "wordsim353.tsv", DATA / "simlex999.txt", *pair_files(a.pairs)]:
            pairs = _parse_pairs(str(path))
            rarer = [max(rank.get(x.upper(), len(rank)), rank.get(y.upper(), len(rank)))
                     for x, y, _ in pairs]
            for lo, hi in BANDS:
                band = [t for t, r in zip(pairs, rarer) if lo <= r and (hi is None or r < hi)]
                if len(band) < 10:
                    continue
                part = Path(tmp) / "band.txt"  # scored by the library, as bench_subwords scores
                part.write_text("".join(f"{x}\t{y}\t{g}\n" for x, y, g in band), encoding="utf-8")
                means = [statistics.mean(evaluate_word_pairs(v, str(part))["spearman"]
                                         for v in systems[n]) for n in names]
                cells = [f"{m:.3f}" for m in means]
                label = f"{lo:,}–{hi:,}" if hi else f"{lo:,}+"
                print(f"| {path.stem} | {label} | {len(band)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
