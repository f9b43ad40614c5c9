"""The log-bilinear language model (``--arch lbl``): its step against central
differences, prediction and scoring against numpy references read from the model
file alone, a toy language it must learn, and its errors in real processes."""
from __future__ import annotations

import gzip
import json
import subprocess
import zipfile

import numpy as np
import pytest
from numba import njit

import hsw2v
from hsw2v.errors import HSW2VError
from hsw2v.settings import TrainSettings
from hsw2v.training.block import centre_of
from hsw2v.training.kinds import model_kind
from hsw2v.trees.registry import tree_builders
from hsw2v.trees.tree import huffman

from tests.helpers import REPO, hsw2v_command, one_line_error, run_hsw2v

CORPUS = str(REPO / "data" / "enwiki-1m.txt.gz")


def neg_log_prob(h, word, tree, syn1):
    """−log P(word | h) along its path, with node biases in syn1's last column (float64)."""
    nodes, codes = tree.path(word)
    u = syn1[nodes].astype(np.float64)
    x = u[:, :len(h)] @ h + u[:, len(h)]
    sign = 1.0 - 2.0 * codes
    return float(np.sum(np.logaddexp(0.0, -sign * x)))


def reference_h(syn0, positions, start, ctx, full):
    """r̂ in float64: ctx oldest first, −1 for the start row, the last word nearest."""
    n, dim = len(ctx), syn0.shape[1]
    h = np.zeros(dim)
    for p in range(n):
        w = ctx[n - 1 - p]
        r = (syn0[w] if w >= 0 else start[0]).astype(np.float64)
        h += (positions[p * dim:(p + 1) * dim].astype(np.float64) @ r if full
              else positions[p].astype(np.float64) * r)
    return h


_centre = centre_of(model_kind("lbl"), bias=True)  # (an LBL always has node biases)


@njit
def _one_step(t, target, ctx, n_ctx, alpha, dim):
    return _centre(t, target, ctx, n_ctx, alpha, dim)


def one_step(full, seed=0, context=(-1, 2, 4), alpha=1e-3, private=0):
    """A random LBL over 7 words, and its parameters before and after one step of
    predicting word 5 from ``context`` (N = 3; −1: the start row); with ``private``,
    the step trains words ``0..private-1`` in a thread's own copies of their rows,
    left unmerged (the rows after the step are those copies)."""
    from hsw2v.training.block import BlockTraining
    from hsw2v.training.lbl import Config

    rng = np.random.default_rng(seed)
    V, D, N = 7, 4, 3
    tree = huffman(np.array([40, 30, 20, 10, 8, 5, 2]))
    syn0 = rng.normal(0, 0.5, (V, D)).astype(np.float32)
    syn1 = rng.normal(0, 0.5, (V - 1, D + 1)).astype(np.float32)
    positions = (rng.normal(0, 0.5, (N * D, D)) if full else rng.normal(1, 0.3, (N, D))
                 ).astype(np.float32)
    start = rng.normal(0, 0.5, (1, D)).astype(np.float32)
    ctx = np.array(context, dtype=np.int32)
    before = [x.copy() for x in (syn0, syn1, positions, start)]
    longest = int(tree.depths.max())
    words = syn0[:private].copy()
    t = BlockTraining(Config(N, 1 << 30, full), syn0, syn1, np.empty(0, np.int32),
                      np.full(V - 1, -1, np.int32), tree.training_paths,
                      np.zeros((2, 2 * N, D), np.float32), np.zeros((2, 2 * N, 2 * N), np.float32),
                      np.zeros((2, 2 * N, longest), np.float32), np.zeros((0, D + 1), np.float32),
                      np.zeros((0, D + 1), np.float32), words, words.copy(), 0.0, 0.0,
                      (positions, start), (positions, start), (positions, start))
    loss, n = _one_step(t, 5, ctx, 3, np.float32(alpha), D)
    np.testing.assert_array_equal(syn0[:private], before[0][:private])  # (the shared rows wait)
    rows = np.concatenate([words, syn0[private:]])
    return tree, ctx, before, (rows, syn1, positions, start), alpha, loss, n


