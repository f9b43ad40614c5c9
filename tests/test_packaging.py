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
