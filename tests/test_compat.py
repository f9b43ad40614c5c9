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
