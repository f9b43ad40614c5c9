#!/usr/bin/env python
"""Where one CBOW word's time goes with subwords, beside the floor of each part.

Three builds of the same run (one thread, one epoch, a Huffman tree), alternating,
each a whole process timed by its training seconds: CBOW without subwords, with
subwords but no n-grams (``--maxn 0``: each word's one row through the window's
ring), and with fastText's n-grams (3-6). The differences are the ring's cost and
the n-gram rows' cost, per corpus word.

The floors assume every row in L1 (two 32-byte loads and one 32-byte store a
cycle, as on Zen 2 and later and on Intel since Haswell) at --ghz:

- the ring, per context word of each example: its slot's sum added to h (a row
  loaded), then the sum and the pending step moved (two rows loaded and stored);
- the n-gram rows, per kept word: each row loaded once into the word's sum when
  it enters the window, and loaded and stored once when its steps are added.

    python scripts/benchmarks/bench_subword_phases.py --runs 3
"""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
BUILDS = {"without subwords": {}, "subwords, no n-grams": {"subwords": True, "maxn": 0},
          "subwords, n-grams 3-6": {"subwords": True}}


def child(corpus: str, name: str) -> None:
    sys.path.insert(0, str(REPO))
    import numpy as np

    import hsw2v
    from hsw2v.counting.vocab import keep_probabilities

    m = hsw2v.train(corpus, tree="huffman", epochs=1, threads=1, progress=False,
                    **BUILDS[name])
    counts = m.vocab.counts.astype(np.float64)
    kept = counts * keep_probabilities(m.vocab.counts, m.settings.sample)
    rows = np.diff(m.subwords.offsets) if m.ngram_vectors is not None else np.ones(len(counts))
    print(json.dumps({"train_s": m.seconds["train"], "words": float(counts.sum()),
                      "kept": float(kept.sum()), "rows_kept": float((kept * rows).sum()),
                      "contexts": float(kept.sum() * (m.settings.window + 1))}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--words", type=int, default=5_000_000, help="the corpus's first N words")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--ghz", type=float, default=3.2)
    p.add_argument("--child")
    a = p.parse_args()
    if a.child:
        child(a.corpus, a.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "c.txt"
        with gzip.open(a.corpus, "rt") as f:
            words = f.read(12 * a.words).split()[:a.words]
        corpus.write_text("\n".join(" ".join(words[i:i + 1000])
                                    for i in range(0, len(words), 1000)))
        res: dict[str, list] = {n: [] for n in BUILDS}
        for r in range(a.runs + 1):  # (the first round compiles: not counted)
            for name in BUILDS:
                out = subprocess.run([sys.executable, __file__, "--child", name, "--corpus",
                                      str(corpus)], capture_output=True, text=True, check=True)
                if r:
                    res[name].append(json.loads(out.stdout.splitlines()[-1]))
    ns = {n: statistics.median(x["train_s"] / x["words"] * 1e9 for x in v) for n, v in res.items()}
    full = res["subwords, n-grams 3-6"][0]
    per_word = full["words"]
    cycle = 1 / a.ghz
    ring_floor = full["contexts"] / per_word * 25 * cycle  # 3 rows loaded, 2 stored: 25 cycles
    ngram_rows = (full["rows_kept"] - full["kept"]) / per_word
    rows_floor = ngram_rows * 12.5 * cycle  # 2 loads and 1 store of 400 bytes: 12.5 cycles
    names = list(BUILDS)
    print(f"one thread, {a.words:,} words, 1 epoch, Huffman, median of {a.runs} runs; "
          f"{full['kept'] / per_word:.3f} of the words kept, {ngram_rows:.1f} n-gram rows and "
          f"{full['contexts'] / per_word:.2f} context words a corpus word")
    print("| part | ns a word | floor, ns | what the floor counts |\n|---|---|---|---|")
    print(f"| CBOW without subwords | {ns[names[0]]:.0f} | | (the CBOW table above) |")
    print(f"| the window's ring | {ns[names[1]] - ns[names[0]]:.0f} | {ring_floor:.1f} | "
          "a context word's slot: a row loaded into h, its sum and pending step moved |")
    print(f"| the n-gram rows | {ns[names[2]] - ns[names[1]]:.0f} | {rows_floor:.1f} | "
          "each row of a kept word loaded into its sum, then loaded and stored with its steps |")
    print(f"| the whole kernel with subwords | {ns[names[2]]:.0f} | | |")


if __name__ == "__main__":
    main()
