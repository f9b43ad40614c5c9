#!/usr/bin/env python
"""The first run, timed as a new user meets it: the README's Quick start in a fresh
directory, wall time of each command (process start included), median of ``--runs``.

    python scripts/benchmarks/bench_first_run.py --runs 5

- ``cold``: ``hsw2v train corpus.txt`` with an empty numba cache (every kernel compiles);
- ``warm``: the same again, the cache full (each run's cold over its warm: the ratio);
- ``new dim``: ``--dim 50`` with a cache holding everything but that size;
- ``--help``, ``vocab | head -5`` and ``similar three`` on the Quick start's files;
- ``lbl cold``: the README's language model next (``hsw2v train train.txt --arch lbl``
  on its first 900 lines), with the cache the Quick start left; ``lbl warm``: again.

Each repetition of ``cold`` and ``new dim`` gets a cache of its own (a copy for
``new dim``), so none is warmed by another.
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def hsw2v() -> list[str]:
    script = Path(sys.executable).parent / "hsw2v"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hsw2v"]


def timed(args: list[str], cwd: Path, cache: Path) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    cmd = hsw2v()
    times: dict[str, list[float]] = {k: [] for k in
                                     ("cold", "warm", "new dim", "--help", "vocab", "similar",
                                      "lbl cold", "lbl warm")}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rb") as f:
            text = f.read()
        warm_cache = root / "warm-cache"
        for i in range(args.runs):
            work = root / f"run{i}"
            work.mkdir()
            (work / "corpus.txt").write_bytes(text)
            cache = root / f"cache{i}"
            times["cold"].append(timed([*cmd, "train", "corpus.txt"], work, cache))
            times["warm"].append(timed([*cmd, "train", "corpus.txt"], work, cache))
            if i == 0:
                shutil.copytree(cache, warm_cache)
            fresh = root / f"dim-cache{i}"
            shutil.copytree(warm_cache, fresh)
            times["new dim"].append(timed([*cmd, "train", "corpus.txt", "--dim", "50", "-o",
                                           "v50.txt", "--save-model", "m50.npz"], work, fresh))
            times["--help"].append(timed([*cmd, "--help"], work, cache))
            times["vocab"].append(timed([*cmd, "vocab"], work, cache))
            times["similar"].append(timed([*cmd, "similar", "three"], work, cache))
            (work / "train.txt").write_bytes(b"".join(text.splitlines(keepends=True)[:900]))
            lbl = [*cmd, "train", "train.txt", "--arch", "lbl", "--save-model", "lm.npz", "-o",
                   "lm.txt"]
            times["lbl cold"].append(timed(lbl, work, cache))
            times["lbl warm"].append(timed(lbl, work, cache))
            print(f"# run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
                  file=sys.stderr)
    print(f"{os.cpu_count()} CPUs; median of {args.runs} runs, wall seconds per command")
    for name, values in times.items():
        print(f"{name:10s} {statistics.median(values):6.2f} s  "
              f"(min {min(values):.2f}, max {max(values):.2f})")
    for first in ("", "lbl "):
        ratios = [c / w for c, w in zip(times[first + "cold"], times[first + "warm"])]
        print(f"{first}cold / warm {statistics.median(ratios):5.2f}x  median of the runs' ratios "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}; the goal: at most 2.5x)")


if __name__ == "__main__":
    main()
