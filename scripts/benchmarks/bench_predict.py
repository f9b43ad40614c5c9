#!/usr/bin/env python
"""Time exact top-10 prediction by best-first search against brute force over all leaves.

    python scripts/benchmarks/bench_predict.py                  # trains CBOW, 1 epoch, on the shared corpus
    python scripts/benchmarks/bench_predict.py --model m.npz    # or loads a saved model

Both run in numba on one thread, one call per context, for single contexts drawn
from the corpus (the four words around a random position); each method takes the
contexts in its own loop. It reports the median time per context of
each, their ratio, the mean number of inner nodes the search expanded, the
throughput of the parallel batch search, and checks that both give the same words.
"""
from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout

import numba
import numpy as np

import hsw2v
from hsw2v.softmax.search import all_log_probs, best_first, best_first_batch

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def contexts_from_corpus(model, corpus: str, n: int, rng) -> list[list[str]]:
    opener = gzip.open if corpus.endswith(".gz") else open
    with opener(corpus, "rb") as f:
        words = f.read(20_000_000).decode("utf-8", "ignore").split()
    out = []
    while len(out) < n:
        i = int(rng.integers(2, len(words) - 3))
        ctx = [w for w in words[i - 2:i] + words[i + 1:i + 3] if w in model.vocab]
        if ctx:
            out.append(ctx)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", help="a saved model; default: train CBOW 1 epoch on --corpus")
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--contexts", type=int, default=1000)
    p.add_argument("--topn", type=int, default=10)
    a = p.parse_args()
    numba.set_num_threads(1)
    if a.model:
        model = hsw2v.load_model(a.model)
    else:
        model = hsw2v.train(a.corpus, arch="cbow", epochs=1, progress=True)
    V = len(model.vocab)
    if model.tree.n_leaves > V:
        sys.exit("bench_predict.py: this model's words have several codes; it times the one-code "
                 "search (Model.predict runs the other)")
    print(f"model: {model.arch}, V = {V}, dim = {model.dim}, tree depth max {model.tree.depths.max()}")
    rng = np.random.default_rng(0)
    contexts = contexts_from_corpus(model, a.corpus, a.contexts, rng)
    mats = [model.context_matrix(c) for c in contexts]
    t = model.tree
    order = t.inner_order
    keys = np.empty(V + 2)
    items = np.empty(V + 2, dtype=np.int64)
    words = np.empty(a.topn, dtype=np.int64)
    logp = np.empty(a.topn)
    out = np.empty(V)
    # compile and warm up
    best_first(mats[0], model.node_vectors, t.children, t.root, a.topn, words, logp, keys, items)
    all_log_probs(mats[0], model.node_vectors, t.children, order, out)
    # Each method runs over all contexts in its own loop, so neither evicts the
    # other's working set from the cache between calls.
    search_times, brute_times, expanded, agree, found_words = [], [], [], 0, []
    for H in mats:
        s = time.perf_counter()
        found, n_exp = best_first(H, model.node_vectors, t.children, t.root, a.topn, words, logp,
                                  keys, items)
        search_times.append(time.perf_counter() - s)
        expanded.append(n_exp)
        found_words.append(words[:found].copy())
    for H, got in zip(mats, found_words):
        s = time.perf_counter()
        all_log_probs(H, model.node_vectors, t.children, order, out)
        top = np.argpartition(-out, a.topn)[:a.topn]
        top = top[np.argsort(-out[top])]
        brute_times.append(time.perf_counter() - s)
        agree += np.array_equal(top, got)
    ms = statistics.median(search_times) * 1e3
    mb = statistics.median(brute_times) * 1e3
    print(f"best-first search, top-{a.topn}: median {ms * 1e3:.1f} µs per context, "
          f"mean {np.mean(expanded):.1f} inner nodes expanded (of {V - 1})")
    print(f"brute force over all {V} leaves: median {mb * 1e3:.1f} µs per context")
    print(f"speed-up: {mb / ms:.0f}x; same top-{a.topn} words in {agree}/{len(mats)} contexts")
    # batch: all contexts in one call, parallel over contexts
    rows = np.array([len(h) for h in mats], dtype=np.int64)
    Hs = np.zeros((len(mats), rows.max(), model.dim), dtype=np.float32)
    for b, h in enumerate(mats):
        Hs[b, :len(h)] = h
    bw = np.empty((len(mats), a.topn), dtype=np.int64)
    bl = np.empty((len(mats), a.topn))
    be = np.empty(len(mats), dtype=np.int64)
    for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
        numba.set_num_threads(threads)
        best_first_batch(Hs, rows, model.node_vectors, t.children, t.root, t.flat,
                         t.max_codes, a.topn, bw, bl, be)
        s = time.perf_counter()
        best_first_batch(Hs, rows, model.node_vectors, t.children, t.root, t.flat,
                         t.max_codes, a.topn, bw, bl, be)
        el = time.perf_counter() - s
        print(f"batch of {len(mats)} contexts, {threads} thread(s): {len(mats) / el:,.0f} contexts/s")


if __name__ == "__main__":
    main()
