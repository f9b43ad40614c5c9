#!/usr/bin/env python
"""Compare tree kinds: training speed, held-out perplexity, analogies and WS353.

    python scripts/benchmarks/compare_trees.py                    # the shared 17M-word corpus
    python scripts/benchmarks/compare_trees.py --archs cbow --sg-epochs 1 --cbow-epochs 3

The last 1M words of the corpus are held out; every tree kind is trained on the
rest with the same settings (dim 100, window 5, min-count 5, sample 1e-3, 2
threads) and epochs (skip-gram 1, CBOW 3 by default). The semantic trees are
learned from the Huffman model of the same run (its mean context vectors, see
hsw2v/trees/semantic.py), so their cost is that model plus the tree build, reported
separately. Held-out perplexity is `hsw2v score` (full window, no subsampling).

Writes a Markdown table to stdout, the raw figures as JSON, and a PNG chart if
matplotlib is installed (pip install matplotlib).
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout

import hsw2v
from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs
from hsw2v.evaluation.scoring import score
from hsw2v.trees.semantic import context_means, semantic_tree

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
KINDS = ["huffman", "balanced", "random", "fano", "classes", "semantic-balanced", "semantic-adaptive",
         "huffman+bias", "classes+bias", "semantic-balanced+bias", "semantic-adaptive-0.1",
         "semantic-adaptive-0.25", "semantic-adaptive-0.4", "wordnet", "wordnet-from-huffman"]
"""A kind ending in ``+bias`` is that tree trained with ``--node-bias``;
``semantic-adaptive-E`` is ADAPTIVE(E), where words may get several codes
(``--epsilon E``, at most ``MAX_CODES``); ``wordnet-from-huffman`` is the WordNet
tree with its wide nodes split by the Huffman model's context vectors
(``--tree wordnet --tree-from``; it needs Debian's wordnet-base)."""
MAX_CODES = 4


def split_corpus(corpus: str, held_out: int, workdir: Path) -> tuple[str, str]:
    train_path, test_path = workdir / "train.txt", workdir / "heldout.txt"
    if not (train_path.exists() and test_path.exists()):
        opener = gzip.open if corpus.endswith(".gz") else open
        with opener(corpus, "rb") as f:
            words = f.read().split()
        train_path.write_bytes(b" ".join(words[:-held_out]) + b"\n")
        test_path.write_bytes(b" ".join(words[-held_out:]) + b"\n")
    return str(train_path), str(test_path)


def measure(model, heldout: str, seconds: float) -> dict:
    v = model.keyed_vectors()
    shape = model.tree.summary(model.vocab.counts)
    return {
        "words_per_s": model.vocab.total * model.settings.epochs / seconds,
        "train_seconds": seconds,
        "perplexity": score(model, heldout)["perplexity"],
        "analogy": evaluate_analogies(v, str(DATA / "questions-words.txt"), restrict=30000)["accuracy"],
        "ws353": evaluate_word_pairs(v, str(DATA / "wordsim353.tsv"))["spearman"],
        "depth": shape["depth"],
        "weighted_path": shape["weighted_mean_path_length"],
        "codes_per_word": shape["codes_per_word"],
        "mean_path": shape["mean_path_length"],
        **({"covered_token_share": shape["covered_token_share"]}
           if "covered_token_share" in shape else {}),
    }


def plot(results: dict, path: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    archs = list(results)
    fig, axes = plt.subplots(len(archs), 3, figsize=(14, 3.6 * len(archs)), squeeze=False)
    for row, arch in enumerate(archs):
        kinds = list(results[arch])
        for col, (key, label) in enumerate([("perplexity", "held-out perplexity (lower is better)"),
                                            ("analogy", "analogy accuracy"),
                                            ("words_per_s", "training words/s")]):
            ax = axes[row][col]
            vals = [results[arch][k][key] for k in kinds]
            ax.bar(range(len(kinds)), vals, color=["#4c72b0" if k == "huffman" else "#dd8452"
                                                   if k.startswith("semantic") else "#8c8c8c"
                                                   for k in kinds])
            ax.set_xticks(range(len(kinds)), kinds, rotation=30, ha="right", fontsize=8)
            ax.set_title(f"{arch}: {label}", fontsize=9)
            if key == "perplexity":
                lo = min(vals)
                ax.set_ylim(lo * 0.9, max(vals) * 1.02)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def build_times(n_words: int, dim: int = 100) -> None:
    """Seconds to build each kind of tree over ``n_words`` Zipf-distributed words."""
    import numpy as np

    from hsw2v.settings import TrainSettings
    from hsw2v.trees.registry import TreeInputs, build_tree

    counts = np.sort((1e7 / np.arange(1, n_words + 1)).astype(np.int64) + 1)[::-1]
    for kind in ("huffman", "balanced", "random", "fano", "classes"):
        start = time.perf_counter()
        build_tree(kind, TreeInputs([], counts, TrainSettings()))
        print(f"{kind}: {time.perf_counter() - start:.2f} s")
    X = np.random.default_rng(0).normal(size=(n_words, dim)).astype(np.float32)
    semantic_tree(X[:100], "balanced")  # compile or load the numba kernels first
    for split in ("balanced", "adaptive"):
        start = time.perf_counter()
        semantic_tree(X, split)
        print(f"semantic-{split} (EM on {dim}-d vectors): {time.perf_counter() - start:.2f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--held-out", type=int, default=1_000_000, help="words held out at the end")
    p.add_argument("--archs", default="skipgram,cbow")
    p.add_argument("--sg-epochs", type=int, default=1)
    p.add_argument("--cbow-epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "hsw2v-trees"))
    p.add_argument("--json", default="compare_trees.json")
    p.add_argument("--png", default="compare_trees.png")
    p.add_argument("--build-time", type=int, metavar="V",
                   help="only time building each kind of tree over V words")
    a = p.parse_args()
    if a.build_time:
        build_times(a.build_time)
        return
    workdir = Path(a.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    train_path, heldout = split_corpus(a.corpus, a.held_out, workdir)
    kinds = a.kinds.split(",")
    results: dict = {}
    for arch in a.archs.split(","):
        epochs = a.sg_epochs if arch == "skipgram" else a.cbow_epochs
        common = {"arch": arch, "epochs": epochs, "threads": a.threads, "dim": 100, "window": 5,
                  "min_count": 5, "sample": 1e-3, "progress": False}
        results[arch] = {}
        huffman_model = None
        for kind in kinds:
            extra = {}
            base, _, flag = kind.partition("+")
            common["node_bias"] = flag == "bias"
            if base.startswith("wordnet-from"):
                if huffman_model is None:
                    huffman_model = hsw2v.train(train_path, **{**common, "node_bias": False})
                model = hsw2v.train(train_path, tree="wordnet", tree_from=huffman_model, **common)
                extra = {"tree_seconds": model.seconds["tree"]}
            elif base.startswith("semantic"):
                if huffman_model is None:
                    huffman_model = hsw2v.train(train_path, **{**common, "node_bias": False})
                start = time.perf_counter()
                X = context_means(huffman_model, train_path)
                means_s = time.perf_counter() - start
                split, _, epsilon = base[len("semantic-"):].partition("-")
                tree = semantic_tree(X, split, epsilon=float(epsilon or 0), max_codes=MAX_CODES)
                extra = {"context_means_seconds": means_s,
                         "cluster_seconds": time.perf_counter() - start - means_s,
                         "first_pass_seconds": huffman_model.seconds["train"]}
                model = hsw2v.train(train_path, vocab=huffman_model.vocab, tree=tree, **common)
            else:
                model = hsw2v.train(train_path, tree=base, **common)
                extra = {"tree_seconds": model.seconds["tree"]}
                if kind == "huffman":
                    huffman_model = model
            res = measure(model, heldout, model.seconds["train"])
            res.update(extra)
            results[arch][kind] = res
            print(f"# {arch} {kind}: {json.dumps(res)}", file=sys.stderr, flush=True)
    print(f"Trained on all but the last {a.held_out:,} words of {Path(a.corpus).name}; "
          f"skip-gram {a.sg_epochs} epoch(s), CBOW {a.cbow_epochs}; {a.threads} threads.\n")
    print("| arch | tree | held-out perplexity | analogy | WS353 | train words/s | depth | "
          "mean path | weighted path | codes per word | tree build |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for arch, rows in results.items():
        for kind, r in rows.items():
            build = (f"{r['context_means_seconds']:.1f} s means + {r['cluster_seconds']:.1f} s EM "
                     f"(+ {r['first_pass_seconds']:.0f} s first pass)" if "cluster_seconds" in r
                     else f"{r['tree_seconds']:.1f} s" if "tree_seconds" in r else "")
            print(f"| {arch} | {kind} | {r['perplexity']:.1f} | {100 * r['analogy']:.1f}% | "
                  f"{r['ws353']:.3f} | {r['words_per_s'] / 1e3:.0f}k | {r['depth']} | "
                  f"{r.get('mean_path', float('nan')):.2f} | {r['weighted_path']:.2f} | {r['codes_per_word']:.3f} | {build} |")
    Path(a.json).write_text(json.dumps(results, indent=2))
    if plot(results, a.png):
        print(f"\nchart: {a.png}")
    else:
        print("\n(no chart: matplotlib is not installed)")


if __name__ == "__main__":
    main()