CONTEXTS = [((-1, 2, 4), 1e-3), ((-1, 2, 4), 0.05), ((-1, -1, 2), 0.05), ((4, 2, 4), 0.05),
            ((3, 3, 3), 0.05)]


@pytest.mark.parametrize("private", [0, 3], ids=["shared", "private-rows"])
@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize(("context", "alpha"), CONTEXTS,
                         ids=[f"{c}-alpha{a}" for c, a in CONTEXTS])
def test_one_step_is_the_gradient_step_by_central_differences(full, context, alpha, private):
    """Each parameter moves by −α ∂(−log P)/∂θ, at a large α too: the word rows, the
    start row, the position weights (c or C), the inner-node vectors and their
    biases; also where a thread trains the most frequent words' rows in copies of
    its own, and where a row stands at several positions (the start row before a
    line's first words, a repeated word). There, diagonal weights go position by
    position (nearest first): a later position's c_p takes its step from the row as
    the earlier positions moved it, α Σ_q c_q ⊙ ∇_h ⊙ ∇_h more (q: the row's earlier
    positions); full matrices take the exact step."""
    tree, ctx, before, after, alpha, loss, n = one_step(full, context=context, alpha=alpha,
                                                        private=private)

    def L(params):
        syn0, syn1, positions, start = params
        return neg_log_prob(reference_h(syn0, positions, start, ctx, full), 5, tree, syn1)

    assert n == 1 and loss == pytest.approx(L(before), rel=1e-5)
    params = [x.astype(np.float64) for x in before]
    eps = 1e-5
    h = reference_h(params[0], params[2], params[3], ctx, full)
    grad_h = np.array([(neg_log_prob(h + eps * e, 5, tree, params[1])
                        - neg_log_prob(h - eps * e, 5, tree, params[1])) / (2 * eps)
                       for e in np.eye(len(h))])
    for k, name in enumerate(("syn0", "syn1", "positions", "start")):
        moved = (before[k].astype(np.float64) - after[k].astype(np.float64)) / alpha
        numeric = np.zeros_like(params[k])
        for idx in np.ndindex(params[k].shape):
            up = [p.copy() for p in params]
            down = [p.copy() for p in params]
            up[k][idx] += eps
            down[k][idx] -= eps
            numeric[idx] = (L(up) - L(down)) / (2 * eps)
        if name == "positions" and not full:  # a row's later positions (see above)
            word = [ctx[len(ctx) - 1 - p] for p in range(len(ctx))]  # at position p + 1
            for p in range(len(ctx)):
                for q in range(p):
                    if word[q] == word[p]:
                        numeric[p] -= alpha * params[2][q] * grad_h * grad_h
        np.testing.assert_allclose(moved, numeric, atol=2e-3, rtol=1e-3, err_msg=name)
        if name != "start" or -1 in context:
            assert np.abs(numeric).max() > 1e-3, name  # (the check is not vacuous)
    nodes, _ = tree.path(5)
    assert set(np.flatnonzero(np.any(before[1] != after[1], axis=1))) == set(nodes.tolist())
    assert set(np.flatnonzero(np.any(before[0] != after[0], axis=1))) == {w for w in context if w >= 0}


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """An LBL (N = 3, dim 16, a Huffman tree: one code a word, as the references
    here read it) on the bundled slice, saved to a file."""
    m = hsw2v.train(CORPUS, arch="lbl", window=3, dim=16, epochs=1, max_vocab=3000, threads=1,
                    tree="huffman", progress=False)
    m.path = str(tmp_path_factory.mktemp("lbl") / "lm.npz")
    m.save(m.path)
    return m


