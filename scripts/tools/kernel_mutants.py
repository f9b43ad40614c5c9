#!/usr/bin/env python
"""Hand-made mutants of the numba kernels, which mutation tools cannot run at a
useful speed: each is applied to a copy of the package, the kernel and prediction
tests run against it with an empty numba cache, and the mutant must be killed
(a test fails).

    python scripts/tools/kernel_mutants.py          # about a minute per mutant
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = ["tests/training/test_block.py", "tests/softmax/test_one_code.py", "tests/training/test_walk.py",
         "tests/training/test_skipgram.py", "tests/evaluation/test_scoring.py", "tests/model/test_model.py",
         "tests/runs/test_trainer.py"]

MUTANTS = [  # (what, file, original text, mutated text)
    ("swap a code's sign", "softmax/one_code.py",
     "sign = np.float32(1.0) - np.float32(2.0) * np.float32(codes[p0 + p])  # code 0: σ(x)",
     "sign = np.float32(2.0) * np.float32(codes[p0 + p]) - np.float32(1.0)  # code 0: σ(x)"),
    ("drop the alpha decay", "training/block.py",
     "alpha = np.float32(v.alpha0 + v.slope * position)", "alpha = np.float32(v.alpha0)"),
    ("shift the window by one", "training/walk.py",
     "return max(0, i - window + b), min(m, i + window - b + 1), r",
     "return max(0, i - window + b), min(m, i + window - b), r"),
    ("skip the subsampling", "training/walk.py", "        if pk < 1.0:\n", "        if pk < 0.0:\n"),
    ("merge the hot rows wrongly", "training/block.py",
     "row[d] += hot_rows[k, d] - hot_base[k, d]", "row[d] = hot_rows[k, d]"),
    ("drop skip-gram's Gram correction", "training/skipgram.py",
     "X[c, p] += G[c2, p] * m", "X[c, p] += 0.0 * m"),
    ("CBOW context: sum for mean", "training/cbow.py", "    if mean:\n        inv", "    if False:\n        inv"),
    ("no update of the context vectors (CBOW)", "training/cbow.py", "            c[d] += grad_h[d]",
     "            c[d] += 0.0"),
    ("prediction: codes 0 and 1 swapped consistently", "softmax/search.py",
     "        left += ls\n        right += ls - x", "        right += ls\n        left += ls - x"),
    ("skip-gram's gradient drops every fourth node's step", "training/skipgram.py",
     "grad[c, d] += g0 * u0[d] + g1 * u1[d] + g2 * u2[d] + g3 * u3[d]",
     "grad[c, d] += g0 * u0[d] + g1 * u1[d] + g2 * u2[d]"),
    ("skip-gram's node update drops the second of a pair", "training/skipgram.py",
     "u[d] += g0 * H[c, d] + g1 * H[c + 1, d]\n", "u[d] += g0 * H[c, d]\n"),
    ("prefetch the entering word one position early", "training/block.py",
     "prefetch_row(syn0, sen[i + 1 + window])", "prefetch_row(syn0, sen[i + window])"),
]


def run(what: str, file: str, old: str, new: str) -> bool:
    """True if the mutant is killed."""
    with tempfile.TemporaryDirectory() as d:
        shutil.copytree(REPO / "hsw2v", Path(d) / "hsw2v", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "tests", Path(d) / "tests", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "data", Path(d) / "data")
        target = Path(d) / "hsw2v" / file
        text = target.read_text()
        assert text.count(old) == 1, f"{what}: the original text is not found once in {file}"
        target.write_text(text.replace(old, new))
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(d) / "cache"), "PYTHONPATH": d}
        result = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                                 "--rootdir", d, *TESTS], cwd=d, env=env, capture_output=True,
                                text=True, check=False)
        return result.returncode != 0


def main() -> int:
    if run("control: no change", *MUTANTS[0][1:3], MUTANTS[0][2]):
        print("the tests fail on the unchanged package: fix that first")
        return 1
    killed = 0
    for what, file, old, new in MUTANTS:
        ok = run(what, file, old, new)
        killed += ok
        print(f"{'killed  ' if ok else 'SURVIVED'} {what} ({file})", flush=True)
    print(f"{killed} of {len(MUTANTS)} kernel mutants killed")
    return 0 if killed == len(MUTANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
