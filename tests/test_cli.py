import gzip
import importlib
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import hsw2v
from hsw2v.cli import cli
from hsw2v.model.reading import read_vectors
from hsw2v.model.word2vec_format import write_vectors
from hsw2v.model.word2vec_format import vector_formats

from tests.helpers import REPO, bundled_slice, one_line_error, run_hsw2v


def run(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input)
    return result


def assert_one_line_error(result, fragment):
    assert result.exit_code != 0
    err = result.stderr.strip()
    assert "Traceback" not in result.output + err
    # progress bars may come first; the error itself is the last line, alone
    errors = [ln for ln in err.replace("\r", "\n").splitlines() if "error" in ln]
    assert len(errors) == 1 and err.endswith(errors[0]), err
    assert errors[0].startswith("hsw2v: error: ")
    assert fragment in errors[0]


def test_help_documents_every_option():
    for cmd, command in cli.commands.items():
        result = run(cmd, "--help")
        assert result.exit_code == 0
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("-"):
                    assert opt in result.output, (cmd, opt)
            if param.param_type_name == "option":
                assert param.help, (cmd, param.name)


def test_vocab_writes_save_vocab_format(tmp_path, small_corpus):
    out = tmp_path / "vocab.txt"
    result = run("vocab", small_corpus, "-o", str(out), "--min-count", "1")
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    words = [ln.split()[0] for ln in lines]
    counts = [int(ln.split()[1]) for ln in lines]
    text = Path(small_corpus).read_text().split()
    assert counts == sorted(counts, reverse=True)
    assert dict(zip(words, counts)) == {w: text.count(w) for w in set(text)}
    assert f"{len(text)} tokens, {len(set(text))} types" in result.stderr


def test_vocab_max_vocab_to_stdout(small_corpus):
    result = run("vocab", small_corpus, "--min-count", "1", "--max-vocab", "3", "--quiet")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 3


def test_train_then_similar(tmp_path, planted):
    corpus, groups = planted
    out, model = tmp_path / "v.txt", tmp_path / "m.npz"
    result = run("train", corpus, "-o", str(out), "--save-model", str(model), "--min-count", "1",
                 "--dim", "16", "--epochs", "2", "--threads", "1", "--quiet")
    assert result.exit_code == 0, result.output
    v = read_vectors(str(out))
    assert len(v) == sum(len(g) for g in groups) and v.dim == 16
    result = run("similar", groups[0][0], "--vectors", str(out), "-n", "3", "--json")
    assert result.exit_code == 0, result.output
    hits = [d["word"] for d in json.loads(result.stdout)]
    assert len(hits) == 3 and all(w in groups[0] for w in hits)
    # the model file answers too
    result = run("similar", groups[1][0], "--vectors", str(model), "-n", "2")
    assert result.exit_code == 0
    assert all(line.split("\t")[0] in groups[1] for line in result.stdout.splitlines())


def test_no_spool_trains_the_same_vectors(tmp_path, small_corpus):
    outs = []
    for flag in ("--spool", "--no-spool"):
        out = tmp_path / f"v{flag}.txt"
        result = run("train", small_corpus, "-o", str(out), "--min-count", "1", "--dim", "8",
                     "--epochs", "2", "--threads", "1", "--quiet", flag)
        assert result.exit_code == 0, result.output
        outs.append(read_vectors(str(out)))
    assert outs[0].words == outs[1].words
    assert np.array_equal(outs[0].matrix, outs[1].matrix)


def test_read_vocab_skips_counting(tmp_path, small_corpus):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("g0w0 100\ng0w1 50\ng1w0 10\n")
    out = tmp_path / "v.txt"
    result = run("train", small_corpus, "-o", str(out), "--read-vocab", str(vocab),
                 "--min-count", "1", "--dim", "8", "--epochs", "1", "--quiet")
    assert result.exit_code == 0, result.output
    assert read_vectors(str(out)).words == ["g0w0", "g0w1", "g1w0"]


def test_binary_output_and_stdin(tmp_path, small_corpus):
    out = tmp_path / "v.bin"
    text = Path(small_corpus).read_text()
    result = run("train", "-", "-o", str(out), "--binary", "--min-count", "1", "--dim", "8",
                 "--epochs", "1", "--quiet", input=text)
    assert result.exit_code == 0, result.output
    assert read_vectors(str(out)).dim == 8


