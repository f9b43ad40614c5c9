"""hsw2v.model.fasttext_format: a model written as fastText's .bin, read by the real
fastText and gensim packages."""
from pathlib import Path
import struct

import fasttext
import numpy as np
import pytest
from gensim.models.fasttext import load_facebook_vectors

import hsw2v
from hsw2v.model.fasttext_format import MAGIC, VERSION

from tests.helpers import bundled_slice, run_hsw2v

UNSEEN = ["unseenword", "kingdomz", "überlong", "q", "日本語", "xyzzyplugh"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first 100,000 words of the bundled corpus."""
    return Path(bundled_slice(tmp_path_factory.mktemp("corpus") / "c.txt", 100_000))


@pytest.fixture(scope="module", params=[("cbow",), ("skipgram", "--tree", "huffman"),
                                        ("cbow", "--no-subwords")])
def written(request, corpus):
    """A model trained by ``hsw2v train … --format fasttext`` (CBOW on its default
    learned tree, skip-gram on a Huffman tree, and one without subwords), with its
    hsw2v model file beside it."""
    arch, *extra = request.param
    subwords = [] if "--no-subwords" in extra else ["--subwords", "--buckets", "20000"]
    where = corpus.parent
    name = "-".join(request.param)
    result = run_hsw2v(where, "train", str(corpus), "--arch", arch, *extra, *subwords,
                       "--dim", "16", "--epochs", "1", "--threads", "2", "--quiet",
                       "--format", "fasttext", "-o", f"{name}.bin", "--save-model",
                       f"{name}.npz")
    assert result.returncode == 0, result.stderr
    return str(where / f"{name}.bin"), hsw2v.load_model(str(where / f"{name}.npz"))


def test_fasttext_reads_the_same_vectors(written):
    """``fasttext.load_model(path).get_word_vector(w)`` is hsw2v's ``model[w]``
    within 1e-5, for vocabulary words and, with subwords, unseen words."""
    path, model = written
    ft = fasttext.load_model(path)
    assert ft.words == model.words
    assert ft.get_dimension() == model.dim
    for word in model.words[:300] + model.words[-50:]:
        np.testing.assert_allclose(ft.get_word_vector(word), model[word], atol=1e-5)
    for word in UNSEEN:
        if model.ngram_vectors is None:
            assert not ft.get_word_vector(word).any()  # (no n-grams: fastText's zero vector)
        else:
            np.testing.assert_allclose(ft.get_word_vector(word), model[word], atol=1e-5)
    args = ft.f.getArgs()
    assert (args.minn, args.maxn, args.bucket) == ((3, 6, 20000) if model.ngram_vectors
                                                   is not None else (0, 0, 0))


def test_gensim_reads_the_same_vectors(written):
    path, model = written
    kv = load_facebook_vectors(path)
    assert list(kv.index_to_key) == model.words
    np.testing.assert_allclose(kv.vectors, model.word_vectors, atol=1e-5)
    if model.ngram_vectors is not None:
        for word in UNSEEN:
            np.testing.assert_allclose(kv[word], model[word], atol=1e-5)


def test_the_header_and_the_counts(written):
    """fastText's header (magic, version 12), hierarchical softmax and the model
    kind in its arguments, and each word with its count."""
    path, model = written
    with open(path, "rb") as f:
        head = f.read(8 + 12 * 4 + 8 + 4 * 3 + 8 + 8)
    magic, version, dim, ws, epoch, min_count, neg, ngrams, loss, kind = struct.unpack(
        "<10i", head[:40])
    assert (magic, version, dim, ws, loss) == (MAGIC, VERSION, model.dim, 5, 1)
    assert kind == (2 if model.arch == "skipgram" else 1)
    size, nwords, nlabels, ntokens, prune = struct.unpack("<iiiqq", head[8 + 48 + 8:])
    assert (size, nwords, nlabels, prune) == (len(model.vocab), len(model.vocab), 0, -1)
    assert ntokens == model.vocab.counts.sum()
    assert fasttext.load_model(path).get_words(include_freq=True)[1].tolist() == \
        model.vocab.counts.tolist()
