"""The dependency floors CI tests at (.ci/floors.txt) are pyproject.toml's."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_ci_floors_are_the_declared_lower_bounds():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {}
    for spec in project["dependencies"] + project["optional-dependencies"]["test"]:
        m = re.fullmatch(r"([A-Za-z0-9_-]+)(\[[a-z,]+\])?>=([0-9.]+)", spec)
        assert m, f"{spec}: every dependency needs a >= floor"
        declared[m[1].lower()] = m[3]
    pinned = dict(re.fullmatch(r"([a-z0-9_-]+)==([0-9.]+)", line).groups()
                  for line in (REPO / ".ci" / "floors.txt").read_text().splitlines()
                  if line and not line.startswith("#"))
    assert pinned == declared


def test_every_install_hint_installs_what_it_names():
    """``hsw2v`` on PyPI is an unrelated project: the distribution has another name,
    and no hint in the package, the README or the docs asks pip for ``hsw2v[…]``."""
    name = re.search(r'^name = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.MULTILINE)
    assert name and name.group(1) == "hsw2v-trainer"
    texts = [REPO / "README.md", *(REPO / "hsw2v").rglob("*.py"), *(REPO / "docs").rglob("*.md")]
    wrong = [str(p) for p in texts if re.search(r"pip install '?hsw2v\b", p.read_text())]
    assert wrong == []


def test_the_wheel_carries_the_bundled_corpus(tmp_path):
    """A pip-only user gets the Quick start's corpus and the Google analogies that
    ``hsw2v evaluate`` scores by default, with their licences: the wheel holds the
    files themselves (the package's entries are links to data/ in a checkout), byte
    for byte."""
    import shutil
    import subprocess
    import zipfile

    source = tmp_path / "source"  # (building writes build/ beside pyproject.toml)
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for name in ("hsw2v", "data"):
        shutil.copytree(REPO / name, source / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path / "wheel"), str(source)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        corpus = z.read("hsw2v/datasets/enwiki-1m.txt.gz")
        notice = z.read("hsw2v/datasets/README.md").decode()
        analogies = z.read("hsw2v/datasets/questions-words.txt")
        licence = z.read("hsw2v/datasets/LICENSE-questions-words.txt").decode()
    assert corpus == (REPO / "data" / "enwiki-1m.txt.gz").read_bytes()
    assert "CC BY-SA 3.0" in notice
    assert analogies == (REPO / "data" / "questions-words.txt").read_bytes()
    assert analogies.count(b"\n: ") + analogies.startswith(b": ") == 14
    assert "Apache License, Version 2.0" in notice and "Copyright 2013 Google Inc." in notice
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in licence
    for page in ("gabrilovich.com/resources/data/wordsim353", "fh295.github.io/simlex"):
        assert page in notice  # the sets not bundled: where to get them