@pytest.mark.parametrize("name", sorted(vector_formats))
def test_each_vector_format_is_an_option_with_its_default_file(tmp_path, small_corpus, name):
    """--format NAME, for each format of the table, writes the format's default file
    (when no output is named), which reads back; --binary is --format binary."""
    args = ("train", small_corpus, "--min-count", "1", "--dim", "8", "--epochs", "1", "--quiet")
    result = run_hsw2v(tmp_path, *args, "--format", name)
    assert result.returncode == 0, result.stderr
    written = tmp_path / vector_formats[name].default_file
    gensim = importlib.import_module("gensim")
    if vector_formats[name].write_rows is None:  # (fastText's whole model: gensim reads it)
        from hsw2v.model.reading import load_model

        kv = gensim.models.fasttext.load_facebook_vectors(str(written))
        model = load_model(str(tmp_path / "model.npz"))
        assert kv.vectors.shape[1] == 8 and np.allclose(kv.vectors, model.word_vectors)
    else:
        kv = gensim.models.KeyedVectors.load_word2vec_format(
            str(written), binary=name == "binary")  # (gensim tells the two apart by its flag)
        assert kv.vectors.shape[1] == 8 and np.allclose(kv.vectors,
                                                        read_vectors(str(written)).matrix)
    error = one_line_error(run_hsw2v(tmp_path, *args, "--binary", "--format", "text"))
    assert "--binary is --format binary" in error
    assert "--format" in one_line_error(run_hsw2v(tmp_path, *args, "--format", "hdf5"))


def test_compressed_corpus_same_vocab(tmp_path, small_corpus):
    gz = tmp_path / "c.txt.gz"
    gz.write_bytes(gzip.compress(Path(small_corpus).read_bytes()))
    a = run("vocab", small_corpus, "--min-count", "1", "--quiet").stdout
    b = run("vocab", str(gz), "--min-count", "1", "--quiet").stdout
    assert a == b and a


@pytest.mark.parametrize(
    "setup, args, fragment",
    [
        (None, ["train", "{d}/absent.txt", "-o", "{d}/v.txt"], "no such file"),
        ("", ["train", "{d}/c.txt", "-o", "{d}/v.txt"], "empty"),
        ("a b c d e f\n", ["train", "{d}/c.txt", "-o", "{d}/v.txt"], "no word occurs at least 5"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["train", "{d}/c.txt", "-o", "{d}/v.txt"], "binary"),
        (b"caf\xe9 au lait\n", ["train", "{d}/c.txt", "-o", "{d}/v.txt"], "invalid UTF-8"),
        ("a b\n" * 10, ["train", "{d}/c.txt", "-o", "{d}/v.txt", "--dim", "0"], "--dim"),
        ("a b\n" * 10, ["train", "{d}/c.txt", "-o", "{d}/v.txt", "--window", "-2"], "--window"),
        ("a b\n" * 10, ["train", "{d}/c.txt", "-o", "{d}/missing/v.txt"], "does not exist"),
        (None, ["vocab", "{d}/absent.txt"], "no such file"),
        ("a b\n" * 10, ["train", "{d}/c.txt", "-o", "{d}/v.txt", "--dim", "x"], "not a valid integer"),
    ],
)
def test_bad_input_one_line_error(tmp_path, setup, args, fragment):
    if setup is not None:
        data = setup.encode() if isinstance(setup, str) else setup
        (tmp_path / "c.txt").write_bytes(data)
    result = run(*[a.format(d=tmp_path) for a in args])
    assert_one_line_error(result, fragment)
    assert not (tmp_path / "v.txt").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".hsw2v")] == []


def test_failed_run_keeps_existing_output(tmp_path):
    out = tmp_path / "v.txt"
    out.write_text("keep me")
    (tmp_path / "c.txt").write_bytes(b"ok words \xff\xfe\n" * 3)
    result = run("train", str(tmp_path / "c.txt"), "-o", str(out), "--min-count", "1")
    assert_one_line_error(result, "invalid UTF-8")
    assert out.read_text() == "keep me"


