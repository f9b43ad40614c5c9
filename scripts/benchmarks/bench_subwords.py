#!/usr/bin/env python
"""Subword vectors: hsw2v --subwords against fastText with the same settings.

Each run is a separate process doing the whole job (count, train, save the model),
timed from outside, with its peak resident memory; the systems alternate within
each seed. The models are then scored with hsw2v's evaluator: the Google analogies
(30k most frequent words, case-insensitive) and their halves, and every word-pair
set over *all* pairs, each word outside the vocabulary given the vector the model
builds from its n-grams (as Bojanowski et al. 2017 score fastText).

    python scripts/benchmarks/bench_subwords.py --arch cbow --seeds 3 --pairs DIR
    python scripts/benchmarks/bench_subwords.py --arch skipgram --systems hsw2v,fasttext

Systems: ``hsw2v`` (--subwords on a Huffman tree, fastText's tree), ``hsw2v-learned``
(--subwords on the kind's default tree: for CBOW the tree learned from a first
pass), ``fasttext`` (the fasttext-wheel package, -loss hs). Every system gets
dim 100, window 5, min-count 5, sample 1e-3, n-grams 3-6 in 2,000,000 buckets,
the same epochs and threads, and hsw2v's starting rate (CBOW 0.05, skip-gram
0.025). Speed: the median over seeds of each seed's wall-time ratio.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import DATA, REPO, mean_se, pair_files, peak_rss_mb, plain_copy

SETTINGS = {"dim": 100, "window": 5, "min_count": 5, "sample": 1e-3, "minn": 3, "maxn": 6,
            "buckets": 2_000_000}


def child(system: str, corpus: str, out: str, arch: str, epochs: int, threads: int,
          seed: int, min_count: int = SETTINGS["min_count"]) -> None:
    """Train one system in this process, save its model to ``out``, print timings."""
    start = time.perf_counter()
    alpha = 0.025 if arch == "skipgram" else 0.05
    if system.startswith("hsw2v"):
        import hsw2v

        tree = {} if system == "hsw2v-learned" else {"tree": "huffman"}
        model = hsw2v.train(corpus, arch=arch, epochs=epochs, threads=threads, seed=seed,
                            subwords=True, alpha=alpha, progress=False, **tree,
                            **{**SETTINGS, "min_count": min_count})
        model.save(out)
    elif system == "fasttext":
        import fasttext

        model = fasttext.train_unsupervised(
            corpus, model=arch, loss="hs", dim=SETTINGS["dim"], ws=SETTINGS["window"],
            minCount=SETTINGS["min_count"], t=SETTINGS["sample"], minn=SETTINGS["minn"],
            maxn=SETTINGS["maxn"], bucket=SETTINGS["buckets"], epoch=epochs, lr=alpha,
            thread=threads, verbose=0)  # (fastText 0.9.2 takes no seed)
        model.save_model(out)
    else:
        raise SystemExit(f"unknown system {system!r}")
    print(json.dumps({"inner_wall": time.perf_counter() - start, "rss_mb": peak_rss_mb()}))


def vectors_of(system: str, path: str):
    """The model's word vectors, building unseen words' from their n-grams."""
    from hsw2v.model.vectors import Vectors

    if system.startswith("hsw2v"):
        import hsw2v

        return hsw2v.load_model(path).keyed_vectors()
    import fasttext
    import numpy as np

    ft = fasttext.load_model(path)
    words = ft.words
    return Vectors(words, np.array([ft.get_word_vector(w) for w in words]),
                   lambda w: ft.get_word_vector(w))


def score(system: str, path: str, pairs: str | None) -> dict:
    from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs

    v = vectors_of(system, path)
    google = evaluate_analogies(v, str(DATA / "questions-words.txt"), restrict=30000)
    scores = {"analogy": google["accuracy"], "semantic": google["semantic"]["accuracy"],
              "syntactic": google["syntactic"]["accuracy"]}
    for p in [DATA / "wordsim353.tsv", DATA / "simlex999.txt", *pair_files(pairs)]:
        scores[p.stem] = evaluate_word_pairs(v, str(p))["spearman"]
    return scores


def run_once(system, corpus, arch, epochs, threads, seed, workdir, pairs) -> dict:
    out = str(workdir / f"{system}-{arch}-{seed}" ) + (".bin" if system == "fasttext" else ".npz")
    cmd = [sys.executable, __file__, "--child", system, "--corpus", corpus, "--out", out,
           "--arch", arch, "--epochs", str(epochs), "--threads", str(threads), "--seed", str(seed)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{system} failed:\n{proc.stderr[-2000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info.update(score(system, out, pairs), wall=wall)
    Path(out).unlink()
    return info


def warm_up(systems: list[str], arch: str, threads: int, workdir: Path) -> None:
    """Compile (and cache) hsw2v's kernels for these runs before any is timed."""
    tiny = workdir / "warm.txt"
    tiny.write_text("the cat sat on the mat and the dog ran to the cat\n" * 200)
    for s in systems:
        if s.startswith("hsw2v"):
            subprocess.run([sys.executable, __file__, "--child", s, "--corpus", str(tiny),
                            "--out", str(workdir / "warm.npz"), "--arch", arch, "--epochs", "1",
                            "--threads", str(threads), "--min-count", "1"], check=True,
                           capture_output=True)


