"""Scale benchmark: a synthetic Zipf corpus of 200M tokens in shards, counted and
trained for one epoch, each step in its own process (peak RSS: its VmHWM at exit).

    python scripts/benchmarks/bench_scale.py [--tokens 200M] [--exponent 1.1] [--runs 3]
                                  [--small 20M] [--count-memory 200M] [--corpus DIR]
    python scripts/benchmarks/bench_scale.py --bounded-only [--small 20M] [--count-memory 50M,100M,200M]

It writes the corpus under $TMPDIR (about 4 bytes a token) and deletes it at the
end (``--corpus DIR``: use shards already written by ``scripts/tools/zipf_corpus.py``
with those --tokens and --exponent, and keep them). Printed: counting words/s with 1 and 2 threads (the median of the per-run
ratios), peak RSS, the token spool's bytes per token, training words/s and peak
RSS for one epoch; and on a smaller corpus (--small), the peak RSS of counting
with and without --count-memory (each of a comma-separated list), its growth over
a 6-word corpus's run (the interpreter, numpy and the kernels), and whether each
gives the same vocabulary. ``--bounded-only`` runs just that last step.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from zipf_corpus import parse_count, write_corpus

PEAK_AT_EXIT = """
import atexit, os, sys
def peak():
    with open("/proc/self/status") as status, open(os.environ["HSW2V_BENCH_PEAK"], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
sys.argv[0] = "hsw2v"
from hsw2v.cli import main
main()
"""
"""hsw2v's CLI, writing its peak resident set (VmHWM, kB) to $HSW2V_BENCH_PEAK at exit.
Not wait4's ru_maxrss: that counts the resident set this (larger) process had
when it forked the child, before the exec."""
HSW2V = [sys.executable, "-c", PEAK_AT_EXIT]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)  # this checkout's hsw2v, here and in the children
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}


def run(args: list[str], cwd: str) -> tuple[float, int, str]:
    """Seconds, peak RSS (bytes) and stderr of ``hsw2v ARGS`` in its own process."""
    peak_file = os.path.join(cwd, ".peak")
    start = time.perf_counter()
    proc = subprocess.run([*HSW2V, *args], check=False, cwd=cwd,
                          env={**ENV, "HSW2V_BENCH_PEAK": peak_file},
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"hsw2v {' '.join(args)} failed:\n{proc.stderr}")
    with open(peak_file) as f:
        peak = int(f.read()) * 1024
    os.unlink(peak_file)
    return seconds, peak, proc.stderr


def read(directory: str, name: str) -> bytes:
    with open(os.path.join(directory, name), "rb") as f:
        return f.read()


def spool_bytes_per_token(corpus: str) -> tuple[float, int, int]:
    """The token spool's bytes per token, tokens and distinct words of ``corpus``."""
    from hsw2v.counting.corpus import TokenSpool, count_words
    from hsw2v.text.reader import corpus_files

    with TokenSpool() as spool:
        counts = count_words(corpus_files([corpus]), spool=spool, threads=2, min_count=5)
        return spool.bytes / counts.tokens, counts.tokens, counts.n_types


def bounded_counting(small: str, small_tokens: int, budgets: list[str], work: str) -> None:
    """Peak RSS of ``vocab`` on ``small`` unbounded and with each budget, over a
    6-word corpus's peak; prints a table."""
    from hsw2v.settings import parse_size

    with open(os.path.join(work, "tiny.txt"), "w") as f:
        f.write("a b c d e f\n")
    base = min(run(["vocab", "tiny.txt", "--min-count", "1", "-o", "tiny-vocab.txt"], work)[1]
               for _ in range(3))
    rows = []
    for memory in (None, *budgets):
        extra = ["--count-memory", memory] if memory else []
        out = f"small-{memory or 'unbounded'}.txt"
        seconds, peak, err = run(["vocab", small, "--threads", "2", "-o", out, *extra], work)
        rows.append((memory, seconds, peak, read(work, out), err.strip().splitlines()[-1]))
    print(f"\n`vocab --threads 2` on {small_tokens / 1e6:.0f}M tokens ({rows[0][4]}); "
          f"a 6-word corpus peaks at {base / 2**20:.0f} MiB\n")
    print("| `--count-memory` | seconds | peak RSS | growth | growth / budget | same vocabulary |")
    print("|---|---|---|---|---|---|")
    for memory, seconds, peak, vocab, _ in rows:
        ratio = f"{(peak - base) / parse_size(memory, 'count_memory'):.2f}" if memory else "-"
        print(f"| {memory or 'unbounded'} | {seconds:.1f} | {peak / 2**20:.0f} MiB | "
              f"{(peak - base) / 2**20:.0f} MiB | {ratio} | {vocab == rows[0][3]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="200M")
    parser.add_argument("--exponent", type=float, default=1.1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small", default="20M")
    parser.add_argument("--count-memory", default="200M")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--corpus", help="existing shards to use instead of writing them")
    parser.add_argument("--bounded-only", action="store_true",
                        help="only the peak RSS of bounded counting on the --small corpus")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hsw2v-bench-scale-")
    try:
        big, small = args.corpus or os.path.join(work, "big"), os.path.join(work, "small")
        os.makedirs(small)
        budgets = args.count_memory.split(",")
        if args.bounded_only:
            write_corpus(small, parse_count(args.small), shards=4, exponent=args.exponent)
            bounded_counting(small, parse_count(args.small), budgets, work)
            return
        tokens = parse_count(args.tokens)
        start = time.perf_counter()
        if not args.corpus:
            os.makedirs(big)
            write_corpus(big, tokens, shards=16, exponent=args.exponent)
        print(f"corpus: {tokens:,} tokens in 16 shards, Zipf exponent {args.exponent} "
              f"({time.perf_counter() - start:.0f} s to write)", flush=True)
        run(["vocab", big, "--threads", "1", "--quiet", "-o", "warm.txt"], work)  # page cache
        rows, ratios = {1: [], 2: []}, []
        for r in range(args.runs):
            pair = {}
            for threads in (1, 2):
                seconds, peak, _ = run(["vocab", big, "--threads", str(threads), "--quiet",
                                        "-o", f"vocab-{threads}.txt"], work)
                pair[threads] = seconds
                rows[threads].append((seconds, peak))
                print(f"  run {r + 1}: vocab --threads {threads}: {seconds:.1f} s, "
                      f"{tokens / seconds / 1e6:.2f}M tokens/s, peak RSS {peak / 2**20:.0f} MiB",
                      flush=True)
            ratios.append(pair[1] / pair[2])
        same = read(work, "vocab-1.txt") == read(work, "vocab-2.txt")
        seconds, peak, err = run(["train", big, "--epochs", "1", "--threads", "2",
                                  "--dim", str(args.dim), "-o", "v.txt", "--save-model", "m.npz"],
                                 work)
        summary = [ln for ln in err.splitlines() if " words x " in ln]
        small_tokens = parse_count(args.small)
        write_corpus(small, small_tokens, shards=4, exponent=args.exponent)
        per_token, counted, n_types = spool_bytes_per_token(big)
        print()
        print(f"| {tokens / 1e6:.0f}M tokens, {n_types / 1e6:.1f}M types | value |")
        print("|---|---|")
        for threads in (1, 2):
            s = statistics.median(x[0] for x in rows[threads])
            p = max(x[1] for x in rows[threads])
            print(f"| `vocab --threads {threads}` | {tokens / s / 1e6:.2f}M tokens/s (median "
                  f"{s:.1f} s), peak RSS {p / 2**20:.0f} MiB |")
        print(f"| 2 threads vs 1 (median of per-run ratios) | **{statistics.median(ratios):.2f}×** "
              f"({', '.join(f'{x:.2f}' for x in ratios)}); same output: {same} |")
        print(f"| token spool | {per_token:.2f} bytes a token ({counted:,} tokens) |")
        print(f"| `train --epochs 1 --threads 2 --dim {args.dim}` | {seconds:.0f} s in all, "
              f"{tokens / seconds / 1e6:.2f}M words/s counting included; peak RSS "
              f"{peak / 2**20:.0f} MiB |")
        if summary:
            print(f"| train summary | {summary[0]} |")
        bounded_counting(small, small_tokens, budgets, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