def test_long_line_without_newline(tmp_path):
    """A multi-megabyte single line trains (streamed), and no word is dropped."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in rng.integers(0, 50, size=600_000)]
    path = tmp_path / "line.txt"
    path.write_text(" ".join(words))
    result = run("vocab", str(path), "--min-count", "1", "--quiet")
    total = sum(int(line.split()[1]) for line in result.stdout.splitlines())
    assert total == len(words)
    result = run("train", str(path), "-o", str(tmp_path / "v.txt"), "--min-count", "1",
                 "--dim", "8", "--epochs", "1", "--quiet")
    assert result.exit_code == 0, result.output


@pytest.fixture
def vectors_file(tmp_path):
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(200)] + ["king", "queen", "man", "woman"]
    matrix = rng.normal(size=(len(words), 12)).astype(np.float32)
    path = tmp_path / "v.txt"
    write_vectors(str(path), words, matrix)
    return str(path)


def test_similar_matches_gensim(vectors_file):
    gensim = importlib.import_module("gensim")
    kv = gensim.models.KeyedVectors.load_word2vec_format(vectors_file)
    for pos, neg in [(["king"], []), (["king", "woman"], ["man"]), (["w3", "w7"], ["w9", "w1"])]:
        args = ["similar", *pos, "--vectors", vectors_file, "-n", "8", "--json"]
        for n in neg:
            args += ["--negative", n]
        result = run(*args)
        assert result.exit_code == 0, result.output
        ours = json.loads(result.stdout)
        theirs = kv.most_similar(positive=pos, negative=neg, topn=8)
        assert [d["word"] for d in ours] == [w for w, _ in theirs]
        np.testing.assert_allclose([d["similarity"] for d in ours], [s for _, s in theirs],
                                   atol=1e-5)


def test_similar_unknown_word_suggests(vectors_file):
    result = run("similar", "kinq", "--vectors", vectors_file)
    assert_one_line_error(result, "unknown word 'kinq'")
    assert "king" in result.stderr


def test_similar_bad_vectors_file(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\na 1 2 3\nb 1 2\n")
    assert_one_line_error(run("similar", "a", "--vectors", str(bad)), "expected a word and 3 values")
    assert_one_line_error(run("similar", "a", "--vectors", str(tmp_path / "nope")), "no such file")
    result = run("similar", "a", "--vectors", str(bad), "-n", "0")
    assert_one_line_error(result, "-n must be positive")


def test_evaluate_command_matches_api(tmp_path, vectors_file):
    from hsw2v.evaluation.evaluate import evaluate_analogies, evaluate_word_pairs

    questions = tmp_path / "q.txt"
    questions.write_text(": royals\nman king woman queen\nking man queen woman\nw1 w2 w3 w4\n"
                         ": other\nw5 w6 w7 w8\nnope w1 w2 w3\n")
    pairs = tmp_path / "p.tsv"
    pairs.write_text("# a comment\nking\tqueen\t9\nman\twoman\t8\nw1\tw2\t1\nw3\tw9\t4\nw4\tzz\t3\n")
    r = run("evaluate", vectors_file, "--analogies", str(questions), "--pairs", str(pairs), "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    v = read_vectors(vectors_file)
    assert got["analogies"] == json.loads(json.dumps(evaluate_analogies(v, str(questions))))
    assert got["pairs"][str(pairs)] == json.loads(json.dumps(evaluate_word_pairs(v, str(pairs))))
    assert got["analogies"]["oov"] == 1
    r = run("evaluate", vectors_file, "--analogies", str(questions))
    assert r.exit_code == 0 and "analogy total" in r.stdout
    r = run("evaluate", vectors_file, "--no-analogies", "--pairs", str(pairs), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"pairs": got["pairs"]}
    assert_one_line_error(run("evaluate", vectors_file, "--no-analogies"), "--pairs FILE")
    assert_one_line_error(run("evaluate", vectors_file, "--no-analogies", "--analogies", str(questions)),
                          "not both")
    assert_one_line_error(run("evaluate", vectors_file, "--pairs", str(tmp_path / "no.tsv")),
                          "not found")


GOOGLE_ANALOGIES_SHA256 = "8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36"


def test_evaluate_scores_the_bundled_google_analogies_by_default(tmp_path):
    """``hsw2v evaluate vectors.txt`` with no set named scores word2vec's own
    questions-words.txt (shipped byte for byte), as gensim scores that file; so does
    ``hsw2v evaluate`` with the vectors found here."""
    import hashlib

    import hsw2v

    bundled = Path(hsw2v.datasets.google_analogies())
    assert hashlib.sha256(bundled.read_bytes()).hexdigest() == GOOGLE_ANALOGIES_SHA256
    assert bundled.read_bytes() == (REPO / "data" / "questions-words.txt").read_bytes()

    # The questions' words (some lower-cased twins too) and filler, in a shuffled
    # "frequency" order; each section's second and fourth words get that section's
    # offset, so that some questions are answered right and most wrong.
    lines = bundled.read_text(encoding="utf-8").splitlines()
    rng = np.random.default_rng(3)
    dim, sections, order, offset_of = 16, -1, [], {}
    for line in lines:
        if line.startswith(": "):
            sections += 1
            continue
        for k, w in enumerate(line.split()):
            order.append(w)
            if k % 2:
                offset_of.setdefault(w, set()).add(sections)
    offsets = rng.normal(size=(sections + 1, dim)) * 0.8
    vocab = list(dict.fromkeys(order))[::2]  # every other word: many questions OOV
    vocab += [w.lower() for w in vocab[::5] if w.lower() != w]
    vocab = list(dict.fromkeys(vocab + [f"filler{i}" for i in range(300)]))
    rng.shuffle(vocab)
    matrix = rng.normal(size=(len(vocab), dim))
    for i, w in enumerate(vocab):
        for sec in offset_of.get(w, ()):
            matrix[i] += offsets[sec]
    write_vectors(str(tmp_path / "vectors.txt"), vocab, matrix.astype(np.float32))

    result = run_hsw2v(tmp_path, "evaluate", "vectors.txt", "--json")
    assert result.returncode == 0, result.stderr
    ours = json.loads(result.stdout)
    assert set(ours) == {"analogies", "pairs"} and ours["pairs"] == {}
    ours = ours["analogies"]

    # gensim, on the same vectors file and the same questions, by their own reading
    gensim_models = importlib.import_module("gensim.models")
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(tmp_path / "vectors.txt"))
    score, theirs = kv.evaluate_word_analogies(str(bundled), restrict_vocab=30000,
                                               case_insensitive=True)
    total = theirs.pop()
    assert [s["section"] for s in ours["sections"]] == [s["section"] for s in theirs]
    assert len(theirs) == 14
    for mine, their in zip(ours["sections"], theirs):
        assert (mine["correct"], mine["incorrect"]) == (len(their["correct"]), len(their["incorrect"]))
    assert (ours["correct"], ours["incorrect"]) == (len(total["correct"]), len(total["incorrect"]))
    assert ours["accuracy"] == pytest.approx(score, abs=1e-12)
    assert ours["correct"] > 0 and ours["incorrect"] > 0 and ours["oov"] > 0
    assert ours["correct"] + ours["incorrect"] + ours["oov"] == 19544

    # the sets not bundled: the help says where to get them (hsw2v.datasets' table)
    help_text = " ".join(run("evaluate", "--help").output.split())
    assert "Apache-2.0" in help_text
    assert all(url in help_text for url in hsw2v.datasets.WORD_PAIR_SETS.values())

    text = run_hsw2v(tmp_path, "evaluate")  # the vectors here, the bundled questions
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[-1].split() == [
        "analogy", "total", f"{ours['correct']}/{ours['correct'] + ours['incorrect']}",
        f"{100 * ours['accuracy']:.2f}%", f"({ours['oov']}", "OOV)"]


def test_train_options_are_the_settings():
    """The one check of the settings' homes: every TrainSettings field is a `train`
    option and a parameter of `hsw2v.train` with the same default and choices; every
    setting a kind or tree declares is such a field, of the declared type, with the
    declared default, help and choices; so the CLI, the API and the declarations
    cannot drift apart."""
    import dataclasses
    import inspect

    import hsw2v
    from hsw2v.settings import TrainSettings, declared_settings

    params = {p.name: p for p in cli.commands["train"].params}
    api = inspect.signature(hsw2v.train).parameters
    fields = {f.name: f for f in dataclasses.fields(TrainSettings) if f.name != "extra"}
    for f in fields.values():
        option = params[f.name]
        assert option.default == f.default, f.name
        if "choices" in f.metadata:
            assert list(option.type.choices) == list(f.metadata["choices"]), f.name
        assert option.help.startswith(f.metadata["help"]), f.name
        assert f.name in api, f.name
    for name, d in declared_settings().items():
        f = fields[name]
        assert f.default == d.default and f.metadata["help"].startswith(d.help), name
        assert d.value_type.__name__ in str(f.type) and d.value_type.__name__ in str(
            api[name].annotation), name
        assert f.metadata.get("choices") == d.allowed() and f.metadata.get("flag") == d.flag, name


def test_training_options_reach_the_model(tmp_path, planted):
    """Each option of `train`, given on the command line, is what the model records
    and does what it says."""
    from hsw2v.model.reading import load_model

    corpus, _groups = planted
    model = tmp_path / "m.npz"
    result = run("train", corpus, "--save-model", str(model), "--min-count", "1", "--dim", "16",
                 "--epochs", "2", "--threads", "2", "--sample", "1e-4", "--alpha", "0.03",
                 "--min-alpha", "0.001", "--max-vocab", "20", "--window", "3", "--seed", "9",
                 "--quiet")
    assert result.exit_code == 0, result.output
    m = load_model(str(model))
    s = m.settings
    assert (s.threads, s.sample, s.alpha, s.min_alpha, s.window, s.seed, s.epochs) == (
        2, 1e-4, 0.03, 0.001, 3, 9, 2)
    text = Path(corpus).read_text().split()
    counts = sorted((-text.count(w), text.index(w), w) for w in set(text))[:20]
    assert m.words == [w for _, _, w in counts]  # the 20 most frequent, first seen first
    # a learning rate of almost nothing leaves the loss where it started (on Huffman's
    # tree: a tree learned in the run starts from a first pass at the kind's rate)
    frozen = tmp_path / "f.npz"
    assert run("train", corpus, "--save-model", str(frozen), "--min-count", "1", "--dim", "16",
               "--epochs", "2", "--alpha", "1e-9", "--min-alpha", "0", "--tree", "huffman",
               "--quiet").exit_code == 0
    losses = load_model(str(frozen)).epoch_loss
    assert losses[0] == pytest.approx(losses[1], rel=1e-3) and losses[1] > m.epoch_loss[1] + 0.2


def test_node_bias_from_the_command_line(tmp_path, planted):
    """--node-bias trains a bias column that the model file keeps and predict uses;
    training such a model further without biases is one line, in a real process."""
    from hsw2v.model.reading import load_model

    from tests.helpers import one_line_error, run_hsw2v

    corpus, _groups = planted
    done = run_hsw2v(tmp_path, "train", corpus, "--save-model", "m.npz", "--min-count", "1",
                     "--dim", "16", "--epochs", "2", "--node-bias", "--quiet")
    assert done.returncode == 0, done.stderr
    m = load_model(str(tmp_path / "m.npz"))
    assert m.settings.node_bias and m.node_vectors.shape[1] == 17
    assert np.abs(m.node_vectors[:, 16]).max() > 0.01
    shown = run_hsw2v(tmp_path, "predict", "--model", "m.npz", m.words[0], "-n", "3")
    assert shown.returncode == 0, shown.stderr
    assert [ln.split()[0] for ln in shown.stdout.splitlines()] == [w for w, _ in m.predict([m.words[0]], 3)]
    refused = run_hsw2v(tmp_path, "train", corpus, "--init-model", "m.npz", "--no-node-bias",
                        "-o", "v.txt", "--quiet")
    assert "node" in one_line_error(refused) and not (tmp_path / "v.txt").exists()


def _shared_ancestors(tree, a: int, b: int) -> int:
    """How many inner nodes the root-to-leaf paths of words ``a`` and ``b`` share."""
    pa = tree.path_nodes[tree.path_offsets[a]:tree.path_offsets[a + 1]].tolist()
    pb = tree.path_nodes[tree.path_offsets[b]:tree.path_offsets[b + 1]].tolist()
    return next((k for k, (x, y) in enumerate(zip(pa, pb)) if x != y), min(len(pa), len(pb)))


def test_cbow_learns_its_tree_by_default(tmp_path, planted):
    """`hsw2v train` (CBOW) trains a one-epoch Huffman pass, learns an adaptive
    semantic tree from it and trains 3 epochs on it: the planted groups' words share
    more of their paths than words of different groups, unlike on Huffman's tree.
    `--tree huffman` trains today's 5 epochs with no first pass."""
    from hsw2v.model.reading import load_model

    corpus, groups = planted
    common = ["--min-count", "1", "--dim", "16", "--sample", "0", "--threads", "1"]
    learned = run_hsw2v(tmp_path, "train", corpus, *common, "--save-model", "s.npz")
    assert learned.returncode == 0, learned.stderr
    assert "a first pass of 1 epoch on a Huffman tree" in learned.stderr
    plain = run_hsw2v(tmp_path, "train", corpus, *common, "--tree", "huffman",
                      "--save-model", "h.npz", "--quiet")
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr
    s, h = load_model(str(tmp_path / "s.npz")), load_model(str(tmp_path / "h.npz"))
    assert (s.settings.tree, s.settings.split, s.settings.tree_epochs, s.settings.epochs) == (
        "semantic", "adaptive", 1, 3) and s.tree.kind == "semantic-adaptive"
    assert (h.settings.tree, h.settings.epochs, len(h.epoch_loss)) == ("huffman", 5, 5)
    assert len(s.epoch_loss) == 3
    for m, margin in ((s, 2.0), (h, None)):
        ids = [[m.vocab.index[w] for w in g] for g in groups]
        same = np.mean([_shared_ancestors(m.tree, a, b) for g in ids for a in g for b in g if a < b])
        apart = np.mean([_shared_ancestors(m.tree, a, b) for g, k in zip(ids, ids[1:])
                         for a in g for b in k])
        if margin:
            assert same > apart + margin, (same, apart)
        else:
            assert same < apart + 1.0, (same, apart)


