#!/usr/bin/env python
"""Growing against retraining: enwiki-17m cut in two halves, A and B (B holds
words A lacks). Four CBOW runs with the defaults, each timed as a whole call of
``hsw2v.train``:

- ``A``: A from scratch;
- ``grown``: B with ``init_model=A, grow=True``;
- ``grown, alpha 0.0125``: the same at a quarter of CBOW's rate;
- ``continued``: B with ``init_model=A`` (the new words are skipped);
- ``scratch``: A then B as one corpus, from scratch.

Then old words' quality (Google analogies, WS353, SimLex) for each; the new words'
(their nearest neighbours; WS353 and SimLex pairs that hold one); and the grown
tree's expected code length against Huffman's over the same counts.

    python scripts/benchmarks/bench_grow.py [--seeds 1,2] [--json out.json]
"""
from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import hsw2v
from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs
from hsw2v.trees.grow import expected_code_length
from hsw2v.trees.registry import TreeInputs, build_tree

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SHOWN = 6
"""The most frequent new words whose neighbours are shown."""


def halves(tmp: Path) -> tuple[str, str, str]:
    """A, B and A+B as lines of 1,000 words."""
    with gzip.open(DATA / "enwiki-17m.txt.gz", "rb") as f:
        words = f.read().split()
    half = len(words) // 2
    paths = []
    for name, part in (("a", words[:half]), ("b", words[half:]), ("ab", words)):
        path = tmp / f"{name}.txt"
        with open(path, "wb") as f:
            f.writelines(b" ".join(part[i:i + 1000]) + b"\n" for i in range(0, len(part), 1000))
        paths.append(str(path))
    return paths[0], paths[1], paths[2]


def quality(model: hsw2v.Model) -> dict:
    v = model.keyed_vectors()
    return {"analogy": evaluate_analogies(v, str(DATA / "questions-words.txt"))["accuracy"],
            "ws353": evaluate_word_pairs(v, str(DATA / "wordsim353.tsv"))["spearman"],
            "simlex": evaluate_word_pairs(v, str(DATA / "simlex999.txt"))["spearman"]}


def new_word_pairs(model: hsw2v.Model, new: set[str], tmp: Path) -> dict:
    """Spearman on the WS353 and SimLex pairs with a new word (both words known)."""
    out = {}
    for name, file in (("ws353", "wordsim353.tsv"), ("simlex", "simlex999.txt")):
        lines = (DATA / file).read_text(encoding="utf-8").splitlines()
        keep = [ln for ln in lines if not ln.startswith("#") and len(ln.split("\t")) >= 3
                and (ln.split("\t")[0].lower() in new or ln.split("\t")[1].lower() in new)]
        path = tmp / f"new-{name}.tsv"
        path.write_text("\n".join(keep) + "\n")
        r = evaluate_word_pairs(model.keyed_vectors(), str(path)) if keep else {}
        out[name] = {"pairs": r.get("pairs", 0), "spearman": r.get("spearman")}
    return out


def run(seed: int, a: str, b: str, ab: str, tmp: Path) -> dict:
    times, models = {}, {}
    for name, call in (("A", lambda: hsw2v.train(a, seed=seed, progress=False)),
                       ("grown", lambda: hsw2v.train(b, init_model=models["A"], grow=True,
                                                     seed=seed, progress=False)),
                       ("grown, alpha 0.0125", lambda: hsw2v.train(
                           b, init_model=models["A"], grow=True, alpha=0.0125, seed=seed,
                           progress=False)),
                       ("continued", lambda: hsw2v.train(b, init_model=models["A"], seed=seed,
                                                         progress=False)),
                       ("scratch", lambda: hsw2v.train(ab, seed=seed, progress=False))):
        start = time.perf_counter()
        models[name] = call()
        times[name] = time.perf_counter() - start
        print(f"# seed {seed}: {name} {times[name]:.1f} s", file=sys.stderr)
    grown = models["grown"]
    new = set(grown.history[-1]["words"])
    huffman = build_tree("huffman", TreeInputs(grown.vocab.words, grown.vocab.counts,
                                               grown.settings))
    neighbours = {w: {k: [x for x, _ in models[k].keyed_vectors().most_similar(w, topn=5)]
                      for k in ("grown", "grown, alpha 0.0125", "scratch")}
                  for w in [w for w in grown.vocab.words if w in new][:SHOWN]}
    return {"seed": seed, "seconds": times,
            "quality": {k: quality(m) for k, m in models.items()},
            "new_words": len(new), "vocab": {k: len(m.vocab) for k, m in models.items()},
            "new_word_pairs": {k: new_word_pairs(models[k], new, tmp)
                               for k in ("grown", "grown, alpha 0.0125", "scratch")},
            "neighbours": neighbours,
            "code_length": {"grown": expected_code_length(grown.tree, grown.vocab.counts),
                            "huffman": expected_code_length(huffman, grown.vocab.counts)}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", default="1")
    p.add_argument("--json")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        a, b, ab = halves(Path(tmp))
        runs = [run(int(s), a, b, ab, Path(tmp)) for s in args.seeds.split(",")]
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    print("| run | seconds | analogies | WS353 | SimLex | words |\n|---|---|---|---|---|---|")
    for name in ("A", "grown", "grown, alpha 0.0125", "continued", "scratch"):
        med = {k: statistics.median(r["quality"][name][k] for r in runs)
               for k in ("analogy", "ws353", "simlex")}
        sec = statistics.median(r["seconds"][name] for r in runs)
        print(f"| {name} | {sec:.1f} | {100 * med['analogy']:.2f}% | {med['ws353']:.3f} | "
              f"{med['simlex']:.3f} | {runs[0]['vocab'][name]} |")
    r = runs[0]
    print(f"\nnew words: {r['new_words']}; expected code length, grown {r['code_length']['grown']:.3f}"
          f" against Huffman's over the same counts {r['code_length']['huffman']:.3f}")
    print(f"pairs with a new word: {json.dumps(r['new_word_pairs'])}")
    for w, n in r["neighbours"].items():
        print(f"{w}: " + "; ".join(f"{k} {', '.join(v)}" for k, v in n.items()))


if __name__ == "__main__":
    main()
