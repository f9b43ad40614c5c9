"""Words with several codes (ADAPTIVE(ε) trees): the tree, the training step,
the log-probabilities, and the model file, each against an independent numpy
reference (the exact search: tests/softmax/test_search.py)."""
import io
import json
import subprocess
import sys
import zipfile
from fractions import Fraction

import numpy as np
import pytest

import hsw2v
from hsw2v.errors import HSW2VError
from hsw2v.softmax.step import target_step
from hsw2v.model.reading import load_model
from hsw2v.training.kinds import model_kinds
from hsw2v.trees.tree import from_overlapping_splits

from tests.helpers import REPO
from tests.helpers import codes_model as trained_codes_model
from tests.references.softmax import reference_log_probs

CORPUS = str(REPO / "data" / "enwiki-1m.txt.gz")


def leaf_paths(children, n_leaves):
    """{leaf: [(inner node, branch), …] root first}, by walking the children table."""
    inner = set(range(n_leaves, 2 * n_leaves - 1))
    root = (inner - set(np.asarray(children).ravel().tolist())).pop()
    out, stack = {}, [(root, [])]
    while stack:
        node, path = stack.pop()
        for branch, child in enumerate(children[node - n_leaves]):
            step = [*path, (node - n_leaves, branch)]
            if child < n_leaves:
                out[int(child)] = step
            else:
                stack.append((int(child), step))
    return out


def random_overlapping_split(rng):
    """Halves at random, copying each spare word to both sides with probability ½."""
    def split(words, spare):
        n = len(words)
        order = rng.permutation(n)
        cut = int(rng.integers(1, n))
        left, right = order[:cut], order[cut:]
        copy = np.array([i for i in range(n) if spare[i] and rng.random() < 0.5], dtype=np.int64)
        left = np.union1d(left, copy)
        right = np.union1d(right, copy)
        if len(left) == n or len(right) == n:  # a side must shrink
            left, right = order[:cut], order[cut:]
        go_left, go_right = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        go_left[left], go_right[right] = True, True
        return go_left, go_right
    return split


@pytest.mark.parametrize("max_codes", [1, 2, 3])
def test_overlapping_splits_build_a_full_tree_of_codes(max_codes):
    """Every word has its first code at leaf w and at most max_codes codes; the
    leaves' codes are a complete prefix code (Σ 2^-depth = 1); a word's codes
    differ; the kernels' paths are the walk's paths."""
    rng = np.random.default_rng(max_codes)
    v = 40
    tree = from_overlapping_splits(v, random_overlapping_split(rng), max_codes, "test")
    paths = leaf_paths(tree.children, tree.n_leaves)
    assert sorted(paths) == list(range(tree.n_leaves))
    assert sum(Fraction(1, 2 ** len(p)) for p in paths.values()) == 1
    words = np.concatenate([np.arange(v), tree.extra_leaves])
    counts = np.bincount(words, minlength=v)
    assert counts.max() <= max_codes and counts.min() >= 1
    assert (counts.max() > 1) == (max_codes > 1)
    for w in range(v):
        walked = [tuple(paths[k]) for k in np.flatnonzero(words == w)]
        assert len(set(walked)) == len(walked)
        assert [tuple(zip(n.tolist(), c.tolist())) for n, c in tree.paths(w)] == walked
    assert np.array_equal(tree.codes_per_word, counts)


def log_prob(h, word, children, n_leaves, extra, syn1):
    """log Σ_codes Π σ(±(α + h·u)) in float64, from the children table."""
    words = np.concatenate([np.arange(n_leaves - len(extra)), extra])
    dim = len(h)
    total = -np.inf
    for leaf, path in leaf_paths(children, n_leaves).items():
        if words[leaf] != word:
            continue
        lp = 0.0
        for node, branch in path:
            u = syn1[node].astype(np.float64)
            x = u[:dim] @ h + (u[dim] if len(u) > dim else 0.0)
            lp -= np.logaddexp(0.0, -x if branch == 0 else x)
        total = np.logaddexp(total, lp)
    return total