def test_one_shot_semantic_tree_with_balanced_split(tmp_path, planted):
    from hsw2v.model.reading import load_model

    corpus, _ = planted
    model = tmp_path / "m.npz"
    result = run("train", corpus, "--save-model", str(model), "--min-count", "1", "--dim", "8",
                 "--epochs", "1", "--tree", "semantic", "--split", "balanced", "--quiet")
    assert result.exit_code == 0, result.output
    m = load_model(str(model))
    assert m.tree.kind == "semantic-balanced"
    assert int(m.tree.depths.max()) == int(np.ceil(np.log2(len(m.words))))


@pytest.mark.parametrize("option, value, fragment", [
    ("--sample", "-1", "--sample"), ("--alpha", "0", "--alpha"), ("--min-alpha", "1", "--min-alpha"),
    ("--max-vocab", "1", "--max-vocab"), ("--threads", "0", "--threads"),
    ("--split", "kmeans", "--split"), ("--arch", "glove", "--arch"),
])
def test_training_option_errors(tmp_path, small_corpus, option, value, fragment):
    result = run("train", small_corpus, "-o", str(tmp_path / "v.txt"), option, value)
    assert_one_line_error(result, fragment)
    assert not (tmp_path / "v.txt").exists()


def test_train_and_vocab_take_several_corpora(tmp_path, small_corpus):
    """Files, directories and quoted globs, as one corpus in order."""
    d = tmp_path / "d"
    d.mkdir()
    text = Path(small_corpus).read_text()
    (d / "1.txt").write_text(text)
    (d / "2.txt").write_text(text)
    one = run("vocab", small_corpus, "--min-count", "1", "--quiet").stdout
    doubled = "".join(f"{w} {2 * int(c)}\n" for w, c in (ln.split() for ln in one.splitlines()))
    for args in ([str(d)], [str(d / "*.txt")], [str(d / "1.txt"), str(d / "2.txt")],
                 [small_corpus, str(d / "2.txt")]):
        assert run("vocab", *args, "--min-count", "1", "--quiet").stdout == doubled, args
    result = run("train", str(d), small_corpus, "-o", str(tmp_path / "v.txt"), "--min-count", "1",
                 "--dim", "8", "--epochs", "1", "--quiet")
    assert result.exit_code == 0, result.output
    assert_one_line_error(run("vocab", str(d / "*.csv")), "no file matches")


