"""Checkpoints, resume and training a model further: a run killed with SIGKILL and
resumed gives the uninterrupted run's vectors bit for bit (one thread); a
checkpoint is checked when read; --init-model keeps the model's vocabulary and tree."""
from __future__ import annotations

import json
import os
import subprocess
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import hsw2v
from hsw2v.runs.checkpoint import load_checkpoint, tree_pass_of

from tests.helpers import REPO, killed_at_first_checkpoint, one_line_error, run_hsw2v

CORPUS = str(REPO / "data" / "enwiki-1m.txt.gz")  # about six 1 MiB blocks an epoch
RUN = ("--dim", "16", "--epochs", "3", "--window", "3", "--quiet")


def killed_run(tmp_path, threads: int, *extra: str) -> str:
    """Start a run that checkpoints after every block and SIGKILL it as soon as the
    first checkpoint exists; return the checkpoint's path."""
    ck = killed_at_first_checkpoint(tmp_path, CORPUS, *RUN, *extra, "--threads", str(threads),
                                    "-o", "killed.txt")
    assert not (tmp_path / "killed.txt").exists()
    return ck


@pytest.mark.parametrize(("threads", "extra"), [(1, ()), (2, ()), (1, ("--node-bias",)),
                                                (1, ("--arch", "lbl")), (1, ("--tree", "huffman")),
                                                (1, ("--subwords", "--buckets", "5000"))])
@pytest.mark.newest_only
def test_a_killed_run_resumes(tmp_path, threads, extra):
    """Killed at its first checkpoint: a run that learns its tree (CBOW's and LBL's
    default) in its first pass, on a Huffman tree, and resumed through the tree's
    build to its own epochs; a run on a Huffman tree in its epochs."""
    whole = run_hsw2v(tmp_path, "train", CORPUS, *RUN, *extra, "--threads", str(threads),
                      "-o", "whole.txt", "--save-model", "whole.npz")
    assert whole.returncode == 0, whole.stderr
    ck = killed_run(tmp_path, threads, *extra)
    saved, position = load_checkpoint(ck)
    learned = "huffman" not in extra
    assert (tree_pass_of(ck) is not None) == learned
    assert saved.tree.kind == "huffman"
    assert saved.settings.epochs == (1 if learned else 3)  # (the first pass's one epoch)
    assert position.epoch < 3 and position.words < 3 * position.per_epoch  # killed mid-run
    resumed = run_hsw2v(tmp_path, "train", CORPUS, "--resume", ck, "--quiet",
                        "-o", "resumed.txt", "--save-model", "resumed.npz")
    assert resumed.returncode == 0, resumed.stderr
    assert not list(tmp_path.glob(".hsw2v-*"))  # the killed run's temporary went too
    a, b = hsw2v.load_model(str(tmp_path / "whole.npz")), hsw2v.load_model(str(tmp_path / "resumed.npz"))
    assert len(b.epoch_loss) == 3 and b.settings.node_bias == ("--node-bias" in extra
                                                                or "lbl" in extra)
    if threads == 1 or not learned:  # (two threads' first passes differ, and their trees)
        assert np.array_equal(a.tree.children, b.tree.children)
        assert np.array_equal(a.tree.extra_leaves, b.tree.extra_leaves)
    assert a.tree.kind == b.tree.kind == ("huffman" if not learned else "semantic-adaptive")
    assert (b.tree.codes_per_word.max() > 1) == ("--epsilon" in extra)
    if threads == 1:
        assert (tmp_path / "whole.txt").read_bytes() == (tmp_path / "resumed.txt").read_bytes()
        assert np.array_equal(a.node_vectors, b.node_vectors)
        assert list(a.extra) == list(b.extra)
        assert all(np.array_equal(a.extra[k], b.extra[k]) for k in a.extra)
        assert a.epoch_loss == b.epoch_loss
    else:  # Hogwild: not bit-identical, but the same training
        assert abs(b.epoch_loss[-1] - a.epoch_loss[-1]) < 0.02 * a.epoch_loss[-1]


def test_a_resumed_run_writes_the_killed_runs_outputs_and_says_where_it_resumed(tmp_path):
    """Without -o or --save-model, --resume writes where the killed run would have
    (killed.txt, and no model: the killed run asked for none), not to the default
    names, and says at which epoch it took the run up."""
    ck = killed_run(tmp_path, 1)
    _, position = load_checkpoint(ck)
    resumed = run_hsw2v(tmp_path, "train", CORPUS, "--resume", ck)
    assert resumed.returncode == 0, resumed.stderr
    assert (f"hsw2v: resuming {ck} in the first pass (on a Huffman tree, for the tree this run "
            f"learns) at epoch {position.epoch + 1} of 1") in resumed.stderr  # (CBOW's default)
    assert (tmp_path / "killed.txt").exists()
    assert not (tmp_path / "vectors.txt").exists() and not (tmp_path / "model.npz").exists()
    assert "saved vectors to killed.txt\n" in resumed.stderr


