"""TrainSettings.resolved(): every default filled in and every range checked at
both ends, against the limits written out here."""
from __future__ import annotations

import math
import re
import os

import pytest

from hsw2v.errors import HSW2VError
from hsw2v.settings import TrainSettings

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

# option, lowest and highest accepted value
RANGES = [
    ("dim", 1, 10_000),
    ("window", 1, 1_000),
    ("min_count", 1, 2**62),
    ("max_vocab", 2, 2**31 - 1),
    ("epochs", 1, 100_000),
    ("threads", 1, max(4 * CORES, 16)),
    ("seed", 0, 2**64 - 1),
]


@pytest.mark.parametrize(("name", "low", "high"), RANGES)
def test_integer_ranges_hold_at_both_ends(name, low, high):
    for ok in (low, high):
        assert getattr(TrainSettings(**{name: ok}).resolved(), name) == ok
    flag = "--" + name.replace("_", "-")
    for bad in (low - 1, high + 1):
        with pytest.raises(HSW2VError, match=f"^{name} must lie in ") as e:
            TrainSettings(**{name: bad}).resolved()
        assert str(e.value).endswith(f"got {bad}")
        assert e.value.for_command_line() == str(e.value).replace(name, flag, 1)
        if name != "seed":
            assert f"must lie in {low}..{high}, " in str(e.value)


@pytest.mark.parametrize(("name", "ok", "bad", "message"), [
    ("sample", [0.0, 1e-5, 1.0], [-1e-12, 1.5, 1e308, math.inf, math.nan],
     r"sample must lie in 0\.\.1 \(a share of the corpus; word2vec\.c's useful range is 1e-5 to 1e-3\)"),
    ("alpha", [1e-4, 1.0], [0.0, -0.1, math.inf, math.nan], "alpha must be positive"),
])
def test_rates(name, ok, bad, message):
    for value in ok:
        assert getattr(TrainSettings(**{name: value}).resolved(), name) == value
    for value in bad:
        with pytest.raises(HSW2VError, match=f"^{message}, got {re.escape(str(value))}$"):
            TrainSettings(**{name: value}).resolved()


def test_min_alpha_lies_between_zero_and_alpha():
    assert TrainSettings(alpha=0.01, min_alpha=0.01).resolved().min_alpha == 0.01
    assert TrainSettings(alpha=0.01, min_alpha=0.0).resolved().min_alpha == 0.0
    for bad in (0.0101, -1e-9):
        with pytest.raises(HSW2VError, match="^min_alpha must lie between 0 and alpha$") as e:
            TrainSettings(alpha=0.01, min_alpha=bad).resolved()
        assert e.value.for_command_line() == "--min-alpha must lie between 0 and --alpha"


def test_defaults_filled_in_as_word2vec_c_does():
    """word2vec.c starts CBOW at 0.05 and skip-gram at 0.025; threads default to
    the cores this process may use; a given alpha is kept."""
    assert TrainSettings(arch="cbow").resolved().alpha == 0.05
    assert TrainSettings(arch="skipgram").resolved().alpha == 0.025
    assert TrainSettings(arch="skipgram", alpha=0.3).resolved().alpha == 0.3
    assert TrainSettings().resolved().threads == CORES
    assert TrainSettings().alpha is None  # resolved() returns a copy


@pytest.mark.parametrize(("name", "value", "choices"), [
    ("arch", "sg", "cbow, skipgram, lbl"),
    ("tree", "oak", "huffman, balanced, random, fano, classes, semantic, wordnet"),
    ("split", "thirds", "balanced, adaptive"),
])
def test_choices_are_named(name, value, choices):
    with pytest.raises(HSW2VError, match=f"^{name} must be one of {choices}, got '{value}'$"):
        TrainSettings(**{name: value}).resolved()


def test_record_must_be_an_object():
    with pytest.raises(HSW2VError, match="^model settings must be a JSON object$"):
        TrainSettings.from_record([1, 2])
