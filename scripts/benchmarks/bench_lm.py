#!/usr/bin/env python
"""The language model (``--arch lbl``) against interpolated Kneser-Ney n-grams:
held-out perplexity on the same tokens, and training speed.

    python scripts/benchmarks/bench_lm.py                       # both splits, every row
    python scripts/benchmarks/bench_lm.py --splits 5m --trees huffman,semantic --weights diagonal
    python scripts/benchmarks/bench_lm.py --splits 5m --speed-defaults 3   # the defaults' time, score's speed

Two splits of enwiki-17m, cut into lines of 1,000 words: ``5m``, the first 5M
words for training and the next 500k held out; ``17m``, all but the last 1M
words for training and the last 1M held out. Both count as KenLM's ``query``
does: the vocabulary is the training split's words with at least 5 occurrences,
with ``<unk>`` (every other word, in training too) and ``</s>`` (the end of
every line, predicted); every held-out token, ``</s>`` included, is predicted
from the words before it in its line, from ``<s>`` (LBL: its learned start row).
Perplexity is given with the OOVs and without them (their log-probabilities and
count left out). Both models score exactly the same tokens and OOVs (the script
checks the counts agree).

The first LBL row is ``hsw2v.train(arch="lbl")`` with nothing else but the
threads: the defaults (N = 16 preceding words, a first pass of 1 epoch on a
Huffman tree, the single-code ADAPTIVE tree learned from its predictions, then 2
epochs on it from the first pass's vectors), timed as a whole call. The other
LBL rows: ``hsw2v.train(arch="lbl")`` with the given dim, window (N), epochs and
learning rate (as the earlier tables: N = 5, 3 epochs, 0.05), 2 threads, one row per tree (random, Huffman, balanced,
semantic, ADAPTIVE(ε)) and position weights (diagonal, full); the semantic trees
are built from the Huffman LBL's own predicted vectors (``tree_from``, each
word's mean r̂ over its occurrences). Perplexity is ``hsw2v.score``. The n-gram
rows are tests/references/kneser_ney.py at orders 2, 3 and 5.

Speed: CBOW trained on the same split with the same dim, threads and epochs,
both at ``sample=0`` (the same words) and at CBOW's default; words/s counts
training only.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout

from tests.references.kneser_ney import KneserNey

import hsw2v

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SPLITS = {"5m": (5_000_000, 500_000), "17m": (None, 1_000_000)}
TREES = {"random": {"tree": "random"}, "huffman": {"tree": "huffman"},
         "balanced": {"tree": "balanced"}, "semantic": {"tree": "semantic"},
         "adaptive": {"tree": "semantic", "split": "adaptive", "epsilon": 0.0},
         "adaptive(0.25)": {"tree": "semantic", "split": "adaptive", "epsilon": 0.25}}
LINE = 1000


def write_lines(words: list[bytes], path: Path) -> None:
    with open(path, "wb") as out:
        out.writelines(b" ".join(words[i:i + LINE]) + b"\n" for i in range(0, len(words), LINE))


def id_lines(path: Path, index: dict[str, int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each line's word ids (``<unk>`` for a word outside ``index``) ending with
    ``</s>``; and, for every token, whether it is an OOV."""
    unknown, end = index["<unk>"], index["</s>"]
    lines, oov = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            lines.append(np.array([index.get(w, unknown) for w in words] + [end], dtype=np.int64))
            oov.append([w not in index for w in words] + [False])
    return lines, np.concatenate(oov)


def words_per_s(model) -> float:
    return model.vocab.total * model.settings.epochs / model.seconds["train"]