def test_the_closing_line_says_which_files_were_replaced(tmp_path, small_corpus):
    first = run_hsw2v(tmp_path, "train", small_corpus, "--dim", "8", "--epochs", "1")
    assert first.returncode == 0, first.stderr
    assert "saved vectors to vectors.txt and model to model.npz\n" in first.stderr
    (tmp_path / "model.npz").unlink()
    second = run_hsw2v(tmp_path, "train", small_corpus, "--dim", "8", "--epochs", "1")
    assert "saved vectors to vectors.txt (replaced) and model to model.npz\n" in second.stderr
    again = run_hsw2v(tmp_path, "train", small_corpus, "--dim", "8", "--epochs", "1")
    assert "saved vectors to vectors.txt (replaced) and model to model.npz (replaced)\n" in again.stderr


def test_checkpoints_track_the_run(tmp_path, planted):
    corpus, _ = planted
    ck = str(tmp_path / "ck.npz")
    model = hsw2v.train(corpus, dim=8, epochs=2, threads=1, min_count=1, progress=False,
                        checkpoint=ck)
    saved, position = load_checkpoint(ck)  # the last one: after the last epoch
    assert (position.epoch, position.blocks, position.epoch_words) == (2, 0, 0)
    assert position.words == 2 * model.vocab.total == 2 * position.per_epoch
    assert np.array_equal(saved.vectors, model.vectors)
    assert np.array_equal(saved.node_vectors, model.node_vectors)
    assert [s / n for s, n in zip(position.loss_sum, position.examples)] == model.epoch_loss
    assert np.array_equal(hsw2v.load_model(ck).vectors, model.vectors)  # loads as a model too
    again = hsw2v.train(corpus, resume=ck, progress=False)  # nothing left to train
    assert np.array_equal(again.vectors, model.vectors)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".hsw2v-")]


def rewrite_position(path: str, **changes) -> None:
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    record = json.loads(members["checkpoint.json"])
    record.update(changes)
    members["checkpoint.json"] = json.dumps(record).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


@pytest.mark.parametrize(("changes", "message"), [
    ({"epoch": 9}, "corrupt checkpoint"),
    ({"rng": [-1]}, "corrupt checkpoint"),
    ({"loss_sum": [1.0]}, "corrupt checkpoint"),
    ({"surprise": 1}, "corrupt checkpoint"),
    ({"format": "other"}, "not an hsw2v checkpoint"),
])
def test_a_damaged_checkpoint_is_one_line(tmp_path, small_corpus, changes, message):
    ck = str(tmp_path / "ck.npz")
    hsw2v.train(small_corpus, dim=8, epochs=2, threads=1, min_count=1, progress=False, checkpoint=ck)
    rewrite_position(ck, **changes)
    assert message in one_line_error(run_hsw2v(tmp_path, "train", small_corpus, "--resume", ck))


def test_resume_refuses_what_cannot_continue(tmp_path, small_corpus):
    ck, model = str(tmp_path / "ck.npz"), str(tmp_path / "m.npz")
    hsw2v.train(small_corpus, dim=8, epochs=2, threads=1, min_count=1, progress=False,
                checkpoint=ck).save(model)
    cases = [
        (("--resume", model), "a model, not a checkpoint"),
        (("--resume", ck, "--dim", "16"), "keeps the checkpoint's --dim (8); drop --dim 16"),
        (("--resume", ck, "--init-model", model), "do not go together"),
        (("--resume", str(tmp_path / "none.npz")), "no such file"),
    ]
    for args, message in cases:
        assert message in one_line_error(run_hsw2v(tmp_path, "train", small_corpus, *args))
    ok = run_hsw2v(tmp_path, "train", small_corpus, "--resume", ck, "--threads", "2", "--quiet")
    assert ok.returncode == 0, ok.stderr  # the thread count may change


def test_resume_on_a_changed_corpus_fails(tmp_path):
    ck = killed_run(tmp_path, 1)
    text = subprocess.run(["gzip", "-dc", CORPUS], capture_output=True, check=True).stdout
    shorter = tmp_path / "shorter.txt"
    shorter.write_bytes(text.split(b" ", 1000)[-1])  # the first thousand words gone
    error = one_line_error(run_hsw2v(tmp_path, "train", str(shorter), "--resume", ck, "-o", "v.txt"))
    assert "the corpus changed" in error
    assert not (tmp_path / "v.txt").exists()