def file_model(path):
    """The model file's arrays and settings, read with numpy alone."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    blob, offsets = arrays["words"].tobytes(), arrays["word_offsets"]
    words = [blob[offsets[i]:offsets[i + 1]].decode() for i in range(len(offsets) - 1)]
    return arrays, meta["settings"], words


def file_log_probs(arrays, settings, h):
    """log P(w | h) of every word by a walk over the children table from the root."""
    children = arrays["children"]
    node = arrays["node_vectors"].astype(np.float64)
    n = len(children) + 1
    root = (set(range(n, 2 * n - 1)) - set(children.ravel().tolist())).pop() - n
    out = np.empty(n)
    stack = [(root, 0.0)]
    while stack:
        a, lp = stack.pop()
        x = h @ node[a, :len(h)] + node[a, len(h)]
        for child, sign in zip(children[a], (1.0, -1.0)):
            value = lp - np.logaddexp(0.0, -sign * x)
            if child < n:
                out[child] = value
            else:
                stack.append((child - n, value))
    return out


def file_h(arrays, settings, ids):
    """r̂ from the file's arrays for the preceding word ids (oldest first)."""
    n = settings["window"]
    ctx = [-1] * max(0, n - len(ids)) + list(ids[-n:]) if n else []
    return reference_h(arrays["vectors"], arrays["weights_positions"], arrays["weights_start"],
                       ctx, settings["position_weights"] == "full")


def test_predict_is_the_exact_top_of_the_file_models_distribution(lm):
    arrays, settings, words = file_model(lm.path)
    index = {w: i for i, w in enumerate(words)}
    for context in (["the", "united"], ["in", "the", "city", "of"], ["of"],
                    ["a", "b", "one", "two", "three", "four", "five"]):
        ids = [index[w] for w in context if w in index]
        logp = file_log_probs(arrays, settings, file_h(arrays, settings, ids))
        assert np.exp(logp).sum() == pytest.approx(1.0, abs=1e-6)
        got = lm.predict(context, 8)
        want = np.argsort(-logp, kind="stable")[:8]
        assert [w for w, _ in got] == [words[i] for i in want]
        np.testing.assert_allclose([p for _, p in got], np.exp(logp[want]), rtol=1e-4)
    # more than N words: the last N; none at all: the start of a line
    assert lm.predict(["a", "war", "the", "united", "states"], 5) == lm.predict(["the", "united", "states"], 5)
    first = file_log_probs(arrays, settings, file_h(arrays, settings, []))
    assert [w for w, _ in lm.predict([], 3)] == [words[i] for i in np.argsort(-first)[:3]]


