#!/usr/bin/env python
"""Whether two checkouts of hsw2v train the very same bits: for every model kind,
each with every tree kind of the registry, an ADAPTIVE(0.25) tree and node biases,
both train the same slice of the bundled corpus with ``--threads 1`` and a seed,
and the word vectors, inner-node vectors and tree of their model files, and their
vectors files, are compared byte for byte.

    git worktree add /tmp/before HEAD~1
    python scripts/tools/same_bits.py /tmp/before .

Each checkout runs in its own processes with its own numba cache, and each setting
is trained twice: the second run, with the kernels loaded from the cache, is the
one compared (a run that compiles afresh can give other bits; see the issue on the
first run). The runs start outside both checkouts, and each checks that it imports
its own package. Prints what differs (the word vectors, the inner-node vectors, the
tree's children, the vectors file); exits 1 if any setting differs.
"""
from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]

def settings() -> dict[str, list[str]]:
    """Every tree kind of the registry, an ADAPTIVE(0.25) tree and node biases (on the
    default tree), by name."""
    from hsw2v.trees.registry import tree_builders

    return {**{name: ["--tree", name] for name in tree_builders},
            "adaptive": ["--tree", "semantic", "--split", "adaptive", "--epsilon", "0.25"],
            "node-bias": ["--node-bias"]}


def train(checkout: str, corpus: Path, out: Path, arch: str, extra: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve()),
           "NUMBA_CACHE_DIR": str(out.parent / "numba")}
    # (run outside any checkout: `python -m` puts the working directory first on the
    # path, so from the repository's root both runs would import its package)
    where = subprocess.run([sys.executable, "-c", "import hsw2v; print(hsw2v.__file__)"],
                           env=env, cwd=out.parent, check=True, capture_output=True, text=True)
    if not Path(where.stdout.strip()).resolve().is_relative_to(Path(checkout).resolve()):
        raise SystemExit(f"{checkout}: its runs import {where.stdout.strip()}")
    for _ in range(2):
        subprocess.run([sys.executable, "-m", "hsw2v", "train", str(corpus), "--arch", arch,
                        "--threads", "1", "--seed", "7", "--dim", "16", "--epochs", "2",
                        "--min-count", "3", "--quiet", "-o", str(out.with_suffix(".txt")),
                        "--save-model", str(out.with_suffix(".npz")), *extra],
                       env=env, cwd=out.parent, check=True)


def differing(a: Path, b: Path) -> list[str]:
    """What differs between the two runs' files: the model's arrays, the vectors file."""
    with np.load(a.with_suffix(".npz")) as x, np.load(b.with_suffix(".npz")) as y:
        parts = [k for k in ("vectors", "node_vectors", "children") if not np.array_equal(x[k], y[k])]
    if a.with_suffix(".txt").read_bytes() != b.with_suffix(".txt").read_bytes():
        parts.append("vectors file")
    return parts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--words", type=int, default=200_000, help="words of data/enwiki-1m.txt.gz")
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="hsw2v-same-bits-") as d:
        work = Path(d)
        with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
            words = f.read().split()[:a.words]
        corpus = work / "slice.txt"  # a line every 1,000 words
        corpus.write_text("\n".join(" ".join(words[i:i + 1000]) for i in range(0, len(words), 1000)))
        from hsw2v.training.kinds import model_kinds

        differ = total = 0
        for arch in model_kinds:
            for name, extra in settings().items():
                runs = []
                for k, checkout in enumerate((a.before, a.after)):
                    out = work / f"checkout{k}" / f"{arch}-{name}"
                    out.parent.mkdir(exist_ok=True)
                    train(checkout, corpus, out, arch, extra)
                    runs.append(out)
                parts = differing(*runs)
                differ += bool(parts)
                total += 1
                print(f"{arch:8} {name:9} "
                      f"{'DIFFERENT: ' + ', '.join(parts) if parts else 'same bits'}", flush=True)
    print(f"{total - differ} of {total} settings give the same bits")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
