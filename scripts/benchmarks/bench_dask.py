"""Dask engine vs local training, on ../shared/data/enwiki-17m.txt.gz split into 8
shards: analogy accuracy, WS353 and training words/s, then how quality moves with
the round length and the number of workers.

    python scripts/benchmarks/bench_dask.py [--runs 2] [--rounds 125000,250000,1000000,4000000]
                                 [--workers 1,2,4] [--quick]
    python scripts/benchmarks/bench_dask.py --shards DIR    # only write the shards, and keep them
    python scripts/benchmarks/bench_dask.py --seeds 6 [--arch skipgram]   # quality over seeds only
    python scripts/benchmarks/bench_dask.py --cpu-share [--arch cbow]     # where the cores go

Settings: dim 100, window 5, sample 1e-3; skip-gram 1 epoch and CBOW 3 epochs.
"local" is ``--threads 2``; "dask" is ``--engine dask --workers 2 --threads 1`` (a
LocalCluster on the same 2 cores, so the ratio of words/s measures the cost of
averaging). Words/s counts training only (not counting, not the cluster's start).
Quality and speed are medians over ``--runs`` seeds; the local and Dask runs of
each seed run one after the other, and the speed ratio is the median of these
pairs' ratios. ``--quick`` trains on the first 2 shards only.

``--seeds N`` measures only quality, over seeds 1..N: local training with 1 and
with 2 threads, and Dask with 1 and 2 workers of 1 thread, each seed's value and
the medians (one seed's figures move by about 0.5 analogy points and 0.01 WS353;
a median of 6 settles differences of about that size).
"""
from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # this checkout, whatever copy of hsw2v is installed
DATA = REPO.parent / "shared" / "data"

import hsw2v
from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs

ARCHS = {"skipgram": 1, "cbow": 3}
COMMON = {"dim": 100, "window": 5, "sample": 1e-3, "min_count": 5, "progress": False}


def write_shards(directory: Path, n: int = 8, line_words: int = 1000) -> list[str]:
    """enwiki-17m as ``n`` plain shards with a line break every ``line_words`` words."""
    with gzip.open(DATA / "enwiki-17m.txt.gz", "rb") as f:
        words = f.read().split()
    paths = []
    for i in range(n):
        part = words[i * len(words) // n:(i + 1) * len(words) // n]
        path = directory / f"shard-{i}.txt"
        with open(path, "wb") as out:
            out.writelines(b" ".join(part[j:j + line_words]) + b"\n" for j in range(0, len(part), line_words))
        paths.append(str(path))
    return paths


def run(shards: list[str], arch: str, seed: int, **engine) -> dict:
    """Train, evaluate; quality and training words/s."""
    epochs = ARCHS[arch]
    start = time.perf_counter()
    model = hsw2v.train(shards, arch=arch, epochs=epochs, seed=seed, **COMMON, **engine)
    wall = time.perf_counter() - start
    vectors = model.keyed_vectors()
    analogy = evaluate_analogies(vectors, str(DATA / "questions-words.txt"), restrict=30000)
    ws353 = evaluate_word_pairs(vectors, str(DATA / "wordsim353.tsv"))
    words = epochs * model.vocab.total
    return {"analogy": 100 * analogy["accuracy"], "ws353": ws353["spearman"],
            "wps": words / model.seconds["train"], "wall": wall, "loss": model.epoch_loss[-1]}


def show(label: str, rows: list[dict]) -> dict:
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"| {label} | {med['analogy']:.1f}% | {med['ws353']:.3f} | {med['wps'] / 1e6:.2f}M "
          f"| {med['wall']:.0f} s | {med['loss']:.4f} |", flush=True)
    return med


def seed_study(shards: list[str], arch: str, n: int) -> None:
    """Quality of four ways to train, seeds 1..n, and their medians."""
    ways = {"local, --threads 1": {"threads": 1}, "local, --threads 2": {"threads": 2},
            "dask, 1 worker × 1 thread": {"engine": "dask", "workers": 1, "threads": 1},
            "dask, 2 workers × 1 thread": {"engine": "dask", "workers": 2, "threads": 1}}
    print(f"\n### {arch}, {ARCHS[arch]} epoch(s), seeds 1–{n}\n\n"
          "| run | analogy (median) | WS353 (median) | last loss (median) |\n|---|---|---|---|")
    for label, engine in ways.items():
        rows = [run(shards, arch, seed, **engine) for seed in range(1, n + 1)]
        print(f"| {label} | {_cell(rows, 'analogy', '{:.1f}')} | {_cell(rows, 'ws353', '{:.3f}')} "
              f"| {_cell(rows, 'loss', '{:.4f}')} |", flush=True)


