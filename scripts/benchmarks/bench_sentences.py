#!/usr/bin/env python
"""Training from sentences in memory against training from the same text file.

    python scripts/benchmarks/bench_sentences.py                 # enwiki-17m, 3 pairs of runs
    python scripts/benchmarks/bench_sentences.py --runs 5 --words 5000000

The corpus is cut into sentences of 1,000 words: a text file with one sentence a
line, and the same sentences as a Python list of token lists. Each run is a fresh
process that trains CBOW with the defaults (5 epochs, dim 100, all cores); its
time is the whole ``hsw2v.train`` call (for the list: writing the sentences out
included; building the list is the user's and is not counted). The runs
alternate, list then file, and the ratio reported is the median of the per-pair
ratios of wall times. Memory: each process's peak RSS (``ru_maxrss``) minus its
RSS just before ``hsw2v.train``, so the list itself is not counted.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"

RUN = r"""
import gzip, json, resource, sys, time
sys.path.insert(0, {repo!r})
import hsw2v

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

mode, path, words = sys.argv[1], sys.argv[2], int(sys.argv[3])
corpus = path
if mode == "list":
    with open(path, encoding="utf-8") as f:
        corpus = [line.split() for line in f]
before = rss()
start = time.perf_counter()
model = hsw2v.train(corpus, progress=False, seed=1)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"seconds": seconds, "before": before, "peak": peak,
                   "words": len(model.words), "loss": model.epoch_loss[-1]}}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--words", type=int, default=0, help="only the first N words (0: all)")
    p.add_argument("--runs", type=int, default=3, help="pairs of runs")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "corpus.txt"
        opener = gzip.open if a.corpus.endswith(".gz") else open
        with opener(a.corpus, "rb") as f:
            words = f.read().split()
        if a.words:
            words = words[:a.words]
        with open(text, "wb") as out:
            out.writelines(b" ".join(words[i:i + 1000]) + b"\n" for i in range(0, len(words), 1000))
        n_words = len(words)
        del words
        script = RUN.format(repo=str(REPO))
        # one untimed run compiles (or loads) the kernels
        subprocess.run([sys.executable, "-c", script, "file", str(text), str(n_words)], check=True,
                       capture_output=True)
        results: dict[str, list[dict]] = {"list": [], "file": []}
        for _ in range(a.runs):
            for mode in ("list", "file"):
                out = subprocess.run([sys.executable, "-c", script, mode, str(text), str(n_words)],
                                     check=True, capture_output=True, text=True, env=os.environ)
                results[mode].append(json.loads(out.stdout))
                r = results[mode][-1]
                print(f"# {mode}: {r['seconds']:.2f} s, peak beyond the start "
                      f"{(r['peak'] - r['before']) / 2**20:.0f} MiB", file=sys.stderr, flush=True)
    ratios = [x["seconds"] / y["seconds"] for x, y in zip(results["list"], results["file"])]
    beyond = {m: statistics.median((r["peak"] - r["before"]) / 2**20 for r in rs)
              for m, rs in results.items()}
    print(f"{n_words:,} words in sentences of 1,000; CBOW defaults; {os.cpu_count()} cores; "
          f"{a.runs} pairs of runs\n")
    print("| | whole run (median) | peak RSS beyond the start of train (median) |")
    print("|---|---|---|")
    for m in ("file", "list"):
        print(f"| from a {'text file' if m == 'file' else 'list of token lists'} | "
              f"{statistics.median(r['seconds'] for r in results[m]):.2f} s | {beyond[m]:.0f} MiB |")
    print(f"\nlist / file: median of per-pair ratios **{statistics.median(ratios):.3f}×** "
          f"({', '.join(f'{r:.3f}' for r in ratios)})")


if __name__ == "__main__":
    main()
