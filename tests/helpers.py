"""What the tests share besides fixtures: the checkout's paths, running ``hsw2v`` in
a real process and reading its one-line errors, small corpora, and trees and kind
configs made through the registries. (Fixtures live in ``conftest.py``.)"""
from __future__ import annotations

import functools
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]


WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "  "]


def random_text(rng, n_words: int) -> str:
    """Words of several lengths and scripts, each followed by a whitespace character
    of Python's ``str.split`` (newlines among them)."""
    vocab = ["a", "bb", "ccc", "dé", "éé", "日本", "x" * 30]
    parts = []
    for _ in range(n_words):
        parts.append(vocab[rng.integers(len(vocab))])
        parts.append(WHITESPACE[rng.integers(len(WHITESPACE))])
    return "".join(parts)


def bundled_slice(path, words: int) -> str:
    """Write the bundled corpus's first ``words`` words to ``path``, a line every
    1,000 words; returns the path."""
    import gzip

    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rt") as f:
        text = f.read(8 * words).split()[:words]
    Path(path).write_text("\n".join(" ".join(text[i:i + 1000]) for i in range(0, len(text), 1000)))
    return str(path)


def make_model(arch="cbow", cbow_mean=True, v=20, dim=6, seed=0, tree="huffman"):
    """A model over words w0..w{v-1} with random vectors over a Huffman (or balanced)
    tree, built directly (no training); counts descend to 1."""
    from hsw2v.counting.vocab import Vocab
    from hsw2v.model.model import Model
    from hsw2v.settings import TrainSettings
    from hsw2v.trees.tree import balanced, huffman

    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(v)]
    counts = np.arange(v, 0, -1, dtype=np.int64) * 3 - 2  # 3v-2, …, 4, 1
    settings = TrainSettings(arch=arch, cbow_mean=cbow_mean, dim=dim, min_count=1).resolved()
    return Model(Vocab(words, counts), huffman(counts) if tree == "huffman" else balanced(v),
                 rng.normal(size=(v, dim)).astype(np.float32),
                 rng.normal(size=(v - 1, dim)).astype(np.float32),
                 settings, [2.5, 1.25], {"tree": 0.5, "train": 3.0})


@functools.cache
def codes_model(arch: str, node_bias: bool | None = None):
    """An ADAPTIVE(0.3) model, where words have several codes, on the bundled
    corpus (2000 words, dim 16, 1 epoch, 1 thread): trained once per session and
    shared, so tests must not change it."""
    import hsw2v

    return hsw2v.train(str(REPO / "data" / "enwiki-1m.txt.gz"), arch=arch, max_vocab=2000,
                       dim=16, epochs=1, threads=1, progress=False, tree="semantic",
                       split="adaptive", epsilon=0.3, node_bias=node_bias)


def planted_corpus(groups: int = 4, size: int = 8, sentences: int = 1500, seed: int = 0) -> tuple[str, list[list[str]]]:
    """Text whose sentences each draw words from one group; returns (text, groups)."""
    rng = random.Random(seed)
    names = [[f"g{g}w{i}" for i in range(size)] for g in range(groups)]
    lines = []
    for _ in range(sentences):
        group = rng.choice(names)
        lines.append(" ".join(rng.choice(group) for _ in range(12)))
    return "\n".join(lines) + "\n", names


def hsw2v_command() -> list[str]:
    """The installed ``hsw2v`` script beside this Python, else ``python -m hsw2v``."""
    script = Path(sys.executable).parent / "hsw2v"
    return [str(script)] if script.exists() else [sys.executable, "-m", "hsw2v"]


def run_hsw2v(cwd, *args: str, input: bytes | str | None = None, env: dict | None = None,
              **popen) -> subprocess.CompletedProcess:
    """``hsw2v ARGS`` in a real process in ``cwd``; output as text."""
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full_env.update(env or {})
    if isinstance(input, str):
        input = input.encode()
    result = subprocess.run([*hsw2v_command(), *args], cwd=cwd, capture_output=True, input=input,
                            timeout=600, env=full_env, check=False, **popen)
    result.stdout = result.stdout.decode("utf-8", "replace")
    result.stderr = result.stderr.decode("utf-8", "replace")
    return result


def one_line_error(result: subprocess.CompletedProcess) -> str:
    """The process failed with exactly one line on stderr, ``hsw2v: error: …``, after
    any warnings and progress bars; returns it."""
    assert result.returncode != 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    lines = [ln for ln in result.stderr.replace("\r", "\n").splitlines()  # (warnings and
             if ln.strip() and not (ln.startswith("hsw2v: ")  # notes, such as "compiling",
                                    and not ln.startswith("hsw2v: error: "))  # and bars go)
             and not ln.startswith(("vocab", "train", "tree pass"))]
    assert len(lines) == 1 and lines[0].startswith("hsw2v: error: "), result.stderr
    return lines[0]


def model_bomb(path, v: int, d: int, filler: int = 1000) -> str:
    """A model file whose ``.npy`` headers declare a (v, d) model over members of
    ``filler`` zero bytes each (deflated to almost nothing)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, dtype, shape in [("meta", "u1", (2,)), ("words", "u1", (v,)),
                                   ("word_offsets", "<i8", (v + 1,)), ("counts", "<i8", (v,)),
                                   ("children", "<i4", (v - 1, 2)), ("vectors", "<f4", (v, d)),
                                   ("node_vectors", "<f4", (v - 1, d))]:
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                np.lib.format.write_array_header_1_0(
                    f, {"descr": dtype, "fortran_order": False, "shape": shape})
                f.write(b"\0" * filler)
    return str(path)


def count_tree(kind: str, counts, seed: int = 1):
    """A tree of ``kind`` from word counts alone, through the builders' registry."""
    from hsw2v.settings import TrainSettings
    from hsw2v.trees.registry import TreeInputs, build_tree

    return build_tree(kind, TreeInputs([], counts, TrainSettings(seed=seed)))


def count_tree_kinds() -> list[str]:
    """The registry's tree kinds that need nothing but counts."""
    from hsw2v.trees.registry import tree_builders

    return [k for k, b in tree_builders.items() if b.from_counts]


def kind_config(arch: str, window: int, cbow_mean: bool = True, sync_every: int = 1 << 30):
    """The config a model kind's kernels read, through the kinds' registry."""
    from hsw2v.settings import TrainSettings
    from hsw2v.training.kinds import model_kind

    s = TrainSettings(arch=arch, window=window, cbow_mean=cbow_mean)
    return model_kind(arch).config_of(s)._replace(sync_every=sync_every)


def killed_at_first_checkpoint(cwd, *args: str) -> str:
    """Start ``hsw2v train ARGS`` checkpointing after every block into cwd/ck.npz and
    SIGKILL it as soon as the first checkpoint exists; return the checkpoint's path."""
    import signal
    import time

    ck = Path(cwd) / "ck.npz"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([*hsw2v_command(), "train", *args, "--checkpoint", str(ck),
                             "--checkpoint-every", "0"], cwd=cwd, env=env,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not ck.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    return str(ck)
