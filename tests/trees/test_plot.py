"""`hsw2v tree MODEL --plot FILE`: the labels against a brute-force walk of the
tree, and the file written by a real process."""
from __future__ import annotations

import os
import struct

import pytest

import hsw2v
from hsw2v.trees.plot import top_words

from tests.helpers import REPO, one_line_error, run_hsw2v

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def models():
    corpus = str(REPO / "data" / "enwiki-1m.txt.gz")
    out = {kind: hsw2v.train(corpus, max_vocab=400, dim=8, epochs=1, progress=False, tree=kind)
           for kind in ("huffman", "balanced", "classes")}
    out["codes"] = hsw2v.train(corpus, max_vocab=400, dim=8, epochs=1, progress=False,
                               tree="semantic", split="adaptive", epsilon=0.3)
    assert out["codes"].tree.codes_per_word.max() > 1
    return out


def brute_force_labels(model, levels: int, words: int) -> dict[int, list[str]]:
    """For every inner node reached within ``levels`` steps of the root, the most
    frequent words with a leaf below it (found by walking the children table)."""
    tree, n = model.tree, len(model.tree.children) + 1
    word_of = [*range(len(model.words)), *tree.extra_leaves.tolist()]

    def below(node):
        found, stack = set(), [node]
        while stack:
            for child in tree.children[stack.pop()].tolist():
                if child < n:
                    found.add(word_of[child])
                else:
                    stack.append(child - n)
        return found

    labels, frontier = {}, [(tree.root, 0)]
    while frontier:
        node, depth = frontier.pop()
        labels[node] = sorted(below(node), key=lambda w: -model.vocab.counts[w])[:words]
        for child in tree.children[node].tolist():
            if child >= n and depth < levels:
                frontier.append((child - n, depth + 1))
    return {node: [model.words[w] for w in ws] for node, ws in labels.items()}


@pytest.mark.parametrize("levels", [1, 3, 5])
def test_labels_are_each_nodes_most_frequent_words(models, levels):
    for model in models.values():
        got = top_words(model.tree, model.words, levels, 4)
        want = brute_force_labels(model, levels, 4)
        assert got.keys() == want.keys()
        for node, words in want.items():  # (ties in count may come in either order)
            assert [model.vocab.counts[model.vocab.index[w]] for w in got[node]] == \
                [model.vocab.counts[model.vocab.index[w]] for w in words]
            assert len(set(got[node])) == len(got[node])


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_plot_from_the_command_line(tmp_path, models):
    """A real process draws a PNG (and an SVG with the labels in it), replacing an
    old file and leaving no temporary; a bad format, --levels out of range and
    missing matplotlib are one line each."""
    models["huffman"].save(str(tmp_path / "m.npz"))
    (tmp_path / "t.png").write_bytes(b"old")
    result = run_hsw2v(tmp_path, "tree", "m.npz", "--plot", "t.png", "--levels", "3")
    assert result.returncode == 0, result.stderr
    assert "tree: huffman" in result.stdout
    assert "saved the top 3 levels of the tree to t.png" in result.stderr
    width, height = png_size((tmp_path / "t.png").read_bytes())
    assert width > 300 and height > 200
    result = run_hsw2v(tmp_path, "tree", "m.npz", "--plot", "t.svg", "--levels", "2",
                       "--words", "2")
    assert result.returncode == 0, result.stderr
    svg = (tmp_path / "t.svg").read_text()
    root = top_words(models["huffman"].tree, models["huffman"].words, 2, 2)[models["huffman"].tree.root]
    assert ", ".join(root) in svg
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert "--plot writes .png" in one_line_error(run_hsw2v(tmp_path, "tree", "m.npz", "--plot",
                                                            "t.txt"))
    assert "--levels must be between 1 and 8" in one_line_error(
        run_hsw2v(tmp_path, "tree", "m.npz", "--plot", "u.png", "--levels", "9"))
    fake = tmp_path / "no-mpl" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    line = one_line_error(run_hsw2v(tmp_path, "tree", "m.npz", "--plot", "u.png",
                                    env={"PYTHONPATH": str(fake.parent)}))
    assert "pip install matplotlib" in line
    assert not (tmp_path / "u.png").exists()


def test_a_tree_picture_takes_a_tree_and_names_from_vectors(tmp_path, models):
    """plot_tree draws a Tree alone (words as #id) or named by vectors, and a model
    stands for its tree and words: the labels are top_words' in each case."""
    from hsw2v.trees.plot import plot_tree

    model = models["huffman"]
    named = plot_tree(model.tree, str(tmp_path / "a.png"), 2, 2, vectors=model)
    assert named == top_words(model.tree, model.words, 2, 2)
    assert plot_tree(model, str(tmp_path / "b.png"), 2, 2) == named
    bare = plot_tree(model.tree, str(tmp_path / "c.png"), 2, 2)
    assert bare == {k: [f"#{model.vocab.index[w]}" for w in v] for k, v in named.items()}
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("a.png", "b.png", "c.png"))
