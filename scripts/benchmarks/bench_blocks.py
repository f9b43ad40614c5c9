#!/usr/bin/env python
"""Training-kernel words/s of two checkouts of hsw2v in one process, block by block:
each step trains the same blocks with one build, then the other (in alternating
order), so both see the same machine at the same moment. On a shared machine whose
speed drifts over seconds, this resolves a few percent where whole runs
(``scripts/benchmarks/bench_kernels.py``) cannot.

    git worktree add /tmp/before HEAD~1
    python scripts/benchmarks/bench_blocks.py /tmp/before . --arch cbow --threads 2

Prints each build's median words/s and the median (and quartiles) of the per-step
ratios, after against before. Each build trains its own copy of the weights, from
the same start, on the first ``--blocks`` 1 MiB blocks of enwiki-17m, ``--passes``
times; with ``--threads T`` a step trains T consecutive blocks, one a thread.
Settings: dim 100, window 5, sample 1e-3, min-count 5, Huffman tree.
"""
from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "enwiki-17m.txt.gz"


MODULES = {"corpus": "corpus", "reader": "reader", "sgd": "sgd", "trainer": "trainer",
           "tree": "tree", "utils": "utils", "kernel_setup": "kernel_setup"}
"""The flat layout's modules, by the name this script gives them."""
SUBPACKAGES = {"corpus": "counting.corpus", "reader": "text.reader", "sgd": "training.block",
               "trainer": "runs.trainer", "tree": "trees.tree", "utils": "jit.helpers",
               "kernel_setup": ("runs.kernel_setup", "runs.kernels"), "state": "training.state",
               "kinds": "training.kinds", "settings": "settings", "common": "runs.common"}
"""The same modules in the layout of subpackages, and those it adds (of a module
renamed since, each name it had, newest first)."""


def load(checkout: str, name: str, root: Path) -> SimpleNamespace:
    """``checkout``'s modules, imported from a copy of its package named ``name``
    under ``root`` (the package imports itself relatively, so two copies coexist)."""
    shutil.copytree(Path(checkout) / "hsw2v", root / name,
                    ignore=shutil.ignore_patterns("__pycache__"))
    layout = SUBPACKAGES if (root / name / "training").is_dir() else MODULES
    found = {}
    for key, names in layout.items():
        present = [m for m in ((names,) if isinstance(names, str) else names)
                   if (root / name / (m.replace(".", "/") + ".py")).exists()]
        if present:
            found[key] = present[0]
    return SimpleNamespace(**{k: importlib.import_module(f"{name}.{m}") for k, m in found.items()})


class Build:
    """One build's compiled kernel and what it trains: weights, settings, states.

    Built from the parts that training puts together, through names that older
    checkouts have too, so that a build from before a change loads as well as the
    one after it."""

    def __init__(self, pkg, vocab, tree, arch: str, threads: int):
        sgd, trainer, utils = pkg.sgd, pkg.trainer, pkg.utils
        setup_home = getattr(pkg, "kernel_setup", trainer)  # (these were in trainer before)
        state_home = getattr(pkg, "state", sgd)
        syn0, syn1 = getattr(pkg, "common", trainer).initial_weights(len(vocab), tree.n_leaves - 1,
                                                                      100, 1)
        self.keep = setup_home.keep_probabilities(vocab.counts, 1e-3)
        kinds = getattr(pkg, "kinds", None)  # the kind's private rows, where it has its own
        n_hot = getattr(kinds.model_kinds[arch], "hot_nodes", None) if kinds else None
        n_hot = setup_home.HOT_NODES if n_hot is None else n_hot
        hot, slot = setup_home.hot_inner_nodes(tree, vocab.counts, n_hot if threads > 1 else 0)
        self.weights = state_home.Weights(syn0, syn1, hot, slot)
        self.paths = tree.training_paths
        block_bytes = getattr(trainer, "BLOCK_BYTES", None) or pkg.reader.BLOCK_BYTES
        words = getattr(kinds.model_kinds[arch], "private_words", 0) if kinds else 0
        private = {"word_rows": syn0[:words]} if words and threads > 1 else {}  # (as epochs.py)
        self.states = [state_home.new_state(1 + t, block_bytes // 2 + 2, 5, tree.step_scratch,
                                            syn1[hot], **private) for t in range(threads)]
        none = np.empty(0, np.int32)
        if hasattr(pkg, "kinds"):  # the kind's config, and its kernel
            kind = pkg.kinds.model_kinds[arch]
            self.config = kind.config_of(pkg.settings.TrainSettings(arch=arch, window=5))._replace(
                sync_every=getattr(kind, "hot_sync_words", None)
                or setup_home.HOT_SYNC_WORDS)  # (where a kind owned no interval)
            if "fast_rows" in self.config._fields:  # (as kernel_setup sets it)
                self.config = self.config._replace(fast_rows=kind.fast_rows)
            self.kernel = sgd.block_kernel(kind, self.config, self.keep, self.weights, self.paths,
                                           self.states[0], 100)
            return
        self.config = sgd.Config(5, True, arch == "skipgram", setup_home.HOT_SYNC_WORDS)
        self.kernel = utils.for_dim(sgd.train_block, none, np.empty(0, np.int64), 0, 0.0, 0.0, self.keep,
                                    self.weights, self.paths, self.config, self.states[0], 100)

    def train(self, blocks: list) -> float:
        """Train ``blocks``, one a thread; the seconds it took."""
        def run(t: int) -> None:
            ids, ends = blocks[t]
            self.kernel(ids, ends, len(ends), 0.025, 0.0249, self.keep, self.weights, self.paths,
                        self.config, self.states[t], 100)
        workers = [threading.Thread(target=run, args=(t,)) for t in range(len(blocks))]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--arch", choices=("cbow", "skipgram"), default="cbow")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--blocks", type=int, default=40)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hsw2v-bench-blocks-"))
    sys.path.insert(0, str(root))
    try:
        pkgs = [load(c, f"hsw2v_{k}", root) for k, c in enumerate((args.before, args.after))]
        first = pkgs[0]
        vocab, _ = first.trainer.build_vocab(str(CORPUS), min_count=5)
        tree = (first.tree.huffman(vocab.counts) if hasattr(first.tree, "huffman")
                else first.tree.build_tree("huffman", vocab.counts, 1))
        table = first.corpus.WordTable(vocab.words)
        blocks = []
        for block in first.reader.iter_blocks(str(CORPUS)):
            blocks.append(table.encode(block))
            if len(blocks) == args.blocks:
                break
        builds = [Build(p, vocab, tree, args.arch, args.threads) for p in pkgs]
        for b in builds:  # warm up
            b.train(blocks[:args.threads])
        speed: list[list[float]] = [[], []]
        ratios = []
        steps = [blocks[i:i + args.threads] for i in range(0, len(blocks) - args.threads + 1, args.threads)]
        for k, step in enumerate(steps * args.passes):
            words = sum(len(ids) for ids, _ in step)
            seconds = [0.0, 0.0]
            for j in ((0, 1) if k % 2 == 0 else (1, 0)):
                seconds[j] = builds[j].train(step)
                speed[j].append(words / seconds[j])
            ratios.append(seconds[0] / seconds[1])
        q1, q2, q3 = np.percentile(ratios, [25, 50, 75])
        print(f"{args.arch}, {args.threads} thread(s), {len(ratios)} steps")
        for checkout, s in zip((args.before, args.after), speed):
            print(f"{checkout}: {statistics.median(s) / 1e3:.0f}k training words/s")
        print(f"{args.after} vs {args.before}: {q2:.3f}x (quartiles {q1:.3f}, {q3:.3f})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
