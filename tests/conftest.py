"""Shared fixtures: small corpora written to tmp_path."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REPO = Path(__file__).resolve().parents[1]


def planted_corpus(groups: int = 4, size: int = 8, sentences: int = 1500, seed: int = 0) -> tuple[str, list[list[str]]]:
    """Text whose sentences each draw words from one group; returns (text, groups)."""
    rng = random.Random(seed)
    names = [[f"g{g}w{i}" for i in range(size)] for g in range(groups)]
    lines = []
    for _ in range(sentences):
        group = rng.choice(names)
        lines.append(" ".join(rng.choice(group) for _ in range(12)))
    return "\n".join(lines) + "\n", names


@pytest.fixture
def planted(tmp_path):
    text, names = planted_corpus()
    path = tmp_path / "planted.txt"
    path.write_text(text)
    return str(path), names


@pytest.fixture
def small_corpus(tmp_path):
    text, _ = planted_corpus(groups=3, size=5, sentences=200, seed=1)
    path = tmp_path / "small.txt"
    path.write_text(text)
    return str(path)
