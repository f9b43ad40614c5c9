#!/usr/bin/env python
"""Compare hsw2v configurations over several seeds: the vectors' quality on every
set, the whole job's wall time and peak memory.

Each configuration is a line of ``hsw2v train`` options. Every run is a separate
``hsw2v train`` process doing the whole job (count, learn the tree if asked,
train, write the vectors), timed from outside; for each seed the configurations
run one after another, so a slow spell of the machine falls on all of them.

    python scripts/benchmarks/bench_configs.py --seeds 5 --pairs DIR
    python scripts/benchmarks/bench_configs.py --seeds 5 \\
        --config "huffman 5=--tree huffman --epochs 5" \\
        --config "semantic adaptive T1 E3=--tree semantic --split adaptive --tree-epochs 1 --epochs 3"

Every run trains on ``../shared/data/enwiki-17m.txt.gz`` with dim 100, window 5,
min-count 5, sample 1e-3 and 2 threads unless a configuration says otherwise. The
vectors are scored on the Google analogies (the 30k most frequent words,
case-insensitive; also its semantic and syntactic halves), WordSim-353,
SimLex-999 and every word-pair file of ``--pairs DIR``. The table gives each
score's mean ± standard error over the seeds, the median wall time and peak RSS,
and each configuration's difference from the first in standard errors of the
difference, and the median of its per-seed wall-time ratios to the first.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import DATA, REPO, mean_se, score  # (the peers' benchmark's scoring: one home)

WARM_UP = REPO / "hsw2v" / "datasets" / "enwiki-1m.txt.gz"
"""Each configuration first trains on this bundled corpus, untimed."""

DEFAULT_CONFIGS = {
    "default": "",
    "huffman, 5 epochs": "--tree huffman --epochs 5",
}
"""Without ``--config``: the default job against the Huffman tree's."""

BASE = ["--dim", "100", "--window", "5", "--min-count", "5", "--sample", "1e-3",
        "--threads", "2"]


def parse_config(text: str) -> tuple[str, list[str]]:
    """``NAME=OPTIONS`` as a name and its option list."""
    name, sep, options = text.partition("=")
    if not sep or not name.strip():
        raise SystemExit(f"--config wants NAME=OPTIONS, got {text!r}")
    return name.strip(), shlex.split(options)


RUN_CLI = """
import atexit, runpy, sys

rss_file = sys.argv.pop(1)

def peak():  # this process's peak resident set (VmHWM: its own, whatever its parent's)
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    with open(rss_file, "w") as out:
        out.write(str(kb))

atexit.register(peak)
sys.argv[0] = "hsw2v"
runpy.run_module("hsw2v", run_name="__main__")
"""
"""``python -c RUN_CLI RSS_FILE ARGS…``: ``hsw2v ARGS…``, its peak RSS written to
RSS_FILE (kB). The rusage of a child counts its parent's resident set at the fork
(Linux keeps ``ru_maxrss`` across exec), so it is read inside the child."""


def run_once(corpus: str, options: list[str], seed: int, out: Path, pairs: str | None) -> dict:
    """One whole ``hsw2v train`` process: its wall time, peak RSS and scores."""
    rss = out.with_suffix(".rss")
    cmd = [sys.executable, "-c", RUN_CLI, str(rss), "train", corpus, "-o", str(out), "--binary",
           "--no-cache", "--quiet", "--seed", str(seed), *BASE, *options]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{shlex.join(cmd)} failed:\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return {"wall": wall, "rss_mb": int(rss.read_text()) / 1024, **score(str(out), pairs)}


def report(results: dict[str, list[dict]], configs: dict[str, list[str]]) -> None:
    """Print the table of means ± standard errors, and the differences from the first."""
    names = [k for k in next(iter(results.values()))[0] if k not in ("wall", "rss_mb")]
    first = next(iter(results))
    print("\n| configuration | wall s | ratio | peak RSS MB | "
          + " | ".join(names) + " |")
    print("|---" * (len(names) + 4) + "|")
    for name, runs in results.items():
        wall = statistics.median(r["wall"] for r in runs)
        ratio = statistics.median(r["wall"] / f["wall"] for r, f in zip(runs, results[first]))
        rss = statistics.median(r["rss_mb"] for r in runs)
        cells = []
        for k in names:
            m, se = mean_se([r[k] for r in runs])
            scale = 100 if k in ("analogy", "semantic", "syntactic") else 1
            cells.append(f"{scale * m:.2f} ± {scale * se:.2f}" if scale > 1 else f"{m:.4f} ± {se:.4f}")
        print(f"| {name} | {wall:.1f} | {ratio:.3f} | {rss:.0f} | " + " | ".join(cells) + " |")
    for name, runs in list(results.items())[1:]:
        cells = []
        for k in names:
            (a, sa), (b, sb) = mean_se([r[k] for r in runs]), mean_se([r[k] for r in results[first]])
            se = (sa * sa + sb * sb) ** 0.5
            scale = 100 if k in ("analogy", "semantic", "syntactic") else 1
            cells.append(f"{scale * (a - b):+.{2 if scale > 1 else 4}f}"
                         + (f" ({(a - b) / se:+.1f})" if se else ""))
        print(f"| {name} − {first} | | | | " + " | ".join(cells) + " |")
    print("\noptions: " + "; ".join(f"{n}: {shlex.join(o) or '(the defaults)'}"
                                    for n, o in configs.items()))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--config", action="append", metavar="NAME=OPTIONS",
                   help="a configuration: its name and hsw2v train options (repeatable; "
                        "the first is the one the others are compared with)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--pairs", metavar="DIR", help="also score every word-pair file in DIR")
    p.add_argument("--json", help="also write the raw results here")
    a = p.parse_args()
    configs = dict(parse_config(c) for c in a.config) if a.config else {
        n: shlex.split(o) for n, o in DEFAULT_CONFIGS.items()}
    results: dict[str, list[dict]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory(prefix="hsw2v-configs-") as work:
        for options in configs.values():  # (compiles, or loads, each one's kernels)
            run_once(str(WARM_UP), options, 0, Path(work) / "vectors.bin", None)
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            for name, options in configs.items():
                res = run_once(a.corpus, options, seed, Path(work) / "vectors.bin", a.pairs)
                results[name].append({**res, "seed": seed})
                print(f"# seed {seed} {name}: {json.dumps(res)}", file=sys.stderr, flush=True)
    for runs in results.values():
        for r in runs:
            r.pop("seed")
    report(results, configs)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