def test_init_model_trains_further(tmp_path, planted):
    corpus, _ = planted
    lines = Path(corpus).read_text().splitlines()
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("\n".join(lines[:900]) + "\n")
    second.write_text("\n".join(lines[900:]) + "\nnovel words novel here\n")
    base = hsw2v.train(str(first), dim=8, epochs=2, threads=1, min_count=3, progress=False)
    more = hsw2v.train(str(second), init_model=base, epochs=1, progress=False)
    fresh = hsw2v.train(str(second), vocab=base.vocab, tree=base.tree, dim=8, epochs=1, threads=1,
                        min_count=3, progress=False)
    assert more.words == base.words and np.array_equal(more.tree.children, base.tree.children)
    assert not np.array_equal(more.vectors, base.vectors)
    assert more.epoch_loss[0] < fresh.epoch_loss[0]  # it starts from the trained vectors
    tokens = Counter(second.read_text().split())
    outside = {w: c for w, c in tokens.items() if w not in base.vocab}
    assert more.skipped == {"tokens": sum(outside.values()), "types": len(outside)}
    assert more.settings.dim == 8 and more.settings.epochs == 1
    with pytest.raises(hsw2v.HSW2VError, match="keeps the model's dim"):
        hsw2v.train(str(second), init_model=base, dim=16, progress=False)


def test_init_model_from_the_command_line(tmp_path, planted):
    corpus, _ = planted
    assert run_hsw2v(tmp_path, "train", corpus, "--dim", "8", "--epochs", "1", "--quiet",
                     "--save-model", "m.npz").returncode == 0
    extra = tmp_path / "extra.txt"
    extra.write_text("zzz yyy g0w1 g0w2\n")
    done = run_hsw2v(tmp_path, "train", str(extra), "--init-model", "m.npz", "--epochs", "2",
                     "--sample", "0", "--save-model", "more.npz")
    assert done.returncode == 0, done.stderr
    assert f"2 tokens (2 types) of {extra} are not in the model's vocabulary" in done.stderr
    assert hsw2v.load_model(str(tmp_path / "more.npz")).settings.epochs == 2
    nothing = tmp_path / "nothing.txt"
    nothing.write_text("zzz yyy\n")
    error = one_line_error(run_hsw2v(tmp_path, "train", str(nothing), "--init-model", "m.npz"))
    assert "none of its words is in the model's vocabulary" in error
    error = one_line_error(run_hsw2v(tmp_path, "train", str(extra), "--init-model", "m.npz",
                                     "--arch", "skipgram"))
    assert "keeps the model's --arch (cbow)" in error


def test_init_model_alone_trains_the_default_model_further_in_place(tmp_path, planted):
    """The checkpoints guide's ``hsw2v train new-text.txt --init-model model.npz``
    after a first ``train`` with the default outputs: no -o or --save-model typed, so
    model.npz and vectors.txt are replaced once training ends, and the closing line
    says so. Typing --save-model as the same file is still refused, and then
    nothing changes."""
    corpus, _ = planted
    assert run_hsw2v(tmp_path, "train", corpus, "--dim", "8", "--epochs", "1", "--quiet",
                     "--threads", "1").returncode == 0
    first = hsw2v.load_model(str(tmp_path / "model.npz"))
    done = run_hsw2v(tmp_path, "train", corpus, "--init-model", "model.npz", "--epochs", "2",
                     "--threads", "1")
    assert done.returncode == 0, done.stderr
    assert ("saved vectors to vectors.txt (replaced) and model to model.npz (trained further "
            "and replaced)") in done.stderr
    further = hsw2v.load_model(str(tmp_path / "model.npz"))
    assert further.words == first.words and further.settings.epochs == 2
    assert not np.array_equal(further.vectors, first.vectors)
    written = (tmp_path / "vectors.txt").read_text().splitlines()
    row = written[1].split()
    np.testing.assert_allclose(np.array(row[1:], dtype=np.float32),
                               further.vectors[further.vocab.index[row[0]]], rtol=1e-6)
    before = (tmp_path / "model.npz").read_bytes()
    error = one_line_error(run_hsw2v(tmp_path, "train", corpus, "--init-model", "model.npz",
                                     "--save-model", "model.npz"))
    assert "is the --init-model model.npz" in error
    assert (tmp_path / "model.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


OLD = REPO / "tests" / "data" / "before-subpackages"  # written before the subpackages


@pytest.mark.parametrize("arch", ["cbow", "skipgram"])  # (the kinds of that version)
def test_an_old_checkpoint_loads_and_resumes(arch):
    model, position = load_checkpoint(str(OLD / f"{arch}-ckpt.npz"))
    final = hsw2v.load_model(str(OLD / f"{arch}-model.npz"))
    assert model.arch == arch and position.epoch == model.settings.epochs
    assert np.array_equal(model.vectors, final.vectors)
    resumed = hsw2v.train(str(OLD / "tiny.txt"), resume=str(OLD / f"{arch}-ckpt.npz"),
                          progress=False)
    assert np.array_equal(resumed.vectors, final.vectors)  # nothing was left to train
    assert resumed.words == final.words
