"""hsw2v.training.kinds: the model kinds' registry, their own matrices, defaults and checks."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

from hsw2v.errors import HSW2VError
from hsw2v.settings import TrainSettings
from hsw2v.system.memory import total_memory
from hsw2v.training.kinds import kind_of_config, model_kind, model_kinds


def test_a_kind_is_found_by_its_name_and_a_wrong_name_lists_them():
    for name, kind in model_kinds.items():
        assert model_kind(name) is kind and kind.name == name
    with pytest.raises(HSW2VError) as e:
        model_kind("sg")
    assert str(e.value) == "arch must be one of cbow, skipgram, lbl, got 'sg'"
    assert e.value.for_command_line() == "--arch must be one of cbow, skipgram, lbl, got 'sg'"


def test_each_config_type_selects_its_own_kind():
    """A config's type names its kind (the kernels pick a kind's steps by it): each
    kind's ``config_of`` gives a type of its own, and any other type is refused."""
    types = set()
    for name, kind in model_kinds.items():
        config = kind.config_of(TrainSettings(arch=name, dim=4, threads=1).resolved())
        assert kind_of_config(type(config)) is kind
        assert {"window", "sync_every", "fast_rows"} <= set(config._fields)
        types.add(type(config))
    assert len(types) == len(model_kinds)

    class Stranger(NamedTuple):
        window: int

    with pytest.raises(TypeError, match="^Stranger is no model kind's config$"):
        kind_of_config(Stranger)


@pytest.mark.parametrize("n_words", [3, 1000])
def test_lbls_own_matrices_start_as_the_identity_and_a_small_start_row(n_words):
    """LBL's position weights start as c_i = 1 (diagonal: a row of ones a position)
    or C_i = I (full: N identity blocks, stacked), its start row uniform in ±0.5/D
    as word2vec.c starts word vectors and the same for the same seed; none of them
    depends on the vocabulary's size (so a grown model keeps them). CBOW and
    skip-gram own no matrix."""
    dim, window = 6, 4
    for name in ("cbow", "skipgram"):
        s = TrainSettings(arch=name, dim=dim, threads=1).resolved()
        assert model_kinds[name].extra_weights(n_words, dim, s) == {}
    lbl = model_kinds["lbl"]
    starts = []
    for weights, positions in (("diagonal", np.ones((window, dim))),
                               ("full", np.vstack([np.eye(dim)] * window))):
        for seed in (1, 1, 2):
            s = TrainSettings(arch="lbl", dim=dim, window=window, position_weights=weights,
                              seed=seed, threads=1).resolved()
            extra = lbl.extra_weights(n_words, dim, s)
            assert list(extra) == ["positions", "start"]
            for m in extra.values():
                assert m.dtype == np.float32 and m.flags.c_contiguous
            assert np.array_equal(extra["positions"], positions)
            start = extra["start"]
            assert start.shape == (1, dim) and np.all(np.abs(start) <= 0.5 / dim)
            starts.append(start)
    assert np.array_equal(starts[0], starts[1]) and not np.array_equal(starts[0], starts[2])
    assert np.array_equal(starts[0], starts[3])  # (the start row ignores position_weights)


@pytest.mark.parametrize(("arch", "given", "want"), [
    ("cbow", {}, {"tree": "semantic", "split": "adaptive", "epochs": 3, "tree_epochs": 1,
                  "alpha": 0.05, "window": 5, "node_bias": False}),
    ("cbow", {"tree": "huffman"}, {"split": "balanced", "epochs": 5, "alpha": 0.05}),
    ("skipgram", {}, {"tree": "huffman", "split": "balanced", "epochs": 5, "alpha": 0.025,
                      "tree_epochs": None, "window": 5}),
    ("skipgram", {"tree": "semantic"}, {"split": "balanced", "epochs": 5, "tree_epochs": 5}),
    ("lbl", {}, {"tree": "semantic", "split": "adaptive", "epochs": 2, "tree_epochs": 1,
                 "alpha": 0.025, "window": 16, "sample": 0.0, "node_bias": True}),
    ("lbl", {"tree": "huffman"}, {"split": "balanced", "epochs": 3, "alpha": 0.05}),
    ("lbl", {"position_weights": "full"}, {"alpha": 0.01}),
    ("lbl", {"tree": "huffman", "position_weights": "full"}, {"alpha": 0.01, "epochs": 3}),
    ("lbl", {"tree": "huffman", "alpha": 0.2, "epochs": 7, "window": 2},
     {"alpha": 0.2, "epochs": 7, "window": 2}),
])
def test_each_kind_fills_in_its_own_defaults(arch, given, want):
    """The settings left unset take the kind's defaults, some depending on the tree
    (learned in the run or not) and LBL's position weights; a value given is kept.
    The expected values are written out here (word2vec.c's 0.05 and 0.025; the
    trees guide's epochs; LBL's 0.01 for full D×D steps)."""
    s = TrainSettings(arch=arch, dim=4, threads=1, **given).resolved()
    assert {name: getattr(s, name) for name in want} == want


def test_lbl_refuses_no_node_bias_and_full_matrices_past_half_the_memory():
    """LBL always trains node biases; its full position matrices (window · dim² float32)
    may take at most half of the memory this process may use: a window one word
    wider than fits is refused with both sizes in GiB, and diagonal weights, a
    D-vector a position, are never refused for their size."""
    check = model_kinds["lbl"].check
    s = TrainSettings(arch="lbl", dim=4, threads=1).resolved()
    assert check(s) is None
    assert str(HSW2VError(check(dataclasses.replace(s, node_bias=False)))) == (
        "arch='lbl' always trains node biases; drop node_bias=False")
    most, dim = total_memory() // 2, 4096
    fits = most // (4 * dim * dim)
    assert fits >= 1
    full = dataclasses.replace(s, dim=dim, position_weights="full")
    assert check(dataclasses.replace(full, window=fits)) is None
    size = (fits + 1) * dim * dim * 4
    assert size > most
    problem = str(HSW2VError(check(dataclasses.replace(full, window=fits + 1))))
    assert problem.startswith(f"position_weights='full' at dim {dim} and window {fits + 1} "
                              f"needs {size / 2**30:.1f} GiB of position matrices")
    assert f"({most / 2**30:.1f} GiB)" in problem
    assert check(dataclasses.replace(full, window=fits + 1, position_weights="diagonal")) is None