@pytest.mark.parametrize("bias", [False, True])
def test_step_with_several_codes_is_the_exact_gradient(bias):
    """One step for a word with several codes moves u, α and h by alpha × the
    gradient of log Σ_codes Π σ: against a numpy reference that weights each
    code's path gradient by its posterior share, and against central differences."""
    rng = np.random.default_rng(5)
    v, dim = 12, 8
    tree = from_overlapping_splits(v, random_overlapping_split(rng), 3, "test")
    many = np.flatnonzero(tree.codes_per_word > 1)
    assert len(many)
    syn1 = rng.normal(0, 0.7, size=(tree.n_leaves - 1, dim + bias)).astype(np.float32)
    h = rng.normal(0, 0.7, size=dim).astype(np.float32)
    alpha, eps = np.float32(0.1), 1e-4
    words = np.concatenate([np.arange(v), tree.extra_leaves])
    paths = leaf_paths(tree.children, tree.n_leaves)
    for word in many:
        u, grad_h = syn1.copy(), np.zeros(dim, np.float32)
        scratch = np.empty(int((tree.nodes_per_word + tree.codes_per_word).max()), np.float32)
        loss = target_step(h, word, alpha, u, np.full(len(u), -1, np.int32),
                           np.empty((0, dim + bias), np.float32), tree.flat, grad_h, scratch, dim)
        ref = log_prob(h.astype(np.float64), word, tree.children, tree.n_leaves,
                       tree.extra_leaves, syn1)
        assert loss == pytest.approx(-ref, rel=1e-5)
        expect_u, expect_h = syn1.astype(np.float64), np.zeros(dim)
        leaves = np.flatnonzero(words == word)
        code_lp = []
        for leaf in leaves:
            nodes = [n for n, _ in paths[leaf]]
            branch = np.array([b for _, b in paths[leaf]])
            x = syn1[nodes, :dim].astype(np.float64) @ h + (syn1[nodes, dim] if bias else 0.0)
            code_lp.append(-np.logaddexp(0.0, -(1 - 2 * branch) * x).sum())
        share = np.exp(np.array(code_lp) - ref)
        assert share.sum() == pytest.approx(1.0) and share.min() > 1e-4
        for leaf, r in zip(leaves, share):
            nodes = [n for n, _ in paths[leaf]]
            branch = np.array([b for _, b in paths[leaf]])
            x = syn1[nodes, :dim].astype(np.float64) @ h + (syn1[nodes, dim] if bias else 0.0)
            g = alpha * r * (1 - branch - 1 / (1 + np.exp(-x)))
            expect_h += (g[:, None] * syn1[nodes, :dim]).sum(axis=0)
            np.add.at(expect_u, (nodes, slice(0, dim)), g[:, None] * h[None, :])
            if bias:
                np.add.at(expect_u, (nodes, dim), g)
        np.testing.assert_allclose(u, expect_u, rtol=1e-4, atol=2e-6)
        np.testing.assert_allclose(grad_h, expect_h, rtol=1e-4, atol=2e-6)
        for node in {n for leaf in leaves for n, _ in paths[leaf]}:
            for d in (0, dim - 1, *([dim] if bias else [])):
                plus, minus = syn1.astype(np.float64), syn1.astype(np.float64)
                plus[node, d] += eps
                minus[node, d] -= eps
                numeric = (log_prob(h, word, tree.children, tree.n_leaves, tree.extra_leaves, plus)
                           - log_prob(h, word, tree.children, tree.n_leaves, tree.extra_leaves,
                                      minus)) / (2 * eps)
                assert (u[node, d] - syn1[node, d]) / alpha == pytest.approx(numeric, abs=3e-4)
        for d in range(dim):
            hp, hm = h.astype(np.float64), h.astype(np.float64)
            hp[d] += eps
            hm[d] -= eps
            numeric = (log_prob(hp, word, tree.children, tree.n_leaves, tree.extra_leaves, syn1)
                       - log_prob(hm, word, tree.children, tree.n_leaves, tree.extra_leaves,
                                  syn1)) / (2 * eps)
            assert grad_h[d] / alpha == pytest.approx(numeric, abs=3e-4)


@pytest.fixture(scope="module", params=sorted(model_kinds))
def codes_model(request, tmp_path_factory):
    m = trained_codes_model(request.param)
    assert m.tree.codes_per_word.max() > 1 and m.tree.codes_per_word.mean() > 1.2
    m.path = str(tmp_path_factory.mktemp("codes") / f"{request.param}.npz")
    m.save(m.path)
    return m


def test_log_prob_and_all_log_probs_sum_the_codes(codes_model):
    m = codes_model
    context = ["city", "war", "king"]
    ref = reference_log_probs(m, context)
    np.testing.assert_allclose(m.all_log_probs(context), ref, atol=2e-4)
    if m.arch == "cbow":  # a distribution over words
        assert np.exp(ref).sum() == pytest.approx(1.0, abs=1e-4)
    several = np.flatnonzero(m.tree.codes_per_word > 1)[:5]
    for w in several:
        assert m.log_prob(m.words[w], context) == pytest.approx(ref[w], abs=2e-4)


