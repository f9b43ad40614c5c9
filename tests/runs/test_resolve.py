"""hsw2v.runs.resolve: a run's settings, resolved by one function for both engines
and the CLI's early check."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from hsw2v.errors import HSW2VError, HSW2VWarning
from hsw2v.runs.resolve import first_pass_settings, run_settings
from hsw2v.settings import TrainSettings
from hsw2v.training.kinds import model_kinds
from hsw2v.trees.registry import tree_builders


@pytest.mark.parametrize("arch", list(model_kinds))
def test_dask_trains_a_default_learned_tree_on_its_first_pass_tree(arch):
    """A kind whose default tree Dask does not build trains on that builder's
    first-pass tree there, with that tree's defaults (epochs, split), and says so
    once; the same settings resolve to the learned tree locally."""
    local = run_settings({"arch": arch}, "local")
    builder = tree_builders[local.tree]
    if builder.on_dask:
        assert run_settings({"arch": arch}, "dask") == local
        return
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        on_dask = run_settings({"arch": arch}, "dask")
    assert [type(w.message) for w in said] == [HSW2VWarning]
    assert "--engine dask" in str(said[0].message) or "engine='dask'" in str(said[0].message)
    assert on_dask.tree == builder.first_pass
    assert on_dask == TrainSettings(arch=arch, tree=builder.first_pass).resolved()


@pytest.mark.parametrize("tree", [k for k, b in tree_builders.items() if not b.on_dask])
def test_dask_refuses_a_tree_asked_for_that_it_cannot_build(tree):
    with pytest.raises(HSW2VError, match="is built locally"):
        run_settings({"tree": tree}, "dask")
    assert run_settings({"tree": tree}, "local").tree == tree


def test_every_learned_tree_names_a_first_pass_built_from_counts():
    """The first pass of a one-shot tree trains on a tree that needs nothing but
    the counts; its settings are the run's on that tree, at the tree's default
    epochs given by ``tree_epochs`` and the kind's own rate there."""
    learned = [k for k, b in tree_builders.items() if b.learns_from_model]
    assert learned
    for kind in learned:
        assert tree_builders[tree_builders[kind].first_pass].from_counts
    s = TrainSettings(arch="lbl", tree_epochs=2, window=7).resolved()
    first = first_pass_settings(s)
    plain = TrainSettings(arch="lbl", tree=tree_builders[s.tree].first_pass, epochs=2,
                          window=7).resolved()
    assert first == plain and first.alpha != s.alpha  # (LBL's rate differs on a learned tree)


@pytest.mark.newest_only
@pytest.mark.parametrize("arch", ["cbow", "skipgram"])
def test_a_learned_trees_first_pass_trains_without_subwords(arch, tmp_path):
    """With subwords, the first pass learns the words' own vectors (its n-gram
    settings at their defaults): a run at a negligible rate ends where a plain
    Huffman run of that pass ends, its n-gram rows where they started."""
    import hsw2v
    from tests.helpers import bundled_slice

    s = run_settings({"arch": arch, "tree": "semantic", "subwords": True, "minn": 2,
                      "buckets": 5000, "epochs": 1}, "local")
    first = first_pass_settings(s)
    assert not first.value("subwords") and first.value("minn") == 3
    corpus = bundled_slice(tmp_path / "c.txt", 20_000)
    common = {"arch": arch, "seed": 3, "threads": 1, "progress": False, "min_alpha": 0.0}
    plain = hsw2v.train(corpus, tree="huffman", epochs=first.epochs, alpha=first.alpha, **common)
    run = hsw2v.train(corpus, tree="semantic", subwords=True, minn=2, buckets=5000,
                      epochs=1, alpha=1e-9, **common)
    assert plain.ngram_vectors is None and run.tree.kind.startswith("semantic")
    np.testing.assert_allclose(run.vectors, plain.vectors, atol=1e-6)
    assert np.abs(run.ngram_vectors).max() <= 0.5 / run.dim


def test_grow_needs_a_model():
    with pytest.raises(HSW2VError, match="grow"):
        run_settings({}, "local", grow=True)


def test_the_cli_refuses_a_local_only_tree_on_dask_before_reading(tmp_path):
    """The CLI's early check is the engines' own: a corpus that does not exist is
    never opened, and no cluster starts."""
    result = subprocess.run([sys.executable, "-m", "hsw2v", "train", "missing.txt", "--engine",
                             "dask", "--tree", "semantic", "--workers", "1"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hsw2v: error: --engine dask builds"), lines
    assert list(tmp_path.iterdir()) == []
