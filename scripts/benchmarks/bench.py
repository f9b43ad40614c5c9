#!/usr/bin/env python
"""Train hsw2v and gensim on the same corpus and settings; compare speed and quality.

Each run is a separate process doing the whole job (count the vocabulary, train,
write the vectors), timed from outside; runs of the two systems alternate. The
vectors are then scored on the Google analogies (30k most frequent words,
case-insensitive), WordSim-353 and SimLex-999 with hsw2v's evaluator, which
reproduces gensim's.

    python scripts/benchmarks/bench.py                       # skip-gram 1 epoch and CBOW 3 epochs
    python scripts/benchmarks/bench.py --arch cbow --epochs 3 --runs 3
    python scripts/benchmarks/bench.py --fma-sweep           # the kernels' FMA rate as the vocabulary shrinks

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

from bench_kernels import cpu_env
from bench_kernels import run as run_checkout

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # measure this checkout, whatever copy of hsw2v is installed
DATA = REPO.parent / "shared" / "data"


def child(system: str, corpus: str, out: str, arch: str, epochs: int, threads: int, seed: int,
          binary: str | None, min_count: int = 5) -> None:
    """Train one system in this process and print its timings as JSON."""
    start = time.perf_counter()
    info = {}
    sg = arch == "skipgram"
    alpha = 0.025 if sg else 0.05  # word2vec.c's defaults, given to every peer
    if system == "hsw2v":
        import hsw2v

        model = hsw2v.train(corpus, arch=arch, epochs=epochs, threads=threads, dim=100, window=5,
                            min_count=min_count, sample=1e-3, seed=seed, progress=False)
        model.save_vectors(out)
        info = {"train_s": model.seconds["train"], "fma_per_word": fma_per_word(model),
                "vocab_words": model.vocab.total, "vocab_size": len(model.vocab)}
    elif system == "gensim":
        from gensim.models import Word2Vec

        model = Word2Vec(corpus_file=corpus, sg=int(sg), hs=1, negative=0, vector_size=100,
                         window=5, min_count=5, sample=1e-3, epochs=epochs, workers=threads,
                         alpha=alpha, seed=seed)
        model.wv.save_word2vec_format(out)
    elif system == "gensim-ns":  # gensim's own defaults: negative sampling, 5 noise words
        from gensim.models import Word2Vec

        model = Word2Vec(corpus_file=corpus, sg=int(sg), hs=0, negative=5, vector_size=100,
                         window=5, min_count=5, sample=1e-3, epochs=epochs, workers=threads,
                         alpha=0.025, seed=seed)
        model.wv.save_word2vec_format(out)
    elif system.startswith("word2vec.c"):
        subprocess.run([binary, "-train", corpus, "-output", out, "-cbow", str(int(not sg)),
                        "-size", "100", "-window", "5", "-sample", "1e-3", "-hs", "1",
                        "-negative", "0", "-threads", str(threads), "-iter", str(epochs),
                        "-min-count", "5", "-alpha", str(alpha), "-binary", "0"],
                       check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, **SEED_ENV.get(system, lambda seed: {})(seed)})
    elif system == "fasttext":
        import fasttext

        model = fasttext.train_unsupervised(corpus, model=arch, loss="hs", minn=0, maxn=0,
                                            bucket=0, dim=100, ws=5, epoch=epochs, minCount=5,
                                            t=1e-3, lr=alpha, thread=threads,
                                            verbose=0)
        write_binary_vectors(out, model.words, model.get_input_matrix())
    else:
        raise SystemExit(f"unknown system {system!r}")
    wall = time.perf_counter() - start
    rss = max(peak_rss_mb(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    print(json.dumps({"inner_wall": wall, "rss_mb": rss, **info}))


def write_binary_vectors(path: str, words: list[str], matrix) -> None:
    """word2vec's binary format (fastText's Python API writes no vectors file)."""
    rows = matrix[:len(words)].astype("<f4")
    with open(path, "wb") as f:
        f.write(f"{len(words)} {rows.shape[1]}\n".encode())
        f.writelines(word.encode() + b" " + row.tobytes() + b"\n" for word, row in zip(words, rows))


def fma_per_word(model) -> float:
    """Multiply-adds per corpus word that word2vec's algorithm does on this model,
    in expectation over subsampling and the shrunk window (3·dim a path node: the
    score, the gradient for the context, the node's update; CBOW adds 2·dim a
    context word for the mean and the update). Sentence edges are ignored."""
    import numpy as np

    from hsw2v.counting.vocab import keep_probabilities

    s = model.settings
    counts = np.asarray(model.vocab.counts, dtype=np.float64)
    kept = counts * keep_probabilities(model.vocab.counts, s.sample)
    lengths = model.tree.nodes_per_word.astype(np.float64)  # all of a word's codes
    contexts = s.window + 1  # 2 · E[window − b], b uniform in [0, window)
    if s.arch == "skipgram":
        per_centre = contexts * lengths * 3 * s.dim
    else:
        per_centre = lengths * 3 * s.dim + contexts * 2 * s.dim
    return float((kept * per_centre).sum() / counts.sum())


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
    for arch in ("skipgram", "cbow"):  # vector size: the first argument, else 8
        m = hsw2v.train(path, arch=arch, min_count=1, dim=int((sys.argv[1:] or [8])[0]), epochs=1,
                        threads=1, progress=False)
    hsw2v.score(m, path)
    m.predict(["a"], 3)
print(imported - start, time.perf_counter() - imported)
"""