def speed_rounds(words: list[bytes], a) -> None:
    """Words/s of LBL against CBOW, alternating, 1 epoch each (see --speed-pairs)."""
    import statistics

    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.txt"
        write_lines(words[:a.speed_words or SPLITS["5m"][0]], train)
        common = {"dim": a.dim, "window": a.window, "epochs": 1, "threads": a.threads,
                  "progress": False}
        runs = {"cbow sample 0": {"arch": "cbow", "sample": 0.0}, "cbow": {"arch": "cbow"},
                "lbl diagonal": {"arch": "lbl"}}
        if a.speed_full:
            runs["lbl full"] = {"arch": "lbl", "position_weights": "full"}
        for kw in runs.values():  # (compiles what is not cached)
            hsw2v.train(str(train), **{**common, "max_vocab": 100}, **kw)
        got: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(a.speed_pairs):
            for name, kw in runs.items():
                got[name].append(words_per_s(hsw2v.train(str(train), **common, **kw)))
            print("# " + ", ".join(f"{k} {v[-1] / 1e3:.0f}k" for k, v in got.items()),
                  file=sys.stderr, flush=True)
    print(f"dim {a.dim}, N = window {a.window}, 1 epoch on "
          f"{(a.speed_words or SPLITS['5m'][0]) / 1e6:g}M words, {a.threads} threads, "
          f"{a.speed_pairs} rounds of runs in turn; medians of per-round ratios\n")
    print("| | words/s (median) | against CBOW, sample 0 | against CBOW, default sample |")
    print("|---|---|---|---|")
    for name, values in got.items():
        r0 = statistics.median(x / y for x, y in zip(values, got["cbow sample 0"]))
        r1 = statistics.median(x / y for x, y in zip(values, got["cbow"]))
        print(f"| {name} | {statistics.median(values) / 1e3:.0f}k | {r0:.2f}× | {r1:.2f}× |")


