#!/usr/bin/env python
"""Where one CBOW word's time goes: throw-away builds, each with one phase of the
training kernel taken out (or done twice), timed against the whole kernel with
``scripts/benchmarks/bench_blocks.py`` (the same blocks, builds alternating, one process).

    python scripts/benchmarks/ablate_cbow.py                 # every phase, 2 threads (the job's)
    python scripts/benchmarks/ablate_cbow.py --phases scores,nodes --threads 1

A phase that the example stream does not depend on is taken out: the build runs
the same examples without it, and its cost is the time saved. A phase that decides
the examples (subsampling, the window's draw) cannot be taken out without changing
what the rest does, so it is done twice instead, the second time with the same
result, and its cost is the time added. Either way the builds train wrongly; they
only time the phase. ``bench_blocks.py`` gives the median of the per-step ratios of
the two builds' times, r; a phase's share is |1 − 1/r| of the whole kernel's time a
word (per thread, over the corpus's words before subsampling).

Each edit names the text it replaces; when the kernel's code moves on, the script
stops with the edit that no longer applies.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PHASES: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "subsampling": ("reading ids and subsampling (done twice)", [
        ("training/walk.py",
         "        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)\n",
         "        m, _ = subsample(ids, start, end, keep_prob, r, sen, sen_pos)\n"
         "        m, r = subsample(ids, start, end, keep_prob, r, sen, sen_pos)\n")]),
    "window": ("the window's draw and the context's gathering (done twice)", [
        ("training/walk.py",
         "            n_ctx, r = context_words(visitor.config, sen, i, m, window, shrink, r, ctx)\n",
         "            n_ctx, r = context_words(visitor.config, sen, i, m, window, shrink, r, ctx)\n"
         "            n_ctx, r = context_words(visitor.config, sen, i, m, window, shrink, r, ctx)\n")]),
    "mean": ("the context's mean (taken out: h keeps the last example's)", [
        ("training/cbow.py",
         "    context_mean(syn0, ctx, n_ctx, t.config.cbow_mean, h, dim)\n    grad_h[:] = 0.0\n",
         "    grad_h[:] = 0.0\n")]),
    "scores": ("the path's scores and σ (taken out: a fixed branch gradient)", [
        ("softmax/one_code.py",
         "        branch_loss, slope = branch_loss_grad(sign * scratch[p])\n",
         "        branch_loss, slope = np.float32(0.0), np.float32(0.5)\n"),
        ("softmax/one_code.py",
         "    bias = NODE_BIAS\n    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes\n"
         "    p0 = offsets[target]\n    n = offsets[target + 1] - p0\n    p = 0\n"
         "    while p + 4 <= n:  # four nodes a pass",
         "    bias = NODE_BIAS\n    offsets, nodes, codes = paths.offsets, paths.nodes, paths.codes\n"
         "    p0 = offsets[target]\n    n = offsets[target + 1] - p0\n    p = n\n"
         "    while p + 4 <= n:  # four nodes a pass")]),
    "nodes": ("the node updates (taken out: the nodes are read, not written)", [
        ("softmax/one_code.py",
         "            u0[d] = a0 + g0 * hd\n            u1[d] = a1 + g1 * hd\n"
         "            u2[d] = a2 + g2 * hd\n            u3[d] = a3 + g3 * hd\n", ""),
        ("softmax/one_code.py",
         "            grad_h[d] += g * u[d]\n            u[d] += g * h[d]\n",
         "            grad_h[d] += g * u[d]\n")]),
    "context": ("the context updates (taken out)", [
        ("training/cbow.py",
         "        for d in range(dim):\n            c[d] += grad_h[d]\n",
         "        pass\n")]),
    "merges": ("the private rows' merges (taken out: never merged)", [
        ("training/block.py",
         "    if since_sync == sync_every:\n        sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)\n",
         "    if since_sync == -1:\n        sync_hot_rows(syn1, hot_nodes, hot_rows, hot_base)\n"),
        ("training/block.py", "        if since_sync > 0 and fast > 0:\n",
         "        if since_sync < 0 and fast > 0:\n")]),
    "rate": ("the learning rate's bookkeeping (taken out: one rate a block)", [
        ("training/block.py",
         "    alpha = np.float32(v.alpha0 + v.slope * position)\n",
         "    alpha = np.float32(v.alpha0)\n"),
        ("training/walk.py", "        sen_pos[m] = k\n", "")]),
}


def build(phase: str, root: Path) -> Path:
    """A copy of this checkout's package with ``phase``'s edits applied."""
    target = root / phase
    shutil.copytree(REPO / "hsw2v", target / "hsw2v", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, old, new in PHASES[phase][1]:
        path = target / "hsw2v" / rel
        text = path.read_text()
        if text.count(old) != 1:
            sys.exit(f"ablate_cbow.py: the edit of {phase!r} no longer applies to {rel}: "
                     f"{old.strip().splitlines()[0]!r} occurs {text.count(old)} times")
        path.write_text(text.replace(old, new))
    return target


def floors(root: Path, window: int = 5, dim: int = 100, sample: float = 1e-3) -> list[tuple]:
    """Each phase's floor in ns a corpus word: the larger of its arithmetic at the
    measured FMA peak and its loads and stores at L1's width, for enwiki-17m's
    words (min-count 5) and their Huffman codes, in expectation over subsampling
    and the shrunk window. Assumes what Zen 2 and later and Intel since Haswell do
    each cycle: two 8-float FMAs (or adds), two 32-byte loads and one 32-byte
    store; the clock is taken as the peak over 16 FMAs a cycle."""
    sys.path.insert(0, str(REPO / "scripts" / "benchmarks"))
    import numpy as np
    from bench import fma_peak

    from hsw2v.counting.vocab import keep_probabilities
    from hsw2v.runs.trainer import build_vocab
    from hsw2v.training.block import FAST_SYNC_WORDS
    from hsw2v.training.kinds import model_kinds
    from hsw2v.trees.tree import huffman

    vocab = build_vocab(str(REPO.parent / "shared" / "data" / "enwiki-17m.txt.gz"), min_count=5)
    vocab = vocab[0] if isinstance(vocab, tuple) else vocab
    counts = np.asarray(vocab.counts, dtype=np.float64)
    kept = counts * keep_probabilities(vocab.counts, sample)
    k = kept.sum() / counts.sum()  # kept words a corpus word
    nodes = (kept * huffman(vocab.counts).nodes_per_word).sum() / counts.sum()  # path nodes
    ctx = k * (window + 1)  # context rows: 2·E[window − b], b uniform in [0, window)
    peak = fma_peak(root)
    ns = 16 / peak * 1e9  # one cycle
    cbow = model_kinds["cbow"]
    fast, hot = cbow.fast_rows, cbow.hot_nodes
    merged = k * (fast / FAST_SYNC_WORDS + hot / cbow.hot_sync_words) * dim  # floats a word

    def floor(fmas=0.0, loads=0.0, stores=0.0, scalar=0.0):  # floats, and scalar cycles
        return max(fmas / 16, loads * 4 / 64, stores * 4 / 32) * ns + scalar * ns

    return [
        ("subsampling", floor(scalar=1), "1 cycle: an id, its keep probability, a draw"),
        ("window", floor(scalar=2 * k), "2 cycles a kept word: a draw, the span"),
        ("mean", floor(fmas=ctx * dim, loads=ctx * dim), f"{ctx:.2f} rows a word, added"),
        ("scores", floor(fmas=nodes * dim, loads=nodes * dim, scalar=2.5 * nodes),
         f"{nodes:.2f} dot products a word; σ 2.5 cycles a node"),
        ("nodes", floor(fmas=2 * nodes * dim, loads=nodes * dim, stores=nodes * dim),
         "2 FMAs a float of each node; its row stored"),
        ("context", floor(fmas=ctx * dim, loads=ctx * dim, stores=ctx * dim), "each row stored"),
        ("merges", floor(loads=3 * merged, stores=3 * merged),
         f"{merged:.0f} floats a word, 3 rows loaded and stored (no coherence misses)"),
        ("rate", floor(scalar=k), "1 cycle a kept word"),
    ], {"kept": k, "nodes": nodes, "peak": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", default=",".join(PHASES))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--blocks", type=int, default=30)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--floors", action="store_true", help="only the floors")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hsw2v-ablate-"))
    rows = []
    try:
        bounds, facts = floors(root)
        print(f"{facts['kept']:.3f} kept words and {facts['nodes']:.2f} path nodes a corpus word; "
              f"peak {facts['peak'] / 1e9:.1f} G FMA/s a core")
        for phase, ns, why in bounds:
            print(f"floor {phase}: {ns:.1f} ns ({why})")
        for phase in [] if args.floors else args.phases.split(","):
            out = subprocess.run(
                [sys.executable, str(REPO / "scripts" / "benchmarks" / "bench_blocks.py"), str(REPO),
                 str(build(phase, root)), "--arch", "cbow", "--threads", str(args.threads),
                 "--blocks", str(args.blocks), "--passes", str(args.passes)],
                capture_output=True, text=True, check=True).stdout
            speeds = [float(x) for x in re.findall(r": (\d+)k training words/s", out)]
            ratio, q1, q3 = (float(x) for x in re.search(
                r": ([\d.]+)x \(quartiles ([\d.]+), ([\d.]+)\)", out).groups())
            whole = 1e9 / (1e3 * speeds[0]) * args.threads
            rows.append((phase, whole, ratio, q1, q3))
            print(f"{phase}: whole kernel {whole:.0f} ns/word; without/twice {ratio:.3f}x "
                  f"(quartiles {q1:.3f}, {q3:.3f})", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not rows:
        return
    whole = statistics.median(w for _, w, *_ in rows)
    bound = {phase: ns for phase, ns, _ in bounds}
    print("\n| phase | ns a word | share | time ratio (quartiles) | floor, ns |\n|---|---|---|---|---|")
    for phase, _, ratio, q1, q3 in rows:
        cost = abs(1 - 1 / ratio) * whole  # removed: t·(1 − 1/r); done twice: t·(1/r − 1)
        print(f"| {PHASES[phase][0]} | {cost:.0f} | {cost / whole:.0%} | {ratio:.3f}× ({q1:.3f}, "
              f"{q3:.3f}) | {bound[phase]:.1f} |")
    print(f"| the whole kernel (median over the runs) | {whole:.0f} | 100% | | "
          f"{sum(bound.values()):.0f} |")


if __name__ == "__main__":
    main()