def report(arch, epochs, threads, results: dict) -> None:
    names = [k for k in next(iter(results.values()))[0] if k not in ("inner_wall", "rss_mb",
                                                                       "wall")]
    print(f"\n{arch}, {epochs} epochs, {threads} threads, {len(next(iter(results.values())))} "
          "seeds: mean ± standard error; whole-process wall time and peak RSS, medians")
    print("| system | wall s | RSS MB | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 3) + "|")
    for s, res in results.items():
        cells = [f"{m:.4f} ± {se:.4f}" for m, se in (mean_se([x[k] for x in res]) for k in names)]
        print(f"| {s} | {statistics.median(x['wall'] for x in res):.1f} | "
              f"{statistics.median(x['rss_mb'] for x in res):,.0f} | " + " | ".join(cells) + " |")
    base = results.get("fasttext")
    for s, res in results.items():
        if s == "fasttext" or base is None:
            continue
        ratios = [b["wall"] / a["wall"] for a, b in zip(res, base)]
        cells = []
        for k in names:
            (a, sa), (b, sb) = mean_se([x[k] for x in res]), mean_se([x[k] for x in base])
            se = (sa * sa + sb * sb) ** 0.5
            cells.append(f"{a - b:+.4f} ({(a - b) / se:+.1f} SE)" if se else f"{a - b:+.4f}")
        print(f"| {s} − fasttext | ×{statistics.median(ratios):.2f} faster (per-seed: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}) | | " + " | ".join(cells) + " |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--arch", choices=["skipgram", "cbow"], default="cbow")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--first-seed", type=int, default=1, help="seeds run from this one up")
    p.add_argument("--systems", default="hsw2v,fasttext")
    p.add_argument("--pairs", help="a folder of word-pair files to score too (all pairs)")
    p.add_argument("--child")
    p.add_argument("--out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-count", type=int, default=SETTINGS["min_count"])
    a = p.parse_args()
    sys.path.insert(0, str(REPO))
    if a.child:
        child(a.child, a.corpus, a.out, a.arch, a.epochs, a.threads, a.seed, a.min_count)
        return
    systems = a.systems.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        corpus = plain_copy(a.corpus, workdir)
        warm_up(systems, a.arch, a.threads, workdir)
        results: dict[str, list] = {s: [] for s in systems}
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            for s in systems:
                results[s].append(run_once(s, corpus, a.arch, a.epochs, a.threads, seed,
                                           workdir, a.pairs))
                print(f"# {s} seed {seed}: {json.dumps(results[s][-1])}", file=sys.stderr,
                      flush=True)
        report(a.arch, a.epochs, a.threads, results)


if __name__ == "__main__":
    main()