def defaults_speed(words: list[bytes], a) -> None:
    """Item 3 of the language model's issue: ``hsw2v.train(arch="lbl")`` with its
    defaults against one 3-epoch CBOW run (whole calls, the same threads), in turn,
    on a split; then ``score`` and ``score`` with each line's figures, in tokens/s."""
    import statistics

    n_train, n_held = SPLITS[a.splits.split(",")[0]]
    n_train = n_train or len(words) - n_held
    with tempfile.TemporaryDirectory() as tmp:
        train, held = Path(tmp) / "train.txt", Path(tmp) / "held.txt"
        write_lines(words[:n_train], train)
        write_lines(words[n_train:n_train + n_held], held)
        small = Path(tmp) / "small.txt"
        write_lines(words[:20_000], small)
        hsw2v.train(str(small), epochs=3, threads=a.threads, progress=False, min_count=1)
        hsw2v.score(hsw2v.train(str(small), arch="lbl", threads=a.threads, progress=False,
                                min_count=1), str(small), lines=lambda line: None)
        # (compiles what is not cached)
        ratios, cbow_s, lbl_s, score_tps, lines_tps = [], [], [], [], []
        for _ in range(a.speed_defaults):
            start = time.perf_counter()
            hsw2v.train(str(train), epochs=3, threads=a.threads, progress=False)
            cbow_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            lm = hsw2v.train(str(train), arch="lbl", threads=a.threads, progress=False)
            lbl_s.append(time.perf_counter() - start)
            ratios.append(lbl_s[-1] / cbow_s[-1])
            start = time.perf_counter()
            got = hsw2v.score(lm, str(held), threads=a.threads)
            score_tps.append(got["tokens"] / (time.perf_counter() - start))
            start = time.perf_counter()
            hsw2v.score(lm, str(held), threads=a.threads, lines=lambda line: None)
            lines_tps.append(got["tokens"] / (time.perf_counter() - start))
            print(f"# cbow 3 epochs {cbow_s[-1]:.1f} s, lbl defaults {lbl_s[-1]:.1f} s "
                  f"({ {k: round(v, 1) for k, v in lm.seconds.items()} }), perplexity "
                  f"{got['perplexity']:.1f}; score {score_tps[-1] / 1e6:.2f}M tokens/s, "
                  f"per line {lines_tps[-1] / 1e6:.2f}M", file=sys.stderr, flush=True)
    print(f"{a.splits.split(',')[0]} split, {a.threads} threads, {a.speed_defaults} rounds in "
          f"turn; medians (min-max)\n")
    print("| | median | min | max |\n|---|---|---|---|")
    for name, values, unit in (("CBOW, 3 epochs (s)", cbow_s, 1), ("LBL defaults (s)", lbl_s, 1),
                               ("LBL / CBOW, per round", ratios, 1),
                               ("score, M tokens/s", score_tps, 1e6),
                               ("score --per-line, M tokens/s", lines_tps, 1e6)):
        print(f"| {name} | {statistics.median(values) / unit:.2f} | {min(values) / unit:.2f} | "
              f"{max(values) / unit:.2f} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", default=str(DATA / "enwiki-17m.txt.gz"))
    p.add_argument("--splits", default="5m,17m")
    p.add_argument("--trees", default=",".join(TREES))
    p.add_argument("--weights", default="diagonal,full")
    p.add_argument("--full-trees", default="huffman,adaptive(0.25)",
                   help="the trees trained with full weights (slow)")
    p.add_argument("--orders", default="2,3,5")
    p.add_argument("--discount", type=float, default=None,
                   help="one Kneser-Ney discount for every order [n1 / (n1 + 2 n2) per order]")
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--window", type=int, default=5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--full-epochs", type=int, default=1, help="epochs with full weights (slow)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="the learning rate of the tree rows (the defaults row: the kind's)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-speed", action="store_true", help="skip the CBOW speed rows")
    p.add_argument("--speed-pairs", type=int, default=0, metavar="R",
                   help="only time R rounds of 1-epoch runs, CBOW (sample 0 and default) "
                        "then LBL (diagonal, Huffman), on the 5m split, and print the "
                        "medians of the per-round ratios")
    p.add_argument("--speed-words", type=int, default=0, metavar="N",
                   help="with --speed-pairs, time on the first N words [the 5m split's]")
    p.add_argument("--speed-full", action="store_true",
                   help="with --speed-pairs, also time LBL with full position weights")
    p.add_argument("--speed-defaults", type=int, default=0, metavar="R",
                   help="only time R rounds of the LBL defaults against a 3-epoch CBOW run, "
                        "then score's tokens/s, on the first of --splits")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    opener = gzip.open if a.corpus.endswith(".gz") else open
    with opener(a.corpus, "rb") as f:
        words = f.read().split()
    if a.speed_pairs:
        speed_rounds(words, a)
        return
    if a.speed_defaults:
        defaults_speed(words, a)
        return
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for split in a.splits.split(","):
            n_train, n_held = SPLITS[split]
            n_train = n_train or len(words) - n_held
            train, held = Path(tmp) / f"{split}-train.txt", Path(tmp) / f"{split}-held.txt"
            write_lines(words[:n_train], train)
            write_lines(words[n_train:n_train + n_held], held)
            rows = results[split] = {}
            common = {"arch": "lbl", "dim": a.dim, "window": a.window, "threads": a.threads,
                      "progress": False, "alpha": a.alpha}
            huffman_lm = None
            start = time.perf_counter()
            model = hsw2v.train(str(train), arch="lbl", threads=a.threads, progress=False)
            seconds = time.perf_counter() - start
            s = hsw2v.score(model, str(held))
            rows["lbl defaults"] = {"perplexity": s["perplexity"], "examples": s["tokens"],
                                    "oov": s["oov"], "seconds": seconds,
                                    "perplexity_without_oov": s["perplexity_without_oov"],
                                    "stages": model.seconds}
            print(f"# {split} lbl defaults: {json.dumps(rows['lbl defaults'])}", file=sys.stderr,
                  flush=True)
            for weights in a.weights.split(",") if a.trees else ():
                epochs = a.epochs if weights == "diagonal" else a.full_epochs
                trees = a.trees if weights == "diagonal" else a.full_trees
                for name in trees.split(","):
                    extra = dict(TREES[name])
                    if extra["tree"] == "semantic":
                        if huffman_lm is None:
                            huffman_lm = hsw2v.train(str(train), epochs=a.epochs, **common)
                        extra["tree_from"] = huffman_lm
                    model = hsw2v.train(str(train), epochs=epochs, position_weights=weights,
                                        **common, **extra)
                    if name == "huffman" and weights == "diagonal":
                        huffman_lm = model
                    s = hsw2v.score(model, str(held))
                    row = {"perplexity": s["perplexity"], "examples": s["tokens"], "oov": s["oov"],
                           "perplexity_without_oov": s["perplexity_without_oov"],
                           "words_per_s": words_per_s(model), "epochs": epochs,
                           "tree_seconds": model.seconds.get("tree", 0.0),
                           "path": model.tree.summary(model.vocab.counts)["weighted_mean_path_length"]}
                    rows[f"lbl {weights} {name}"] = row
                    print(f"# {split} lbl {weights} {name}: {json.dumps(row)}", file=sys.stderr,
                          flush=True)
            vocab = (huffman_lm or model).vocab
            index = {w: i for i, w in enumerate(vocab.words)}
            (train_ids, _), (held_ids, oov) = id_lines(train, index), id_lines(held, index)
            tokens = sum(len(x) for x in held_ids)
            for order in map(int, a.orders.split(",")):
                start = time.perf_counter()
                kn = KneserNey(train_ids, len(vocab), order, a.discount)
                logp = kn.log_probs(held_ids)
                row = {"perplexity": math.exp(-logp.mean()), "examples": len(logp),
                       "oov": int(oov.sum()),
                       "perplexity_without_oov": math.exp(-logp[~oov].mean()),
                       "seconds": time.perf_counter() - start}
                rows[f"Kneser-Ney {order}-gram" + (f" (D = {a.discount})" if a.discount else "")] = row
                print(f"# {split} KN {order}: {json.dumps(row)}", file=sys.stderr, flush=True)
                del kn
            for name, row in rows.items():
                assert (row["examples"], row["oov"]) == (tokens, oov.sum()), (name, row, tokens)
            if not a.no_speed:
                for sample, label in ((0.0, "sample 0"), (None, "default sample")):
                    cbow = hsw2v.train(str(train), arch="cbow", dim=a.dim, window=a.window,
                                       epochs=a.epochs, threads=a.threads, progress=False,
                                       **({"sample": sample} if sample is not None else {}))
                    rows[f"cbow speed ({label})"] = {"words_per_s": words_per_s(cbow)}
            results[split]["tokens"] = {"held_out": tokens, "oov": int(oov.sum()),
                                        "vocab": len(vocab), "train": n_train}
    print(f"dim {a.dim}, N = window {a.window}, {a.epochs} epochs (full weights: "
          f"{a.full_epochs}), {a.threads} threads, lines of {LINE} words\n")
    for split, rows in results.items():
        t = rows.pop("tokens")
        print(f"### {split}: {t['train']:,} training words, {t['held_out']:,} held-out tokens "
              f"scored (</s> included; {t['oov']:,} OOVs), V = {t['vocab']:,} (<unk> and </s> "
              f"included)\n")
        print("| model | perplexity | without OOVs | train words/s |")
        print("|---|---|---|---|")
        for name, r in rows.items():
            ppl = f"{r['perplexity']:.1f}" if "perplexity" in r else ""
            no_oov = f"{r['perplexity_without_oov']:.1f}" if "perplexity" in r else ""
            wps = f"{r['words_per_s'] / 1e3:.0f}k" if "words_per_s" in r else ""
            print(f"| {name} | {ppl} | {no_oov} | {wps} |")
        lbl = [r for n, r in rows.items() if n.startswith("lbl diagonal huffman")]
        speed = [r for n, r in rows.items() if n.startswith("cbow speed")]
        if lbl and speed:
            print("\nLBL (diagonal, Huffman) / CBOW words/s: "
                  + ", ".join(f"{lbl[0]['words_per_s'] / s['words_per_s']:.2f}× ({n})"
                              for n, s in zip(("sample 0", "default sample"), speed)))
        print()
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