def cpu_share(shards: list[str], arch: str, idle_seconds: float = 10.0) -> None:
    """The cores each part of a 2-worker LocalCluster (as ``--workers 2`` starts it)
    uses, idle and while it trains: the client's process (client, scheduler and
    nannies), each worker's event loop (its main thread: messages, transfers,
    heartbeats, monitors, profiler) and the rest of each worker (tasks and training)."""
    import logging

    import distributed
    import psutil

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0",
                                       silence_logs=logging.CRITICAL)
    with cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        me = psutil.Process()
        workers = [psutil.Process(pid) for pid in sorted(client.run(os.getpid).values())]

        def cpu() -> list[float]:  # client process; per worker: event loop, the rest
            out = [sum(me.cpu_times()[:2])]
            for w in workers:
                total = sum(w.cpu_times()[:2])
                loop = next(t.user_time + t.system_time for t in w.threads() if t.id == w.pid)
                out += [loop, total - loop]
            return out

        def cores(before: list[float], seconds: float) -> list[float]:
            return [(b - a) / seconds for a, b in zip(before, cpu())]

        time.sleep(2)
        start, t = cpu(), time.perf_counter()
        time.sleep(idle_seconds)
        idle = cores(start, time.perf_counter() - t)
        start, t = cpu(), time.perf_counter()
        model = hsw2v.train(shards, arch=arch, epochs=ARCHS[arch], seed=1, engine="dask",
                            client=client, threads=1, **COMMON)
        busy = cores(start, time.perf_counter() - t)
    n = len(os.sched_getaffinity(0))
    print(f"\n### {arch}: cores used, idle ({idle_seconds:.0f} s) and training "
          f"({time.perf_counter() - t:.0f} s with counting; train {model.seconds['train']:.1f} s), "
          f"of {n}\n\n| part | idle | training | share of the {n} cores, training |\n|---|---|---|---|")
    parts = ["client process (hsw2v's client, scheduler, nannies)"]
    parts += [f"worker {k + 1}: {what}" for k in range(len(workers))
              for what in ("event loop", "tasks and training")]
    for part, a, b in zip(parts, idle, busy):
        print(f"| {part} | {a:.3f} | {b:.3f} | {100 * b / n:.1f}% |")
    machinery = busy[0] + sum(busy[1::2])  # the client process and the event loops
    print(f"| outside the tasks (client process, event loops) | {idle[0] + sum(idle[1::2]):.3f} "
          f"| {machinery:.3f} | **{100 * machinery / n:.1f}%** |", flush=True)


def _cell(rows: list[dict], key: str, form: str) -> str:
    """Each seed's value of ``key``, then their median in brackets."""
    values = [r[key] for r in rows]
    return ", ".join(map(form.format, values)) + f" ({form.format(statistics.median(values))})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--rounds", default="125000,250000,1000000,4000000")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, metavar="N", help="only quality, over seeds 1..N")
    parser.add_argument("--arch", choices=list(ARCHS), help="with --seeds (default skip-gram) or "
                        "--cpu-share (default both)")
    parser.add_argument("--cpu-share", action="store_true",
                        help="only the cores each part of a 2-worker LocalCluster uses")
    parser.add_argument("--shards", metavar="DIR", help="only write the 8 shards to DIR (kept), for "
                        "scripts/benchmarks/bench_kernels.py --dask-workers")
    args = parser.parse_args()
    if args.shards:
        Path(args.shards).mkdir(parents=True, exist_ok=True)
        print("\n".join(write_shards(Path(args.shards))))
        return
    work = Path(tempfile.mkdtemp(prefix="hsw2v-bench-dask-"))
    try:
        shards = write_shards(work)[: 2 if args.quick else None]
        if args.seeds:
            seed_study(shards, args.arch or "skipgram", args.seeds)
            return
        if args.cpu_share:
            for arch in [args.arch] if args.arch else list(ARCHS):
                cpu_share(shards, arch)
            return
        seeds = range(1, args.runs + 1)
        header = ("| run | analogy | WS353 | train words/s | wall (with counting) | last loss |\n"
                  "|---|---|---|---|---|---|")
        for arch, epochs in ARCHS.items():
            print(f"\n### {arch}, {epochs} epoch(s), medians of {args.runs} runs\n\n{header}")
            here, there = [], []
            for seed in seeds:  # alternating, so that each pair shares the machine's moment
                here.append(run(shards, arch, seed, threads=2))
                there.append(run(shards, arch, seed, engine="dask", workers=2, threads=1))
            a, b = show("local, --threads 2", here), show("dask, 2 workers × 1 thread", there)
            ratios = [y["wps"] / x["wps"] for x, y in zip(here, there)]
            print(f"\ndask − local: analogy {b['analogy'] - a['analogy']:+.2f} points, WS353 "
                  f"{b['ws353'] - a['ws353']:+.3f}; words/s ratio {statistics.median(ratios):.2f}× "
                  f"({', '.join(f'{r:.2f}' for r in ratios)})", flush=True)
            print(f"\nround length ({arch}, 2 workers × 1 thread, seed 1):\n\n{header}")
            for words in map(int, args.rounds.split(",")):
                show(f"--round-words {words:,}", [run(shards, arch, 1, engine="dask", workers=2,
                                                      threads=1, round_words=words)])
            print(f"\nworkers ({arch}, 1 thread each, default round, seed 1):\n\n{header}")
            for n in map(int, args.workers.split(",")):
                show(f"--workers {n}", [run(shards, arch, 1, engine="dask", workers=n, threads=1)])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