def test_score_is_the_per_token_perplexity_of_the_file_model(lm, tmp_path):
    """KenLM's conventions, from the file's arrays: an unknown word is <unk> (target
    and context), every line ends with a predicted </s>, an empty line too; the
    perplexity with and without the OOVs, the totals and each line's log10 P."""
    arrays, settings, words = file_model(lm.path)
    index = {w: i for i, w in enumerate(words)}
    assert "<unk>" in index and "</s>" in index
    text = ["the city of london is the capital qqzzx of england",
            "qqzzx", "in one nine nine zero the war ended", "", "he said"]
    (tmp_path / "held.txt").write_text("\n".join(text))  # (the last line without its newline)
    total, n, oov, oov_nats, per_line = 0.0, 0, 0, 0.0, []
    for line in text:
        ids = [index.get(w, index["<unk>"]) for w in line.split()] + [index["</s>"]]
        nats = 0.0
        for i, w in enumerate(ids):  # every token, from the ones before it in its line
            nats -= file_log_probs(arrays, settings, file_h(arrays, settings, ids[:i]))[w]
            if w == index["<unk>"]:
                oov += 1
                oov_nats -= file_log_probs(arrays, settings, file_h(arrays, settings, ids[:i]))[w]
        total += nats
        n += len(ids)
        per_line.append((-nats / np.log(10), len(ids), sum(w not in index for w in line.split())))
        assert lm.log_prob(line) == pytest.approx(-nats, rel=1e-5)
    got = hsw2v.score(lm, str(tmp_path / "held.txt"))
    assert (got["tokens"], got["oov"], got["lines"]) == (n, oov, len(text)) == (26, 2, 5)
    assert got["perplexity"] == pytest.approx(np.exp(total / n), rel=1e-5)
    assert got["perplexity_without_oov"] == pytest.approx(np.exp((total - oov_nats) / (n - oov)),
                                                          rel=1e-5)
    assert got["log10_prob"] == pytest.approx(-total / np.log(10), rel=1e-5)
    r = run_hsw2v(tmp_path, "score", "held.txt", "--model", lm.path, "--per-line")
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert [(int(t), int(o)) for _, t, o in rows] == [(t, o) for _, t, o in per_line]
    np.testing.assert_allclose([float(p) for p, _, _ in rows], [p for p, _, _ in per_line],
                               rtol=1e-5, atol=2e-6)
    assert "perplexity without OOVs" in r.stderr
    r = run_hsw2v(tmp_path, "score", "held.txt", "--model", lm.path, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["tokens"] == n, r.stderr
    with pytest.raises(HSW2VError, match="predicts from its 3 preceding words"):
        hsw2v.score(lm, str(tmp_path / "held.txt"), window=5)


def test_the_vocabulary_holds_unk_and_the_line_end_with_their_counts(tmp_path):
    """Training counts every word outside the vocabulary as <unk> and every line,
    an empty one and a last one without its newline too, as </s>; both are trained
    and predicted: after the whole of a fixed line comes </s>; a model trained
    further keeps them, a new word being <unk>."""
    text = "a b c\n\nx{i} a b c\na b c y{i}\na b c"  # x{i}, y{i}: below min_count
    (tmp_path / "c.txt").write_text("\n".join(text.format(i=i) for i in range(50)))
    m = hsw2v.train(str(tmp_path / "c.txt"), arch="lbl", window=3, min_count=5, dim=16,
                    epochs=5, threads=1, progress=False)
    counts = dict(zip(m.vocab.words, m.vocab.counts.tolist()))
    assert m.vocab.markers and counts == {"a": 200, "b": 200, "c": 200, "</s>": 250, "<unk>": 100}
    assert m.predict(["a", "b", "c"], 1)[0][0] == "</s>"
    assert m.predict([], 1)[0][0] == "a"  # (the start of a line)
    r = run_hsw2v(tmp_path, "predict", "--model", save(m, tmp_path / "m.npz"), "a", "b", "c", "-n", "1")
    assert r.returncode == 0 and r.stdout.split("\t")[0] == "</s>", r.stdout + r.stderr
    (tmp_path / "new.txt").write_text("a b c z\n" * 20)
    further = hsw2v.train(str(tmp_path / "new.txt"), init_model=m, epochs=1, progress=False)
    assert further.words == m.words and further.vocab.markers
    assert not np.array_equal(further.vectors[m.vocab.unknown_id], m.vectors[m.vocab.unknown_id])


def save(model, path) -> str:
    model.save(str(path))
    return str(path)


@pytest.mark.parametrize("full", [False, True])
def test_a_fixed_word_cycle_is_learned(tmp_path, full):
    """Lines of 12 words of a repeating cycle of 8: after three of them the next is
    certain, but for the tenth such context of a line, which ends it (</s>)."""
    cycle = ["a", "b", "c", "d", "e", "f", "g", "h"]
    lines = [" ".join(cycle[(k + i) % 8] for i in range(12)) for k in range(400)]
    (tmp_path / "cycle.txt").write_text("\n".join(lines) + "\n")
    m = hsw2v.train(str(tmp_path / "cycle.txt"), arch="lbl", window=3, min_count=1, dim=16,
                    epochs=5, threads=1, progress=False,
                    position_weights="full" if full else "diagonal")
    for k in range(8):
        context = [cycle[(k + i) % 8] for i in range(3)]
        word, p = m.predict(context, 1)[0]
        assert word == cycle[(k + 3) % 8] and p > 0.85, (context, word, p)


@pytest.mark.newest_only
def test_every_tree_kind_trains_an_lbl(tmp_path, lm):
    """Every builder of the registry, semantic ones from the model's own predicted
    vectors (one-shot and --tree-from an LBL), ADAPTIVE(ε) with several codes."""
    text = REPO / "tests" / "data" / "before-subpackages" / "tiny.txt"
    common = {"arch": "lbl", "dim": 8, "epochs": 1, "min_count": 1, "threads": 1,
              "progress": False}
    english = tmp_path / "english.txt"  # (a WordNet tree must cover 5% of the tokens)
    with gzip.open(CORPUS, "rt") as f:
        english.write_text(f.read(60_000))
    for kind in tree_builders:
        m = hsw2v.train(str(english if kind == "wordnet" else text), tree=kind, **common)
        assert m.tree.kind.startswith(kind) and np.isfinite(m.epoch_loss).all(), kind
    adaptive = hsw2v.train(CORPUS, tree_from=lm, tree="semantic", split="adaptive", epsilon=0.3,
                           **{**common, "window": 3, "min_count": 5})
    assert adaptive.tree.max_codes > 1 and adaptive.words == lm.words
    probs = np.exp(adaptive.all_log_probs(["the", "city"]))
    assert probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_the_model_file_keeps_the_matrices_and_refuses_damaged_ones(lm, tmp_path):
    back = hsw2v.load_model(lm.path)
    assert list(back.extra) == ["positions", "start"]
    assert back.extra["positions"].shape == (3, 16) and back.extra["start"].shape == (1, 16)
    assert all(np.array_equal(back.extra[k], lm.extra[k]) for k in lm.extra)
    assert back.predict(["the", "united"], 5) == lm.predict(["the", "united"], 5)
    with zipfile.ZipFile(lm.path) as z:
        members = {n: z.read(n) for n in z.namelist()}

    def damaged(name, array):
        import io
        buf = io.BytesIO()
        np.lib.format.write_array(buf, array)
        path = tmp_path / f"bad-{len(list(tmp_path.iterdir()))}.npz"
        with zipfile.ZipFile(path, "w") as z:
            for n, data in members.items():
                z.writestr(n, buf.getvalue() if n == name else data)
        return str(path)

    with pytest.raises(HSW2VError, match=r"weights_positions has shape \(2, 16\), not \(3, 16\)"):
        hsw2v.load_model(damaged("weights_positions.npy", np.zeros((2, 16), np.float32)))
    nan = lm.extra["positions"].copy()
    nan[1, 2] = np.nan
    with pytest.raises(HSW2VError, match="weights_positions holds NaN"):
        hsw2v.load_model(damaged("weights_positions.npy", nan))
    with pytest.raises(HSW2VError, match=r"weights_start has shape \(1, 15\)"):
        hsw2v.load_model(damaged("weights_start.npy", np.zeros((1, 15), np.float32)))


def test_the_cli_trains_predicts_and_refuses_bad_input(tmp_path):
    cycle = ["a", "b", "c", "d", "e", "f", "g", "h"]
    (tmp_path / "c.txt").write_text("\n".join(" ".join(cycle) for _ in range(300)) + "\n")
    r = run_hsw2v(tmp_path, "train", "c.txt", "--arch", "lbl", "--window", "2", "--min-count",
                  "1", "--dim", "8", "--epochs", "3", "--threads", "1", "--save-model", "m.npz",
                  "-o", "v.txt")
    assert r.returncode == 0, r.stderr
    assert "mean -log P per epoch" in r.stderr
    r = run_hsw2v(tmp_path, "predict", "--model", "m.npz", "a", "b", "c", "--json", "-n", "2")
    assert r.returncode == 0 and json.loads(r.stdout)[0]["word"] == "d", r.stdout + r.stderr
    (tmp_path / "keep.txt").write_text("kept\n")
    for args, fragment in [
        (("train", "c.txt", "--arch", "lbl", "--window", "0", "-o", "keep.txt"), "--window"),
        (("train", "c.txt", "--arch", "lbl", "--no-node-bias", "-o", "keep.txt"),
         "always trains node biases"),
        (("train", "c.txt", "--arch", "lbl", "--position-weights", "full", "--dim", "10000",
          "--window", "1000", "-o", "keep.txt"), "372.5 GiB of position matrices"),
        (("train", "c.txt", "--position-weights", "full", "-o", "keep.txt"),
         "--position-weights goes with --arch lbl"),
        (("train", "c.txt", "--arch", "lbl", "--init-model", "v.txt", "-o", "keep.txt"),
         "v.txt"),
        (("train", "c.txt", "--arch", "lbl", "--tree", "semantic", "--tree-from", "v.txt",
          "-o", "keep.txt"), "v.txt"),
        (("predict", "--model", "v.txt", "a"), "v.txt"),
        (("train", "c.txt", "--init-model", "m.npz", "--window", "3", "-o", "keep.txt"),
         "keeps the model's --window (2)"),
    ]:
        line = one_line_error(run_hsw2v(tmp_path, *args))
        assert fragment in line, (args, line)
    assert (tmp_path / "keep.txt").read_text() == "kept\n"


def test_lbl_trains_on_dask(tmp_path):
    m = hsw2v.train(CORPUS, arch="lbl", dim=8, epochs=1, max_vocab=2000, engine="dask",
                    workers=1, threads=1, progress=False)
    start = TrainSettings(arch="lbl", dim=8, threads=1).resolved()
    assert m.settings.arch == "lbl" and np.isfinite(m.epoch_loss).all()
    assert not np.array_equal(m.extra["positions"], np.ones((5, 8), np.float32))
    assert m.extra["start"].shape == (1, 8) and start.sample == 0.0


def test_per_line_scores_stream_and_need_a_language_model(lm, tmp_path):
    """``score --per-line`` writes the first lines' figures while its input is still
    coming (it never holds the file), one line each, an empty line included; a
    model without </s> and bad --threads are refused in one line."""
    import os
    import select
    import threading

    proc = subprocess.Popen([*hsw2v_command(), "score", "-", "--model", lm.path, "--per-line"],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    line = b"the city of london is the capital of england\n\n"
    fed = threading.Event()

    def feed() -> None:  # 3 MB, and the input stays open until the first lines came back
        proc.stdin.write(line * 60_000)
        proc.stdin.flush()
        fed.wait(120)
        proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 120)
        assert ready and not fed.is_set(), "no line was scored before the input ended"
        first = proc.stdout.readline().decode().split("\t")
        assert int(first[1]) == 10 and int(first[2]) == 0  # 9 words and </s>
        second = proc.stdout.readline().decode().split("\t")
        assert int(second[1]) == 1  # the empty line: </s> alone
        fed.set()
        rest = proc.stdout.read().decode().splitlines()
        assert proc.wait(60) == 0 and len(rest) == 2 * 60_000 - 2
    finally:
        fed.set()
        proc.kill()
    cbow = hsw2v.train(CORPUS, dim=8, epochs=1, max_vocab=300, progress=False)
    cbow.save(str(tmp_path / "cbow.npz"))
    (tmp_path / "held.txt").write_text("the city\n")
    for args, fragment in [(("--model", "cbow.npz", "--per-line"), "needs a language model"),
                           (("--model", lm.path, "--threads", "0"), "--threads must lie in 1..")]:
        assert fragment in one_line_error(run_hsw2v(tmp_path, "score", "held.txt", *args))
