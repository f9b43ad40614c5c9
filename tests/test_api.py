"""The Python API takes what a notebook user passes, and says which parameter is
wrong otherwise (hostile round four, items 9, 10, 11, 17 and 18): paths as
``pathlib.Path``, numpy integers, size strings and model files' paths; a wrong
type is an HSW2VError naming the parameter, never a bare TypeError; the error's
``repr`` and ``args`` are clean text."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import hsw2v
from hsw2v.errors import HSW2VError, param

from tests.helpers import planted_corpus

FAST = {"dim": 8, "epochs": 1, "min_count": 1, "threads": 1, "progress": False}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api") / "c.txt"
    path.write_text(planted_corpus(groups=3, size=5, sentences=300, seed=2)[0])
    return path


@pytest.fixture(scope="module")
def model_file(corpus) -> Path:
    path = corpus.parent / "m.npz"
    hsw2v.train(str(corpus), **FAST).save(str(path))
    return path


def test_paths_are_taken_as_pathlib_paths(corpus, model_file, tmp_path):
    by_str = hsw2v.train(str(corpus), **FAST)
    for given in (corpus, [corpus], (corpus,)):
        m = hsw2v.train(given, **FAST)
        assert m.words == by_str.words and np.array_equal(m.vectors, by_str.vectors)
    assert hsw2v.score(by_str, corpus) == hsw2v.score(by_str, str(corpus))
    assert hsw2v.build_vocab(corpus)[1] == hsw2v.build_vocab(str(corpus))[1]
    by_str.save_vectors(str(tmp_path / "v.txt"))
    assert hsw2v.read_vectors(tmp_path / "v.txt").words == by_str.words
    checkpointed = hsw2v.train(corpus, checkpoint=tmp_path / "ck.npz", **FAST)
    assert (tmp_path / "ck.npz").exists() and np.array_equal(checkpointed.vectors, by_str.vectors)


@pytest.mark.parametrize("name", ["init_model", "tree_from"])
def test_a_model_parameter_takes_the_models_file(corpus, model_file, name):
    extra = {"tree": "semantic"} if name == "tree_from" else {}
    by_model = hsw2v.train(corpus, **{name: hsw2v.load_model(str(model_file))}, **extra, **FAST)
    for given in (str(model_file), model_file):
        m = hsw2v.train(corpus, **{name: given}, **extra, **FAST)
        assert np.array_equal(m.vectors, by_model.vectors)


def test_numbers_as_numpy_and_sizes_as_strings(corpus):
    plain = hsw2v.train(corpus, seed=3, **FAST)
    assert np.array_equal(hsw2v.train(corpus, seed=np.int64(3), **FAST).vectors, plain.vectors)
    assert np.array_equal(hsw2v.train(corpus, seed=3, **{**FAST, "dim": np.int32(8)}).vectors,
                          plain.vectors)
    assert hsw2v.train(corpus, seed=np.uint64(2**63), **FAST).settings.seed == 2**63
    assert hsw2v.train(corpus, count_memory="64M", **FAST).words == plain.words


@pytest.mark.parametrize(("arguments", "named"), [
    ({"dim": "100"}, "dim"), ({"epochs": 1.5}, "epochs"), ({"threads": 1.0}, "threads"),
    ({"dim": True}, "dim"), ({"alpha": "0.1"}, "alpha"), ({"cbow_mean": 1}, "cbow_mean"),
    ({"tree": 5}, "tree"), ({"arch": None}, "arch"), ({"init_model": 5}, "init_model"),
    ({"tree_from": [1]}, "tree_from"), ({"checkpoint": 3}, "checkpoint"),
    ({"seed": np.float64(2.0)}, "seed"), ({"count_memory": "lots"}, "count_memory"),
])
def test_a_wrong_type_names_its_parameter(corpus, arguments, named):
    with pytest.raises(HSW2VError) as caught:
        hsw2v.train(corpus, **{**FAST, **arguments})
    assert str(caught.value).startswith(named)


def test_a_string_is_not_a_list_of_contexts(corpus):
    m = hsw2v.train(corpus, **FAST)
    with pytest.raises(HSW2VError, match="contexts is a sequence of contexts"):
        m.predict_many("g0w1")
    assert len(m.predict_many(["g0w1"], topn=2)) == 1  # (a list of one-word contexts)


def test_most_similar_names_topn(corpus):
    m = hsw2v.train(corpus, **FAST)
    for target in (m, m.keyed_vectors()):
        with pytest.raises(HSW2VError, match=r"^topn must be positive, got 0$"):
            target.most_similar("g0w1", topn=0)


def test_the_errors_text_is_clean_for_python_and_options_for_the_shell():
    e = HSW2VError(f"{param('tree_from')} goes with {param('tree', 'semantic')}")
    for text in (str(e), e.args[0], repr(e)):
        assert "\x1f" not in text and "\x1e" not in text
    assert e.args[0] == "tree_from goes with tree='semantic'"
    assert repr(e) == "HSW2VError(\"tree_from goes with tree='semantic'\")"
    assert e.for_command_line() == "--tree-from goes with --tree semantic"
    again = pickle.loads(pickle.dumps(e))  # (as a Dask worker's error reaches the client)
    assert again.for_command_line() == e.for_command_line() and str(again) == str(e)