def warm_up(cpu: str | None) -> None:
    """Compile (and cache) hsw2v's dim-100 kernels for ``cpu`` before any run is timed."""
    subprocess.run([sys.executable, "-c", JIT_PROBE, "100"], check=True, cwd=REPO,
                   capture_output=True, env={**os.environ, **peer_env("hsw2v", cpu)})


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
    return {threads: run_checkout(str(REPO), corpus, arch, epochs, threads, 100, 1)["words_per_s"]
            for threads in (1, 2)}


PEERS = ("hsw2v", "gensim", "word2vec.c", "fasttext")
WORD2VEC_SRC = REPO.parent / "shared" / "peers" / "word2vec"
CFLAGS = ["-lm", "-pthread", "-O3", "-march=native", "-Wall", "-funroll-loops", "-Wno-unused-result"]

FMA_PROBE = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef float vec __attribute__((vector_size(LANES * 4)));
int main(int argc, char **argv) {
  long n = atol(argv[1]);
  vec a, b, x[12];
  for (int l = 0; l < LANES; l++) { a[l] = 0.999999f; b[l] = 1e-7f; }
  for (int k = 0; k < 12; k++) for (int l = 0; l < LANES; l++) x[k][l] = k + l;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; i++) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; k++) x[k] = x[k] * a + b;  /* 12 independent FMA chains */
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  float s = 0;
  for (int k = 0; k < 12; k++) for (int l = 0; l < LANES; l++) s += x[k][l];
  double dt = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%g %g\n", n * 12.0 * LANES / dt, s);
  return 0;
}
"""


def _env_seed(name: str) -> str:
    """C: the run's seed from environment variable ``name``, else W2V_SEED, else 0."""
    return (f'(unsigned long long)atoll(getenv("{name}") ? getenv("{name}") : '
            'getenv("W2V_SEED") ? getenv("W2V_SEED") : "0")')


SEEDED = [
    # the threads' generators start from the thread's number, and the starting vectors'
    # from 1, plus a multiple of the run's seed (0: word2vec.c's own starts): W2V_SEED,
    # or W2V_THREAD_SEED and W2V_VECTOR_SEED for each on its own …
    ("unsigned long long next_random = (long long)id;",
     "unsigned long long next_random = (long long)id + 1000ULL * "
     + _env_seed("W2V_THREAD_SEED") + ";"),
    ("unsigned long long next_random = 1;",
     "unsigned long long next_random = 1 + 7777ULL * " + _env_seed("W2V_VECTOR_SEED") + ";"),
    # … and a thread that reached the end of the file reads its next epoch (word2vec.c
    # never clears eof after rewinding: the thread would skip every epoch it has left)
    ("      sentence_length = 0;\n      fseek(fi, file_size",
     "      sentence_length = 0;\n      eof = 0;\n      fseek(fi, file_size"),
]
"""``word2vec.c-seeded``: word2vec.c with its seed taken from the run and its
end-of-file rewind mended (the peers page's "six runs are one seed"), applied to a
copy in the build directory."""