def test_model_file_carries_the_codes(codes_model, tmp_path):
    """The model file round-trips the extra leaves; a file whose extra leaves name
    no word, or disagree in length with the tree, is refused in one line."""
    m = codes_model
    back = load_model(m.path)
    assert np.array_equal(back.tree.extra_leaves, m.tree.extra_leaves)
    assert np.array_equal(back.tree.children, m.tree.children)
    assert back.predict(["city", "war"], 5) == m.predict(["city", "war"], 5)
    with zipfile.ZipFile(m.path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    assert "extra_leaves.npy" in members

    def rewrite(name, array):
        path = tmp_path / f"bad-{name}-{len(array)}.npz"
        with zipfile.ZipFile(path, "w") as z:
            for n, data in members.items():
                if n != name + ".npy":
                    z.writestr(n, data)
            with z.open(name + ".npy", "w") as f:
                np.lib.format.write_array(f, array)
        return str(path)

    meta = json.loads(np.lib.format.read_array(io.BytesIO(members["meta.npy"])).tobytes())
    assert meta["version"] == 2  # hsw2v before several codes refuses it in one line
    extra = m.tree.extra_leaves.copy()
    extra[0] = len(m.words)
    with pytest.raises(HSW2VError, match="corrupt model"):
        load_model(rewrite("extra_leaves", extra))
    with pytest.raises(HSW2VError, match="codes, more than max_codes 4"):  # bounds the scratch
        load_model(rewrite("extra_leaves", np.zeros_like(m.tree.extra_leaves)))
    with pytest.raises(HSW2VError, match="corrupt model"):
        load_model(rewrite("extra_leaves", m.tree.extra_leaves[:-1]))


def test_single_code_models_have_no_extra_leaves(tmp_path):
    m = hsw2v.train(CORPUS, max_vocab=500, dim=8, epochs=1, threads=1, progress=False)
    m.save(str(tmp_path / "m.npz"))
    with zipfile.ZipFile(tmp_path / "m.npz") as z:
        assert "extra_leaves.npy" not in z.namelist()
    assert load_model(str(tmp_path / "m.npz")).tree.n_leaves == len(m.words)


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hsw2v", *args], check=False, cwd=cwd,
                          capture_output=True,
                          text=True, timeout=600)


@pytest.mark.newest_only
def test_cli_trains_and_describes_a_tree_with_several_codes(tmp_path):
    r = run("train", CORPUS, "--max-vocab", "800", "--dim", "8", "--epochs", "1", "--tree",
            "semantic", "--split", "adaptive", "--epsilon", "0.3", "--max-codes", "3",
            "--save-model", "m.npz", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = load_model(str(tmp_path / "m.npz"))
    assert m.settings.epsilon == 0.3 and m.tree.codes_per_word.max() == 3
    r = run("tree", "m.npz", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    info = __import__("json").loads(r.stdout)
    assert info["max_codes"] == 3
    assert info["codes_per_word"] == pytest.approx(m.tree.codes_per_word.mean())
    r = run("predict", "--model", "m.npz", "city", cwd=tmp_path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 10


@pytest.mark.parametrize("args, fragment", [
    (["--tree", "semantic", "--split", "adaptive", "--epsilon", "0.5"], "--epsilon must lie"),
    (["--tree", "huffman", "--epsilon", "0.2"], "--epsilon goes with --tree semantic"),
    (["--arch", "skipgram", "--epsilon", "0.2"], "--epsilon goes with --tree semantic"),
    (["--tree", "semantic", "--split", "balanced", "--epsilon", "0.2"],
     "--epsilon goes with --tree semantic --split adaptive"),
    (["--tree", "semantic", "--split", "adaptive", "--epsilon", "0.2", "--max-codes", "0"],
     "--max-codes must lie"),
    (["--tree", "semantic", "--split", "adaptive", "--epsilon", "0.2", "--max-codes", "1"],
     "--epsilon needs --max-codes of 2 or more"),
])
def test_cli_refuses_bad_epsilon(tmp_path, args, fragment):
    r = run("train", CORPUS, "-o", "v.txt", *args, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("hsw2v: error:")
    assert fragment in lines[0] and not (tmp_path / "v.txt").exists()
