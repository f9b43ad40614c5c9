"""Files written by hsw2v before the package was split into subpackages (model
files and checkpoints, in ``tests/data/before-subpackages``, made by that version
from ``tiny.txt``) still load, predict, and resume."""
from __future__ import annotations

import numpy as np
import pytest

import hsw2v
from hsw2v.runs.checkpoint import load_checkpoint
from hsw2v.training.kinds import model_kinds

from .conftest import REPO

OLD = REPO / "tests" / "data" / "before-subpackages"


@pytest.mark.parametrize("name", ["cbow-model", "skipgram-model", "adaptive-model"])
def test_an_old_model_file_loads_with_its_arrays(name):
    path = OLD / f"{name}.npz"
    model = hsw2v.load_model(str(path))
    with np.load(path) as raw:
        assert np.array_equal(model.vectors, raw["vectors"])
        assert np.array_equal(model.node_vectors, raw["node_vectors"])
        assert np.array_equal(model.tree.children, raw["children"])
    assert model.arch in model_kinds
    probs = np.exp(model.all_log_probs(model.words[:1]))  # (one word: a distribution for every kind)
    assert probs.sum() == pytest.approx(1.0, abs=1e-4)
    top = model.predict(model.words[:1], 3)
    assert top[0][0] == model.words[int(np.argmax(probs))]


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


MARKERLESS = REPO / "tests" / "data" / "before-sentence-markers"
"""An LBL model saved before a language model's vocabulary held <unk> and </s>
(``lbl-model.npz``: ``--arch lbl --window 3 --dim 8 --min-count 3 --epochs 2`` on
``tiny.txt``, by the version before them)."""


def test_an_lbl_model_from_before_the_sentence_markers_loads_predicts_and_scores(tmp_path):
    model = hsw2v.load_model(str(MARKERLESS / "lbl-model.npz"))
    assert model.arch == "lbl" and not model.vocab.markers
    assert "<unk>" not in model and "</s>" not in model
    probs = np.exp(model.all_log_probs(["w1", "w2"]))
    assert probs.sum() == pytest.approx(1.0, abs=1e-4)
    assert model.predict(["w1", "w2"], 1)[0][0] == model.words[int(np.argmax(probs))]
    held = tmp_path / "held.txt"
    held.write_text("w1 qqzzx w0 w1\nzzqqx\n")
    got = hsw2v.score(model, str(held))  # its own conventions: unknown words dropped, no </s>
    known = [w for w in "w1 qqzzx w0 w1".split() if w in model]
    assert got["examples"] == len(known) and got["dropped"] == 2 and "oov" not in got
    want = -sum(model.log_prob(w, known[:i]) for i, w in enumerate(known)) / len(known)
    assert got["loss"] == pytest.approx(want, rel=1e-5)
    further = hsw2v.train(str(OLD / "tiny.txt"), init_model=model, epochs=1, progress=False)
    assert further.words == model.words and not further.vocab.markers
