"""Scale benchmark: a synthetic Zipf corpus of 200M tokens in shards, counted and
trained for one epoch, each step in its own process (peak RSS from wait4).

    python scripts/bench_scale.py [--tokens 200M] [--exponent 1.1] [--runs 3]
                                  [--small 20M] [--count-memory 200M] [--corpus DIR]

It writes the corpus under $TMPDIR (about 4 bytes a token) and deletes it at the
end (``--corpus DIR``: use shards already written by ``scripts/zipf_corpus.py``
with those --tokens and --exponent, and keep them). Printed: counting words/s with 1 and 2 threads (the median of the per-run
ratios), peak RSS, the token spool's bytes per token, training words/s and peak
RSS for one epoch; and on a smaller corpus (--small), the peak RSS of counting
with and without --count-memory, and whether both give the same vocabulary.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zipf_corpus import parse_count, write_corpus

HSW2V = [sys.executable, "-m", "hsw2v"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # this checkout's hsw2v, here and in the children
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}


def run(args: list[str], cwd: str) -> tuple[float, int, str]:
    """Seconds, peak RSS (bytes) and stderr of ``hsw2v ARGS`` in its own process."""
    start = time.perf_counter()
    proc = subprocess.Popen([*HSW2V, *args], cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"hsw2v {' '.join(args)} failed:\n{err}")
    return seconds, usage.ru_maxrss * 1024, err


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", default="200M")
    parser.add_argument("--exponent", type=float, default=1.1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small", default="20M")
    parser.add_argument("--count-memory", default="200M")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--corpus", help="existing shards to use instead of writing them")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hsw2v-bench-scale-")
    try:
        big, small = args.corpus or os.path.join(work, "big"), os.path.join(work, "small")
        os.makedirs(small)
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
        bounded = {}
        for memory in (None, args.count_memory):
            extra = ["--count-memory", memory] if memory else []
            out = f"small-{memory or 'unbounded'}.txt"
            _, small_peak, small_err = run(["vocab", small, "--threads", "2", "-o", out, *extra],
                                           work)
            bounded[memory] = (small_peak, read(work, out),
                               small_err.strip().splitlines()[-1])
        # In this process, last: a child forked from a large process would inherit
        # its peak RSS (ru_maxrss counts the memory the fork copied).
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
        unbounded, capped = bounded[None], bounded[args.count_memory]
        print(f"| `vocab` on {small_tokens / 1e6:.0f}M tokens ({unbounded[2]}) | peak RSS "
              f"{unbounded[0] / 2**20:.0f} MiB unbounded, {capped[0] / 2**20:.0f} MiB with "
              f"`--count-memory {args.count_memory}`; same vocabulary: {unbounded[1] == capped[1]} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
