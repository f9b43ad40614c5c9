#!/usr/bin/env python
"""Training words/s of two or more checkouts of hsw2v, alternating, to measure a
kernel change: each run is a separate process that trains on the corpus and reports
the words/s of its training phase only (no counting, no writing).

    git worktree add /tmp/before HEAD~1
    python scripts/benchmarks/bench_kernels.py /tmp/before . --arch skipgram --threads 1 --runs 5

Prints each checkout's median words/s and, for each checkout after the first, the
median of its per-run-pair ratios to the first. A checkout written ``DIR:N`` trains
with vector size N (``. .:104`` compares sizes 100 and 104 of one checkout),
``DIR+bias`` with node biases, and ``DIR@CPU`` with the kernels compiled for LLVM's
CPU model CPU (``NUMBA_CPU_NAME``): ``@haswell`` also limits the instruction set to
AVX2 and FMA (a 2013 desktop's), any other name keeps this CPU's features.
``--dask-workers N --corpus SHARDS/`` measures ``--engine dask`` instead (shards as
``scripts/benchmarks/bench_dask.py`` writes them; see its ``--shards``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
HASWELL = ("+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,+pclmul,"
           "+popcnt,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave,"
           "-avx512f,-avx512bw,-avx512dq,-avx512vl,-avx512cd")
"""LLVM features of an AVX2 machine without AVX-512 (numba's NUMBA_CPU_FEATURES)."""


def cpu_env(cpu: str) -> dict:
    """The environment that makes numba compile for LLVM's CPU model ``cpu``."""
    if not cpu:
        return {}
    return {"NUMBA_CPU_NAME": cpu, **({"NUMBA_CPU_FEATURES": HASWELL} if cpu == "haswell" else {})}

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import hsw2v
extra = {"node_bias": True} if sys.argv[8] == "bias" else {}
if int(sys.argv[9]):
    extra.update(engine="dask", workers=int(sys.argv[9]))
m = hsw2v.train(sys.argv[2], arch=sys.argv[3], epochs=int(sys.argv[4]), threads=int(sys.argv[5]),
                dim=int(sys.argv[6]), seed=int(sys.argv[7]), progress=False, **extra)
print(json.dumps({"words_per_s": m.vocab.total * m.settings.epochs / m.seconds["train"],
                  "loss": float(m.epoch_loss[-1]), "file": hsw2v.__file__}))
"""


def run(checkout: str, corpus: str, arch: str, epochs: int, threads: int, dim: int, seed: int,
        dask_workers: int = 0) -> dict:
    """One training run of ``checkout`` (``DIR[:dim][+bias][@cpu]``) in a fresh process."""
    checkout, _, cpu = checkout.partition("@")
    checkout, _, bias = checkout.partition("+")
    directory, colon, size = checkout.partition(":")
    cmd = [sys.executable, "-c", CHILD, str(Path(directory).resolve()), corpus, arch, str(epochs),
           str(threads), size if colon else str(dim), str(seed), bias, str(dask_workers)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env={**os.environ, **cpu_env(cpu)})
    if proc.returncode != 0:
        sys.exit(f"{checkout} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkouts", nargs="+", help="directories holding an hsw2v package")
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--arch", choices=["skipgram", "cbow"], default="skipgram")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--dask-workers", type=int, default=0,
                   help="train with --engine dask on a LocalCluster of this many workers, each "
                        "with --threads threads (give --corpus a directory of plain shards)")
    a = p.parse_args()
    results: dict[str, list[dict]] = {c: [] for c in a.checkouts}
    for r in range(a.runs):
        for c in a.checkouts:
            res = run(c, a.corpus, a.arch, a.epochs, a.threads, a.dim, r + 1, a.dask_workers)
            results[c].append(res)
            print(f"# run {r + 1} {c}: {json.dumps(res)}", file=sys.stderr, flush=True)
    first = a.checkouts[0]
    on = f"Dask, {a.dask_workers} workers × " if a.dask_workers else ""
    print(f"{a.arch}, {a.epochs} epoch(s), {on}{a.threads} thread(s), dim {a.dim}, {a.runs} runs each")
    for c in a.checkouts:
        speed = statistics.median(x["words_per_s"] for x in results[c])
        loss = statistics.median(x["loss"] for x in results[c])
        line = f"{c}: {speed / 1e3:.0f}k training words/s, last epoch's loss {loss:.4f}"
        if c != first:
            pairs = [x["words_per_s"] / y["words_per_s"] for x, y in zip(results[c], results[first])]
            line += (f"; vs {first}: {statistics.median(pairs):.3f}x "
                     f"(per pair {', '.join(f'{x:.3f}' for x in pairs)})")
        print(line, flush=True)


if __name__ == "__main__":
    main()