def test_the_vectors_cache_is_in_the_cache_directory_never_beside_the_file(tmp_path,
                                                                             small_corpus):
    """train keeps a copy of its vectors in the user's cache directory (not with
    --no-cache), similar makes one where there is none; nothing is written beside
    the user's files."""
    from hsw2v.model.vectors_cache import entry_of

    out = tmp_path / "v.txt"
    args = ["train", small_corpus, "-o", str(out), "--min-count", "1", "--dim", "8", "--epochs", "1",
            "--quiet"]
    assert run(*args, "--no-cache").exit_code == 0
    assert not entry_of(str(out)).exists()
    assert run("similar", "g0w0", "--vectors", str(out)).exit_code == 0
    assert entry_of(str(out)).exists()
    entry_of(str(out)).unlink()
    assert run(*args).exit_code == 0 and entry_of(str(out)).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.txt", "v.txt"]


def test_corpus_urls(tmp_path, small_corpus, http_server):
    """hsw2v reads http:// URLs through fsspec, compressed or not, in a real process."""
    importlib.import_module("fsspec")
    from tests.helpers import one_line_error, run_hsw2v

    root, base = http_server
    text = Path(small_corpus).read_bytes()
    (root / "c.txt").write_bytes(text)
    (root / "c.txt.gz").write_bytes(gzip.compress(text))
    local = run_hsw2v(tmp_path, "vocab", small_corpus, "--min-count", "1", "--quiet").stdout
    for url in (f"{base}/c.txt", f"{base}/c.txt.gz"):
        got = run_hsw2v(tmp_path, "vocab", url, "--min-count", "1", "--quiet")
        assert got.returncode == 0 and got.stdout == local, got.stderr
    result = run_hsw2v(tmp_path, "train", f"{base}/c.txt", small_corpus, "-o", "v.txt",
                       "--min-count", "1", "--dim", "8", "--epochs", "1", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "no such file" in one_line_error(run_hsw2v(tmp_path, "vocab", f"{base}/absent.txt"))


def test_help_names_every_compression_the_reader_reads():
    """Each command whose help names a compressed format names all that the reader opens."""
    import click

    from hsw2v.text.reader import openers

    for name, command in cli.commands.items():
        text = command.get_help(click.Context(command, info_name=name))
        if any(ext in text for ext in openers):
            missing = [ext for ext in openers if ext not in text]
            assert not missing, f"hsw2v {name} --help omits {missing}"


def test_example_corpus_is_the_bundled_slice(tmp_path):
    """``hsw2v example-corpus`` writes the bundled corpus as text (to stdout or -o),
    the same words as ``hsw2v.datasets.enwiki_1m()``, which ``train`` reads as it is."""
    import gzip

    import hsw2v

    path = hsw2v.datasets.enwiki_1m()
    with gzip.open(path, "rb") as f:
        text = f.read()
    assert len(text.split()) == 1_000_000
    out = run_hsw2v(tmp_path, "example-corpus")
    assert out.returncode == 0 and out.stdout.encode() == text
    assert run_hsw2v(tmp_path, "example-corpus", "-o", "c.txt").returncode == 0
    assert (tmp_path / "c.txt").read_bytes() == text
    with gzip.open(REPO / "data" / "enwiki-1m.txt.gz", "rb") as f:  # the checkout's copy
        assert f.read() == text


@pytest.mark.newest_only
def test_predict_says_what_skipgram_scores_are(tmp_path, planted):
    corpus, _ = planted
    assert run_hsw2v(tmp_path, "train", corpus, "--arch", "skipgram", "--dim", "8", "--epochs", "1",
                     "--min-count", "1", "--quiet").returncode == 0
    words = (tmp_path / "vectors.txt").read_text().split("\n")[1:3]
    context = [line.split(" ")[0] for line in words]
    two = run_hsw2v(tmp_path, "predict", *context, "-n", "3")
    assert two.returncode == 0, two.stderr
    assert "product of P(word | c) over the 2 context words" in two.stderr
    assert sum(float(line.split("\t")[1]) for line in two.stdout.splitlines()) < 1
    one = run_hsw2v(tmp_path, "predict", context[0], "-n", "3")
    assert one.returncode == 0 and "product" not in one.stderr


def test_a_kinds_setting_is_refused_with_another_kind_as_its_flag_is_spelt(tmp_path, small_corpus):
    """--cbow-sum goes with CBOW alone (as --position-weights with LBL); a refused
    change of a yes/no setting names the flag to drop; --init-model checks options
    against the model's own kind (hostile round four, items 8, 15 and 16)."""
    from tests.helpers import one_line_error

    for arch in ("lbl", "skipgram"):
        r = run_hsw2v(tmp_path, "train", small_corpus, "--arch", arch, "--cbow-sum", "--quiet")
        assert one_line_error(r) == "hsw2v: error: --cbow-sum goes with --arch cbow"
    fast = ("--dim", "8", "--epochs", "1", "--min-count", "1", "--quiet")
    assert run_hsw2v(tmp_path, "train", small_corpus, *fast, "--node-bias", "-o", "nb.txt",
                     "--save-model", "nb.npz").returncode == 0
    r = run_hsw2v(tmp_path, "train", small_corpus, *fast, "--init-model", "nb.npz", "--no-node-bias",
                  "-o", "x.txt")
    assert one_line_error(r).endswith("keeps the model's --node-bias (True); drop --no-node-bias")
    assert run_hsw2v(tmp_path, "train", small_corpus, *fast, "--arch", "lbl", "-o", "lm.txt",
                     "--save-model", "lm.npz").returncode == 0
    r = run_hsw2v(tmp_path, "train", small_corpus, *fast, "--init-model", "lm.npz",
                  "--position-weights", "full", "-o", "y.txt")
    assert one_line_error(r).endswith(
        "keeps the model's --position-weights (diagonal); drop --position-weights full")
    r = run_hsw2v(tmp_path, "train", small_corpus, *fast, "--init-model", "lm.npz",
                  "--position-weights", "diagonal", "-o", "y.txt")
    assert r.returncode == 0, r.stderr
    r = run_hsw2v(tmp_path, "train", small_corpus, *fast, "--arch", "lbl", "--no-node-bias",
                  "-o", "z.txt")  # (round five, item 20: the flag as typed)
    assert one_line_error(r) == "hsw2v: error: --arch lbl always trains node biases; drop --no-node-bias"
    with pytest.raises(hsw2v.HSW2VError, match=r"drop node_bias=False$"):
        hsw2v.train(small_corpus, arch="lbl", node_bias=False, progress=False)


def test_json_output_is_strict_json_and_score_does_not_overflow(tmp_path, small_corpus):
    """A model that loads but predicts terribly (mean -log P above 709 nats) has an
    infinite perplexity, said in words and, in JSON, as null with the reason; a
    correlation of one pair is undefined, likewise (hostile round four, items 7, 14)."""
    import dataclasses
    import math

    import hsw2v

    from tests.helpers import one_line_error

    m = hsw2v.train(small_corpus, dim=8, epochs=1, min_count=1, threads=1, progress=False)
    for factor in 10.0 ** np.arange(2, 12):  # inner nodes blown up until -log P passes 709
        bad = dataclasses.replace(m, node_vectors=m.node_vectors * np.float32(factor))
        if 720 < hsw2v.score(bad, small_corpus)["loss"] < math.inf:
            break
    bad.save(str(tmp_path / "bad.npz"))
    text = run_hsw2v(tmp_path, "score", small_corpus, "--model", "bad.npz")
    assert text.returncode == 0, text.stderr
    loss = float(text.stdout.split("mean -log P: ")[1].split()[0])
    assert 709.8 < loss < math.inf and "perplexity: inf" in text.stdout

    def strict(s):
        return json.loads(s, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))

    as_json = strict(run_hsw2v(tmp_path, "score", small_corpus, "--model", "bad.npz", "--json").stdout)
    assert as_json["perplexity"] is None and as_json["why_null"] == {"perplexity": "infinite"}
    assert as_json["loss"] == pytest.approx(loss, rel=1e-4)
    m.save_vectors(str(tmp_path / "v.txt"))
    a, b = m.words[:2]
    (tmp_path / "one.tsv").write_text(f"{a}\t{b}\t5.0\n")
    result = run_hsw2v(tmp_path, "evaluate", "v.txt", "--pairs", "one.tsv", "--json")
    assert result.returncode == 0, result.stderr
    found = strict(result.stdout)
    nulls = []

    def walk(x):
        if isinstance(x, dict):
            nulls.extend((k, x.get("why_null", {}).get(k)) for k, v in x.items() if v is None)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(found)
    assert nulls and all(why == "not a number (NaN)" for _, why in nulls), found
    assert one_line_error(run_hsw2v(tmp_path, "train", small_corpus, "--sample", "1e308")).endswith(
        "got 1e+308")