SEED_ENV = {
    "word2vec.c-seeded": lambda seed: {"W2V_SEED": str(seed)},
    "word2vec.c-stock-start": lambda seed: {"W2V_THREAD_SEED": "0", "W2V_VECTOR_SEED": str(seed)},
    "word2vec.c-stock-vectors": lambda seed: {"W2V_THREAD_SEED": str(seed), "W2V_VECTOR_SEED": "0"},
}
"""The builds with :data:`SEEDED`'s edits, and the environment each gets for a run's
seed: both starts moved by it, or only the starting vectors' (the threads' generators
start as stock word2vec.c's, from 0 and 1), or only the threads' (the peers page's
"what sets the stock build's scores")."""


def build_word2vec(build_dir: Path, cpu: str = "native", seeded: bool = False) -> str:
    """Compile ../shared/peers/word2vec/word2vec.c with its makefile's flags (``cpu``
    replaces -march=native); ``seeded``: with the edits of :data:`SEEDED`."""
    source = WORD2VEC_SRC / "word2vec.c"
    binary = build_dir / ("word2vec-seeded" if seeded else "word2vec")
    if seeded:
        text = source.read_text()
        for old, new in SEEDED:
            if text.count(old) != 1:
                sys.exit(f"bench.py: word2vec.c no longer has {old!r} once")
            text = text.replace(old, new)
        source = build_dir / "word2vec-seeded.c"
        source.write_text(text)
    flags = [f"-march={cpu}" if f == "-march=native" else f for f in CFLAGS]
    subprocess.run(["gcc", str(source), "-o", str(binary), *flags], check=True)
    return str(binary)


def fma_peak(build_dir: Path, lanes: int = 8, cpu: str = "native") -> float:
    """One core's float32 multiply-adds per second with ``lanes``-wide vectors
    (8: 256-bit, the width numba's LLVM uses for the kernels), measured: the best
    of 5 runs of 12 independent FMA chains compiled with -march=native. A CPU that
    splits 256-bit work into 128-bit halves (AMD Zen 1) measures half."""
    src = build_dir / "fma.c"
    src.write_text(FMA_PROBE)
    binary = build_dir / f"fma{lanes}"
    subprocess.run(["gcc", "-O2", f"-march={cpu}", "-ffp-contract=fast", f"-DLANES={lanes}",
                    str(src), "-o", str(binary)], check=True)
    runs = [subprocess.run([str(binary), "100000000"], capture_output=True, text=True, check=True)
            for _ in range(5)]
    return max(float(r.stdout.split()[0]) for r in runs)


def plain_copy(corpus: str, workdir: Path) -> str:
    """The corpus uncompressed, as it is (word2vec.c and fastText read plain text)."""
    if not corpus.endswith(".gz"):
        return corpus
    target = workdir / Path(corpus).name.removesuffix(".gz")
    if not target.exists():
        tmp = target.with_suffix(".tmp")
        with gzip.open(corpus, "rb") as f, open(tmp, "wb") as out:
            while chunk := f.read(1 << 24):
                out.write(chunk)
        tmp.rename(target)
    return str(target)


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


def score(vectors_path: str, pairs: str | None = None) -> dict:
    """The vectors' analogies, WS353 and SimLex, and the Spearman correlation on every
    word-pair file (``word1<TAB>word2<TAB>score``) in the folder ``pairs``, by name."""
    from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs
    from hsw2v.model.reading import read_vectors

    v = read_vectors(vectors_path)
    google = evaluate_analogies(v, str(DATA / "questions-words.txt"), restrict=30000)
    scores = {
        "analogy": google["accuracy"],
        "semantic": google["semantic"]["accuracy"], "syntactic": google["syntactic"]["accuracy"],
        "ws353": evaluate_word_pairs(v, str(DATA / "wordsim353.tsv"))["spearman"],
        "simlex": evaluate_word_pairs(v, str(DATA / "simlex999.txt"))["spearman"],
    }
    for path in pair_files(pairs):
        scores[path.stem] = evaluate_word_pairs(v, str(path))["spearman"]
    return scores


def pair_files(folder: str | None) -> list[Path]:
    """The word-pair files of ``folder`` (none without one), in name order."""
    return sorted(p for p in Path(folder).iterdir() if p.is_file()) if folder else []


