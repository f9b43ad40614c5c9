#!/usr/bin/env python
"""Can a semantic tree beat Huffman for skip-gram? Four approaches, measured.

    python scripts/skipgram_trees.py [--depths 8,10,12] [--seeds 1,2,3]

Every tree is trained with skip-gram for 1 epoch (dim 100, window 5, min-count 5,
sample 1e-3, 2 threads) on all but the last 1M words of enwiki-17m, and scored on
those (held-out perplexity, `hsw2v score`), as in scripts/compare_trees.py:

- ``huffman``: the baseline, one run per seed;
- ``semantic``: the semantic tree (balanced split) of the Huffman model's mean
  context vectors, as ``--tree semantic`` builds it;
- ``semhuff``: Huffman's code lengths, with the words of each length placed in
  the semantic tree's leaf order, so that siblings are semantically close
  (SemHuff-style re-pairing; a canonical tree built bottom-up, level by level);
- ``below-D``: Huffman's tree down to depth D; below each node at depth D, a
  semantic tree (balanced) over its words (``--tree semantic --huffman-levels
  D``, :func:`hsw2v.trees.semantic.semantic_below`), one run per seed;
- ``output``: a semantic tree over the Huffman model's output-side vectors,
  o_w = Σ over w's path of ±u_n (the direction of h that w's path favours);
- ``rebuild``: the semantic tree rebuilt from the semantic model's own context
  means (a second round).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_trees import DATA, measure, split_corpus

import hsw2v
from hsw2v.trees.semantic import context_means, semantic_below, semantic_tree
from hsw2v.trees.tree import Tree


def leaf_order(tree: Tree) -> np.ndarray:
    """Each word's position among the leaves, left to right."""
    v, pos = tree.n_words, 0
    rank, stack = np.empty(v, np.int64), [v + tree.root]
    while stack:
        node = stack.pop()
        if node < v:
            rank[node] = pos
            pos += 1
        else:
            stack += [int(tree.children[node - v, 1]), int(tree.children[node - v, 0])]
    return rank


def semhuff(depths: np.ndarray, rank: np.ndarray) -> Tree:
    """A tree with these code lengths, built bottom-up: at each depth, the leaves of
    that depth and the nodes made below are ordered by ``rank`` (their first
    leaf's) and paired off in that order."""
    v = len(depths)
    children: list[tuple[int, int]] = []
    carried: list[tuple[int, int]] = []  # (rank, node id) of nodes made one level down
    for d in range(int(depths.max()), 0, -1):
        items = sorted(carried + [(int(rank[w]), w) for w in np.flatnonzero(depths == d)])
        assert len(items) % 2 == 0, "not a full tree's code lengths"
        carried = []
        for (ra, a), (_, b) in zip(items[::2], items[1::2]):
            children.append((a, b))
            carried.append((ra, v + len(children) - 1))
    return Tree(np.array(children, dtype=np.int32), "semhuff")


def output_vectors(model) -> np.ndarray:
    """o_w = Σ over w's path of (+u_n for code 0, −u_n for code 1)."""
    t = model.tree
    out = np.zeros_like(model.vectors)
    for k in range(int(t.depths.max())):  # the k-th node of every path that long
        words = np.flatnonzero(t.depths > k)
        at = t.path_offsets[words] + k
        sign = (1 - 2 * t.path_codes[at].astype(np.float32))[:, None]
        out[words] += sign * model.node_vectors[t.path_nodes[at]]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--depths", default="8,10,12")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "hsw2v-trees"))
    p.add_argument("--json", default="skipgram_trees.json")
    a = p.parse_args()
    workdir = Path(a.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    train_path, heldout = split_corpus(a.corpus, 1_000_000, workdir)
    common = {"arch": "skipgram", "epochs": 1, "threads": 2, "dim": 100, "window": 5,
              "min_count": 5, "sample": 1e-3, "progress": False}
    results = {}

    def run(name: str, tree: Tree | None, seed: int = 1, build: float = 0.0):
        extra = {"vocab": base.vocab, "tree": tree} if tree is not None else {}
        model = hsw2v.train(train_path, seed=seed, **common, **extra)
        results[name] = {**measure(model, heldout, model.seconds["train"]), "build_seconds": build}
        print(f"# {name}: {json.dumps(results[name])}", file=sys.stderr, flush=True)
        return model

    seeds = [int(s) for s in a.seeds.split(",")]
    base = run(f"huffman, seed {seeds[0]}", None, seeds[0])
    for seed in seeds[1:]:
        run(f"huffman, seed {seed}", None, seed)
    start = time.perf_counter()
    X = context_means(base, train_path)
    means = time.perf_counter() - start
    sem_tree = semantic_tree(X, "balanced")
    semantic = run("semantic", sem_tree, build=time.perf_counter() - start)
    start = time.perf_counter()
    run("semhuff", semhuff(base.tree.depths, leaf_order(sem_tree)),
        build=means + time.perf_counter() - start)
    start = time.perf_counter()
    run("output", semantic_tree(output_vectors(base), "balanced"), build=time.perf_counter() - start)
    start = time.perf_counter()
    run("rebuild", semantic_tree(context_means(semantic, train_path), "balanced"),
        build=time.perf_counter() - start)
    for depth in map(int, a.depths.split(",")):
        start = time.perf_counter()
        tree = semantic_below(X, base.vocab.counts, depth)
        build = means + time.perf_counter() - start
        for seed in seeds:
            run(f"below-{depth}, seed {seed}", tree, seed, build)
    print("Skip-gram, 1 epoch, trained on all but the last 1,000,000 words of "
          f"{Path(a.corpus).name}, scored on those. Trees are built from the seed-{seeds[0]} "
          "Huffman model; a row's change is against the Huffman run of the same seed.\n")
    print("| tree | held-out perplexity | vs Huffman | analogy | WS353 | weighted path | build |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        seed = name.split("seed ")[-1] if "seed " in name else str(seeds[0])
        ref = results[f"huffman, seed {seed}"]["perplexity"]
        print(f"| {name} | {r['perplexity']:.1f} | {100 * (r['perplexity'] / ref - 1):+.2f}% | "
              f"{100 * r['analogy']:.1f}% | {r['ws353']:.3f} | {r['weighted_path']:.2f} | "
              f"{r['build_seconds']:.0f} s |")
    Path(a.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
