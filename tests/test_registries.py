"""The two extension points, model kinds and tree builders, are registries: the CLI
offers what they hold, no code outside them compares a kind's or a tree's name, and
a kind's own matrices travel through the weights, the model file, checkpoints and
Dask's rounds without any of those naming it."""
from __future__ import annotations

import ast
import dataclasses

import numpy as np
import pytest

import hsw2v
from hsw2v.cli import cli
from hsw2v.errors import HSW2VError
from hsw2v.runs.checkpoint import load_checkpoint
from hsw2v.training import kinds
from hsw2v.trees.registry import tree_builders

from tests.helpers import REPO

CORPUS = REPO / "tests" / "data" / "before-subpackages" / "tiny.txt"
REGISTRIES = {REPO / "hsw2v" / "training" / "kinds.py", REPO / "hsw2v" / "trees" / "registry.py"}


def test_the_cli_offers_what_the_registries_hold():
    params = {p.name: p for p in cli.commands["train"].params}
    assert list(params["arch"].type.choices) == list(kinds.model_kinds)
    assert list(params["tree"].type.choices) == list(tree_builders)


def test_no_code_outside_the_registries_compares_a_kind_name():
    """No ``x == "skipgram"``, ``x != "semantic"`` or ``x in ("cbow", ...)`` in the
    package outside the two registries."""
    names = set(kinds.model_kinds) | set(tree_builders)
    found = []
    for path in (REPO / "hsw2v").rglob("*.py"):
        if path in REGISTRIES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                consts = [c for c in ast.walk(node) if isinstance(c, ast.Constant)]
                hits = [c.value for c in consts if c.value in names]
                if hits:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} compares {hits}")
    assert not found, found


@pytest.fixture
def kind_with_a_matrix(monkeypatch):
    """A kind that trains as CBOW and also owns a 3 × dim matrix ``gate``."""
    toy = dataclasses.replace(
        kinds.model_kinds["cbow"], name="gated", matrices=lambda n_words, dim, s: {"gate": (3, dim)},
        initial=lambda name, shape, s: np.full(shape, 0.5, dtype=np.float32))
    monkeypatch.setitem(kinds.model_kinds, "gated", toy)
    return toy


@pytest.mark.newest_only
def test_a_kinds_own_matrix_reaches_the_model_file_and_checkpoints(kind_with_a_matrix, tmp_path):
    m = hsw2v.train(str(CORPUS), arch="gated", dim=8, epochs=2, min_count=1, threads=1,
                    progress=False, checkpoint=str(tmp_path / "ck.npz"))
    assert list(m.extra) == ["gate"] and m.extra["gate"].shape == (3, 8)
    assert np.all(m.extra["gate"] == 0.5)  # its starting value (CBOW's steps leave it)
    assert m.settings.alpha == kinds.model_kinds["cbow"].alpha  # the kind's default
    m.extra["gate"][1, 2] = 7.0
    m.save(str(tmp_path / "m.npz"))
    back = hsw2v.load_model(str(tmp_path / "m.npz"))
    assert back.arch == "gated" and np.array_equal(back.extra["gate"], m.extra["gate"])
    ck, _ = load_checkpoint(str(tmp_path / "ck.npz"))
    assert np.all(ck.extra["gate"] == 0.5)
    bad = dataclasses.replace(m, extra={"gate": np.zeros((2, 8), np.float32)})
    bad.save(str(tmp_path / "bad.npz"))
    with pytest.raises(HSW2VError, match=r"corrupt model \(weights_gate has shape \(2, 8\), not \(3, 8\)\)"):
        hsw2v.load_model(str(tmp_path / "bad.npz"))
    missing = dataclasses.replace(m, extra={})
    missing.save(str(tmp_path / "missing.npz"))
    with pytest.raises(HSW2VError, match=r"weights_gate has shape None"):
        hsw2v.load_model(str(tmp_path / "missing.npz"))
    stray = dataclasses.replace(m, settings=dataclasses.replace(m.settings, arch="cbow"))
    stray.save(str(tmp_path / "stray.npz"))
    with pytest.raises(HSW2VError, match="weights_gate: cbow has no such matrix"):
        hsw2v.load_model(str(tmp_path / "stray.npz"))


