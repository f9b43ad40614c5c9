#!/usr/bin/env python
"""Train hsw2v and gensim on the same corpus and settings; compare speed and quality.

Each run is a separate process doing the whole job (count the vocabulary, train,
write the vectors), timed from outside; runs of the two systems alternate. The
vectors are then scored on the Google analogies (30k most frequent words,
case-insensitive), WordSim-353 and SimLex-999 with hsw2v's evaluator, which
reproduces gensim's.

    python scripts/bench.py                       # skip-gram 1 epoch and CBOW 3 epochs
    python scripts/bench.py --arch cbow --epochs 3 --runs 3

gensim gets a copy of the corpus with a line break every 1,000 words, because its
corpus_file mode mishandles a single 100 MB line. Needs gensim (pip install gensim).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # measure this checkout, whatever copy of hsw2v is installed
DATA = REPO.parent / "shared" / "data"


def child(system: str, corpus: str, out: str, arch: str, epochs: int, threads: int, seed: int) -> None:
    """Train one system in this process and print its timings as JSON."""
    start = time.perf_counter()
    if system == "hsw2v":
        import hsw2v

        model = hsw2v.train(corpus, arch=arch, epochs=epochs, threads=threads, dim=100, window=5,
                            min_count=5, sample=1e-3, seed=seed, progress=False)
        model.save_vectors(out)
        words = model.vocab.total
    else:
        from gensim.models import Word2Vec

        sg = arch == "skipgram"
        model = Word2Vec(corpus_file=corpus, sg=int(sg), hs=1, negative=0, vector_size=100,
                         window=5, min_count=5, sample=1e-3, epochs=epochs, workers=threads,
                         alpha=0.025 if sg else 0.05, seed=seed)
        model.wv.save_word2vec_format(out)
        words = model.corpus_total_words
    wall = time.perf_counter() - start
    print(json.dumps({"inner_wall": wall, "words": words, "rss_mb": peak_rss_mb()}))


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM; ru_maxrss would include the parent's)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


JIT_PROBE = """
import os, sys, tempfile, time
start = time.perf_counter()
import hsw2v
imported = time.perf_counter()
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "c.txt")
    with open(path, "w") as f:
        f.write("a b c d e f g h\\n" * 50)
    for arch in ("skipgram", "cbow"):
        m = hsw2v.train(path, arch=arch, min_count=1, dim=8, epochs=1, threads=1, progress=False)
    hsw2v.score(m, path)
    m.predict(["a"], 3)
print(imported - start, time.perf_counter() - imported)
"""


def jit_times() -> dict:
    """Seconds to compile every kernel (empty numba cache) and to load them cached."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = {}
        for label in ("cold", "cached"):
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-c", JIT_PROBE], env=env, capture_output=True,
                                  text=True, check=True, cwd=REPO)
            wall = time.perf_counter() - start
            _, kernels = map(float, proc.stdout.split())
            out[label] = {"process_wall": wall, "kernels": kernels}
    return out


def scaling(corpus: str, arch: str, epochs: int, workdir: Path) -> dict:
    """Training words/s (the kernels' phase only) with 1 and with 2 threads."""
    out = {}
    for threads in (1, 2):
        code = (f"import sys; sys.path.insert(0, {str(REPO)!r}); import hsw2v, json; m = hsw2v.train({corpus!r}, arch={arch!r}, epochs={epochs}, "
                f"threads={threads}, progress=False); "
                "print(json.dumps(m.vocab.total * m.settings.epochs / m.seconds['train']))")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        out[threads] = float(proc.stdout.strip().splitlines()[-1])
    return out


def line_broken_copy(corpus: str, workdir: Path) -> str:
    """The corpus with a newline every 1,000 words (gensim's corpus_file needs lines)."""
    target = workdir / (Path(corpus).name.removesuffix(".gz") + ".lines")
    if target.exists():
        return str(target)
    opener = gzip.open if corpus.endswith(".gz") else open
    with opener(corpus, "rb") as f:
        words = f.read().split()
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.writelines(b" ".join(words[i:i + 1000]) + b"\n" for i in range(0, len(words), 1000))
    tmp.rename(target)
    return str(target)


def score(vectors_path: str) -> dict:
    from hsw2v.evaluate import evaluate_analogies, evaluate_word_pairs
    from hsw2v.model import read_vectors

    v = read_vectors(vectors_path)
    return {
        "analogy": evaluate_analogies(v, str(DATA / "questions-words.txt"), restrict=30000)["accuracy"],
        "ws353": evaluate_word_pairs(v, str(DATA / "wordsim353.tsv"))["spearman"],
        "simlex": evaluate_word_pairs(v, str(DATA / "simlex999.txt"))["spearman"],
    }