def test_a_refused_connection_is_not_a_missing_file(tmp_path, http_server):
    """A URL whose server is not there says so; a URL the server lacks has no such
    file (hostile round four, item 20)."""
    import socket

    from tests.helpers import one_line_error

    with socket.socket() as s:  # a port that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/c.txt"
    assert one_line_error(run_hsw2v(tmp_path, "vocab", url)) == \
        f"hsw2v: error: {url}: cannot connect (Connection refused)"
    _, base = http_server
    assert one_line_error(run_hsw2v(tmp_path, "vocab", f"{base}/absent.txt")) == \
        f"hsw2v: error: {base}/absent.txt: no such file"


@pytest.mark.newest_only
def test_subwords_build_unseen_words_and_refuse_what_cannot_run(tmp_path):
    """``similar`` reads the default model when the vectors lack a word, says the
    word was built, and answers; Dask, LBL and n-gram lengths without
    ``--subwords`` are one line each."""
    corpus = bundled_slice(tmp_path / "c.txt", 50_000)
    train = ("train", str(corpus), "--subwords", "--buckets", "5000", "--dim", "16",
             "--epochs", "1", "--tree", "huffman", "--threads", "1", "--quiet")
    assert run_hsw2v(tmp_path, *train).returncode == 0
    result = run_hsw2v(tmp_path, "similar", "historyz", "-n", "3")
    assert result.returncode == 0, result.stderr
    assert "'historyz' is not in the vocabulary" in result.stderr
    assert len(result.stdout.splitlines()) == 3
    known = run_hsw2v(tmp_path, "similar", "history", "-n", "3")
    assert known.returncode == 0 and "not in the vocabulary" not in known.stderr
    for extra, says in [(("--engine", "dask", "--workers", "1"), "--engine dask does not train"),
                        (("--arch", "lbl"), "--subwords goes with --arch cbow or"),
                        ]:
        assert says in one_line_error(run_hsw2v(tmp_path, *train, *extra))
    plain = ("train", str(corpus), "--minn", "2", "--quiet")
    assert "--minn goes with --subwords" in one_line_error(run_hsw2v(tmp_path, *plain))