def test_dask_rounds_move_a_kinds_matrix_by_the_replicas_mean_change():
    """Two replicas' changes of a kind's matrix combine into their sum, and the
    global matrix moves by their mean (numpy reference)."""
    from hsw2v.distributed import rounds

    rng = np.random.default_rng(5)
    none = (np.empty(0, np.int32), np.empty((0, 4), np.int8), np.empty(0, np.float32))
    moves = [rng.normal(size=(3, 4)).astype(np.float32) for _ in range(2)]
    a, b = (rounds.Change(*none, *none, 10, 1.0, 5, extra=(mv,)) for mv in moves)
    both = rounds.combine(a, b)
    assert both.replicas == 2 and np.array_equal(both.extra[0], moves[0] + moves[1])
    start = rng.normal(size=(3, 4)).astype(np.float32)
    empty = np.zeros((0, 4), np.float32)
    anchor = rounds.Anchor(0, empty, empty, (start.copy(),))
    job = rounds.Job("t", None, None, hsw2v.TrainSettings(threads=1), 1,
                     (np.zeros(0), np.zeros(0)))
    held = rounds.anchor_at(job, anchor, [[both]])
    np.testing.assert_allclose(held.extra[0], start + (moves[0] + moves[1]) / 2, rtol=1e-6)
    assert np.array_equal(anchor.extra[0], start)  # the anchor itself is left as it was


TOY_KIND = """
import dataclasses, json, sys
from hsw2v.declared import Setting
from hsw2v.training.kinds import model_kinds

cbow = model_kinds["cbow"]
model_kinds["toy"] = dataclasses.replace(  # CBOW's steps under a name and a setting of its own
    cbow, name="toy", help="toy: CBOW with a scale of its own.", settings=(*cbow.settings, Setting(
        "toy_scale", 1.0, "toy: a scale of its own.",
        check=lambda v: None if v > 0 else f"toy_scale must be positive, got {v}")))
import hsw2v
from hsw2v.cli import main

mode = sys.argv[1]
if mode == "cli":
    sys.argv = ["hsw2v", *sys.argv[2:]]
    main()
corpus, out = sys.argv[2], sys.argv[3]
if mode == "api":
    m = hsw2v.train(corpus, arch="toy", toy_scale=2.5, dim=8, epochs=1, min_count=1,
                    threads=1, progress=False)
    m.save(out)
    again = hsw2v.load_model(out)
    print(json.dumps({"arch": again.settings.arch, "extra": again.settings.extra,
                      "value": again.settings.value("toy_scale")}))
if mode == "refused":
    for arch, scale in (("cbow", 2.5), ("toy", -1.0)):
        try:
            hsw2v.train(corpus, arch=arch, toy_scale=scale, dim=8, epochs=1, min_count=1,
                        progress=False)
        except hsw2v.HSW2VError as e:
            print(e)
"""


def test_a_kind_registered_elsewhere_brings_its_own_setting(tmp_path):
    """A toy kind registered by a script, with a setting of its own, and nothing
    edited in settings.py, cli.py or api.py: the setting is an option of `hsw2v
    train --help`, `hsw2v.train` takes it, the model file keeps it, and with another
    kind (on the command line too) or a bad value it is refused by the one rule."""
    import subprocess
    import sys

    script = tmp_path / "toy.py"
    script.write_text(TOY_KIND)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True,
                              text=True, timeout=600, check=False, cwd=tmp_path)

    shown = run("cli", "train", "--help")
    assert shown.returncode == 0, shown.stderr
    flat = " ".join(shown.stdout.split())
    assert "--toy-scale" in flat and "toy: a scale of its own. [1.0]" in flat and "toy" in flat
    kept = run("api", str(CORPUS), str(tmp_path / "toy.npz"))
    assert kept.returncode == 0, kept.stderr
    import json

    assert json.loads(kept.stdout) == {"arch": "toy", "extra": {"toy_scale": 2.5}, "value": 2.5}
    refused = run("refused", str(CORPUS), "-").stdout.splitlines()
    assert refused == ["toy_scale goes with arch='toy'", "toy_scale must be positive, got -1.0"]
    cli_refused = run("cli", "train", str(CORPUS), "--arch", "cbow", "--toy-scale", "3",
                      "-o", "v.txt", "--quiet")
    assert cli_refused.returncode != 0
    assert cli_refused.stderr.strip() == "hsw2v: error: --toy-scale goes with --arch toy"
    assert not (tmp_path / "v.txt").exists()