def peer_env(system: str, cpu: str | None) -> dict:
    """Environment that confines ``system`` to CPU model ``cpu``'s instructions: numba's
    target for hsw2v, OpenBLAS's kernels for gensim (fastText's wheel is prebuilt)."""
    if not cpu:
        return {}
    if system == "hsw2v":
        return cpu_env(cpu)
    if system == "gensim":
        return {"OPENBLAS_CORETYPE": {"haswell": "Haswell"}.get(cpu, cpu)}
    return {}


def at_epochs(system: str, epochs: int) -> tuple[str, int]:
    """``system`` without its ``@E`` (run at E epochs instead of the job's), and its epochs."""
    name, _, own = system.partition("@")
    return name, int(own) if own else epochs


def run_once(system, corpus, arch, epochs, threads, seed, workdir, binary=None, cpu=None,
             pairs=None) -> dict:
    out = str(workdir / f"{system}-{arch}.txt")
    system, epochs = at_epochs(system, epochs)
    cmd = [sys.executable, __file__, "--child", system, "--corpus", corpus, "--out", out,
           "--arch", arch, "--epochs", str(epochs), "--threads", str(threads), "--seed", str(seed)]
    if binary:
        cmd += ["--binary", binary]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                          env={**os.environ, **peer_env(system, cpu)})
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{system} failed:\n{proc.stderr[-2000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info.update(score(out, pairs), wall=wall)
    return info


SWEEP_MIN_COUNTS = (5, 3000, 30000)


def fma_sweep(corpus: str, arch: str, runs: int, peak: float, workdir: Path) -> None:
    """hsw2v's FMA rate with 1 thread as --min-count shrinks the vocabulary until
    both matrices fit in L1 or L2: if the rate stays, the kernels wait on their own
    instructions, not on memory."""
    results: dict[int, list] = {m: [] for m in SWEEP_MIN_COUNTS}
    for r in range(runs):
        for m in SWEEP_MIN_COUNTS:
            cmd = [sys.executable, __file__, "--child", "hsw2v", "--corpus", corpus, "--out",
                   str(workdir / f"sweep-{arch}.txt"), "--arch", arch, "--epochs", "1",
                   "--threads", "1", "--seed", str(r + 1), "--min-count", str(m)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"hsw2v failed:\n{proc.stderr[-2000:]}")
            results[m].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            print(f"# {arch} run {r + 1} min-count {m}: {json.dumps(results[m][-1])}",
                  file=sys.stderr, flush=True)
    print(f"\n{arch}, 1 epoch, 1 thread, median of {runs} runs: the FMA rate by vocabulary size")
    print("| --min-count | words | both matrices | FMAs per corpus word | G FMA/s | share of peak |")
    print("|---|---|---|---|---|---|")
    for m, res in results.items():
        v = res[0]["vocab_size"]
        rate = statistics.median(x["fma_per_word"] * x["vocab_words"] / x["train_s"] for x in res)
        print(f"| {m} | {v:,} | {(2 * v - 1) * 100 * 4 / 1e3:,.0f} KB | "
              f"{statistics.median(x['fma_per_word'] for x in res):,.0f} | {rate / 1e9:.2f} | "
              f"{100 * rate / peak:.0f}% |")
    sys.stdout.flush()


def report(arch, epochs, threads, runs, tokens, results, peak, peak_source, pair_dir=None) -> None:
    """Print one job's table, each peer's speed ratio to hsw2v, the quality check,
    hsw2v's fraction of the FMA peak and, over several runs, every score's spread
    (with the word-pair files of the folder ``pair_dir``)."""
    print(f"\n{arch}, {epochs} epoch(s), {threads} threads, median of {runs} runs")
    print(f"words/s: {tokens:,} corpus tokens x epochs / whole-process wall time")
    print("| system | analogy | semantic | syntactic | WS353 | SimLex | words/s | wall | peak RSS "
          "| time vs hsw2v |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    med = {}
    for s, res in results.items():
        m = {k: statistics.median(x[k] for x in res)
             for k in ("analogy", "semantic", "syntactic", "ws353", "simlex", "words_per_s",
                       "wall", "rss_mb")}
        med[s] = m
        ratio = ""
        if "hsw2v" in results and s != "hsw2v":
            pairs = [x["wall"] / h["wall"] for h, x in zip(results["hsw2v"], res)]
            ratio = (f"{statistics.median(pairs):.2f}x "
                     f"({', '.join(f'{x:.2f}' for x in pairs)})")
        print(f"| {s} | {100 * m['analogy']:.1f}% | {100 * m['semantic']:.1f}% | "
              f"{100 * m['syntactic']:.1f}% | {m['ws353']:.3f} | {m['simlex']:.3f} | "
              f"{m['words_per_s'] / 1e3:.0f}k | {m['wall']:.1f} s | {m['rss_mb']:.0f} MB | "
              f"{ratio} |")
    best = [s for s in ("gensim", "word2vec.c") if s in med]
    if "hsw2v" in med and best:
        h = med["hsw2v"]
        analogy = max(med[s]["analogy"] for s in best)
        ws = max(med[s]["ws353"] for s in best)
        print(f"quality vs the better of {' and '.join(best)}: analogy "
              f"{100 * (h['analogy'] - analogy):+.2f} points, WS353 {h['ws353'] - ws:+.3f}")
    if "hsw2v" in results:
        h = results["hsw2v"]
        rates = [x["fma_per_word"] * x["vocab_words"] * epochs / x["train_s"] / threads for x in h]
        fma = statistics.median(x["fma_per_word"] for x in h)
        rate = statistics.median(rates)
        print(f"hsw2v kernels: {fma / 1e3:.1f}k FMAs per corpus word, {rate / 1e9:.1f} G FMA/s "
              f"per thread while training = {100 * rate / peak:.0f}% of one core's peak "
              f"({peak / 1e9:.1f} G FMA/s, {peak_source})")
    if runs > 1:
        spread(results, ["analogy", "semantic", "syntactic", "ws353", "simlex",
                         *(f.stem for f in pair_files(pair_dir))])
    sys.stdout.flush()


def spread(results: dict, names: list[str]) -> None:
    """Print the mean and standard error over the runs of each score in ``names``, and
    each peer's difference from hsw2v in standard errors of the difference."""
    print("\nscores over the runs: mean ± standard error; hsw2v's difference (standard errors)")
    print("| system | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    stats = {s: {k: mean_se([x[k] for x in res]) for k in names} for s, res in results.items()}
    for s, st in stats.items():
        print(f"| {s} | " + " | ".join(f"{m:.4f} ± {se:.4f}" for m, se in st.values()) + " |")
        if "hsw2v" in stats and s != "hsw2v":
            cells = []
            for k in names:
                (a, sa), (b, sb) = stats["hsw2v"][k], st[k]
                se = (sa * sa + sb * sb) ** 0.5
                cells.append(f"{a - b:+.4f} ({(a - b) / se:+.1f})" if se else f"{a - b:+.4f}")
            print(f"| hsw2v − {s} | " + " | ".join(cells) + " |")


def mean_se(xs: list[float]) -> tuple[float, float]:
    """The mean of ``xs`` and its standard error (0 for one value)."""
    return statistics.mean(xs), (statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--arch", choices=["skipgram", "cbow"], help="default: both")
    p.add_argument("--epochs", type=int, help="default: 1 for skip-gram, 3 for CBOW")
    p.add_argument("--runs", type=int, default=2, help="runs per system (alternating)")
    p.add_argument("--first-seed", type=int, default=1,
                   help="run r (from 0) of a system trains with seed first-seed + r")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--systems", default="hsw2v,gensim",
                   help="of hsw2v, gensim, word2vec.c, word2vec.c-seeded (its seed from the "
                        "run, its end-of-file rewind mended), word2vec.c-stock-start (that "
                        "build, the threads' generators started as stock word2vec.c's), "
                        "word2vec.c-stock-vectors (its starting vectors stock), fasttext and "
                        "gensim-ns (gensim's negative-sampling defaults); SYSTEM@E runs it at "
                        "E epochs instead of the job's (hsw2v@E too)")
    p.add_argument("--peers", action="store_true",
                   help="every peer: hsw2v, gensim, word2vec.c and fastText (sets --systems)")
    p.add_argument("--cpu", help="compile for this CPU model instead of this machine's: hsw2v's "
                   "kernels (haswell: AVX2 and FMA only), word2vec.c's -march, gensim's OpenBLAS")
    p.add_argument("--peak-gfma", type=float,
                   help="one core's float32 FMA peak in G/s from the CPU's documentation "
                        "(default: measured at 256-bit width)")
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "hsw2v-bench"))
    p.add_argument("--json", help="also write the raw results here")
    p.add_argument("--jit", action="store_true", help="only time JIT compilation, cold and cached")
    p.add_argument("--scaling", action="store_true",
                   help="only compare training words/s at 1 and 2 threads")
    p.add_argument("--fma-sweep", action="store_true",
                   help="only hsw2v's FMA rate (1 thread) at --min-count "
                        f"{', '.join(map(str, SWEEP_MIN_COUNTS))}: memory or instructions?")
    p.add_argument("--pairs", metavar="DIR",
                   help="also score on every word-pair file in DIR (word1<TAB>word2<TAB>score), "
                        "such as sets kept outside the repository")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--min-count", type=int, default=5, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--binary", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        child(a.child, a.corpus, a.out, a.arch, a.epochs, a.threads, a.seed, a.binary, a.min_count)
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
    if a.fma_sweep:
        with tempfile.TemporaryDirectory() as build:
            peak = a.peak_gfma * 1e9 if a.peak_gfma else fma_peak(Path(build), cpu=a.cpu or "native")
        print(f"one core's peak: {peak / 1e9:.1f} G FMA/s ({'given' if a.peak_gfma else 'measured'})")
        for arch in [a.arch] if a.arch else ["skipgram", "cbow"]:
            fma_sweep(a.corpus, arch, a.runs, peak, workdir)
        return
    systems = list(PEERS) if a.peers else a.systems.split(",")
    corpora = {s: a.corpus for s in systems}
    for s in systems:
        name = at_epochs(s, 0)[0]
        if name.startswith("gensim"):
            corpora[s] = line_broken_copy(a.corpus, workdir)
        if name.startswith("word2vec.c") or name == "fasttext":
            corpora[s] = plain_copy(a.corpus, workdir)
    jobs = [(a.arch, a.epochs)] if a.arch else [("skipgram", 1), ("cbow", 3)]
    from hsw2v.text.reader import (
        iter_blocks,  # plain Python: this process never maps LLVM
    )

    tokens = sum(len(block.split()) for block in iter_blocks(a.corpus))  # in or out of vocab
    raw = []
    with tempfile.TemporaryDirectory() as build:
        builds = {seeded: build_word2vec(Path(build), a.cpu or "native", seeded)
                  for seeded in {at_epochs(s, 0)[0] in SEED_ENV for s in systems
                                 if s.startswith("word2vec.c")}}
        binaries = {s: builds[at_epochs(s, 0)[0] in SEED_ENV] for s in systems
                    if s.startswith("word2vec.c")}
        peak = a.peak_gfma * 1e9 if a.peak_gfma else fma_peak(Path(build), cpu=a.cpu or "native")
        if any(at_epochs(s, 0)[0] == "hsw2v" for s in systems):
            warm_up(a.cpu)
        if a.cpu:
            print(f"compiled for {a.cpu}: hsw2v's kernels (numba), word2vec.c (gcc -march), "
                  "gensim's OpenBLAS; fastText's wheel as built", flush=True)
        for arch, epochs in jobs:
            epochs = epochs or a.epochs or (1 if arch == "skipgram" else 3)
            results = {s: [] for s in systems}
            for seed in range(a.first_seed, a.first_seed + a.runs):
                for s in systems:
                    res = run_once(s, corpora[s], arch, epochs, a.threads, seed, workdir,
                                   binaries.get(s), a.cpu, a.pairs)
                    res["words_per_s"] = tokens * at_epochs(s, epochs)[1] / res["wall"]
                    results[s].append(res)
                    print(f"# {arch} run {seed} {s}: " + json.dumps(res), file=sys.stderr,
                          flush=True)
            raw.append({"arch": arch, "epochs": epochs, "results": results, "peak_fma": peak})
            report(arch, epochs, a.threads, a.runs, tokens, results, peak,
                   "measured" if not a.peak_gfma else "given", a.pairs)
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=2))


if __name__ == "__main__":
    main()