def run_once(system, corpus, arch, epochs, threads, seed, workdir) -> dict:
    out = str(workdir / f"{system}-{arch}.txt")
    cmd = [sys.executable, __file__, "--child", system, "--corpus", corpus, "--out", out,
           "--arch", arch, "--epochs", str(epochs), "--threads", str(threads), "--seed", str(seed)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{system} failed:\n{proc.stderr[-2000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info.update(score(out), wall=wall)
    return info


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--arch", choices=["skipgram", "cbow"], help="default: both")
    p.add_argument("--epochs", type=int, help="default: 1 for skip-gram, 3 for CBOW")
    p.add_argument("--runs", type=int, default=2, help="runs per system (alternating)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--systems", default="hsw2v,gensim")
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "hsw2v-bench"))
    p.add_argument("--json", help="also write the raw results here")
    p.add_argument("--jit", action="store_true", help="only time JIT compilation, cold and cached")
    p.add_argument("--scaling", action="store_true",
                   help="only compare training words/s at 1 and 2 threads")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child, a.corpus, a.out, a.arch, a.epochs, a.threads, a.seed)
        return
    workdir = Path(a.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    if a.jit:
        t = jit_times()
        print(f"JIT, cold (empty cache): {t['cold']['kernels']:.1f} s compiling "
              f"({t['cold']['process_wall']:.1f} s process)")
        print(f"JIT, cached: {t['cached']['kernels']:.2f} s loading "
              f"({t['cached']['process_wall']:.1f} s process)")
        return
    if a.scaling:
        for arch, epochs in ([(a.arch, a.epochs or 1)] if a.arch else [("skipgram", 1), ("cbow", 1)]):
            runs = []
            for r in range(a.runs):
                runs.append(scaling(a.corpus, arch, epochs, workdir))
                print(f"# {arch} run {r + 1}: " + json.dumps(runs[-1]), file=sys.stderr, flush=True)
            one = statistics.median(r[1] for r in runs)
            two = statistics.median(r[2] for r in runs)
            pairs = [r[2] / r[1] for r in runs]
            print(f"{arch}: 1 thread {one / 1e3:.0f}k words/s, 2 threads {two / 1e3:.0f}k words/s "
                  f"(medians of {a.runs}), speed-up {two / one:.2f}x; per run pair "
                  f"{', '.join(f'{x:.2f}' for x in pairs)}: median {statistics.median(pairs):.2f}x",
                  flush=True)
        return
    systems = a.systems.split(",")
    gensim_corpus = line_broken_copy(a.corpus, workdir) if "gensim" in systems else None
    jobs = [(a.arch, a.epochs)] if a.arch else [("skipgram", 1), ("cbow", 3)]
    from hsw2v.reader import iter_blocks  # plain Python: this process never maps LLVM

    tokens = sum(len(block.split()) for block in iter_blocks(a.corpus))  # in or out of vocab
    raw = []
    for arch, epochs in jobs:
        epochs = epochs or a.epochs or (1 if arch == "skipgram" else 3)
        results = {s: [] for s in systems}
        for r in range(a.runs):
            for s in systems:
                corpus = gensim_corpus if s == "gensim" else a.corpus
                res = run_once(s, corpus, arch, epochs, a.threads, r + 1, workdir)
                res["words_per_s"] = tokens * epochs / res["wall"]
                results[s].append(res)
                print(f"# {arch} run {r + 1} {s}: " + json.dumps(res), file=sys.stderr, flush=True)
        raw.append({"arch": arch, "epochs": epochs, "results": results})
        print(f"\n{arch}, {epochs} epoch(s), {a.threads} threads, median of {a.runs} runs")
        print(f"words/s: {tokens:,} corpus tokens x epochs / whole-process wall time")
        print("| system | analogy | WS353 | SimLex | words/s | wall | peak RSS |")
        print("|---|---|---|---|---|---|---|")
        med = {}
        for s in systems:
            m = {k: statistics.median(x[k] for x in results[s])
                 for k in ("analogy", "ws353", "simlex", "words_per_s", "wall", "rss_mb")}
            med[s] = m
            print(f"| {s} | {100 * m['analogy']:.1f}% | {m['ws353']:.3f} | {m['simlex']:.3f} | "
                  f"{m['words_per_s'] / 1e3:.0f}k | {m['wall']:.0f} s | {m['rss_mb']:.0f} MB |")
        if "hsw2v" in med and "gensim" in med:
            speed = [g["wall"] / h["wall"] for h, g in zip(results["hsw2v"], results["gensim"])]
            print(f"ratio hsw2v/gensim: speed (words/s) {statistics.median(speed):.2f}x "
                  f"(per run pair: {', '.join(f'{x:.2f}' for x in speed)}), "
                  f"peak RSS {med['hsw2v']['rss_mb'] / med['gensim']['rss_mb']:.2f}x")
        sys.stdout.flush()
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=2))


if __name__ == "__main__":
    main()
