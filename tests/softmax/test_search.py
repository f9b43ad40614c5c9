"""The exact best-first search over the tree (:mod:`hsw2v.softmax.search`) when
words have several codes: against the brute force and the independent numpy
reference, on models trained with ADAPTIVE(ε) trees."""
import numpy as np
import pytest

from hsw2v.softmax.search import best_first_codes, search_buffers
from hsw2v.training.kinds import model_kinds

from tests.helpers import codes_model as trained_codes_model
from tests.references.softmax import reference_log_probs


@pytest.fixture(scope="module", params=sorted(model_kinds))
def codes_model(request):
    m = trained_codes_model(request.param)
    assert m.tree.codes_per_word.max() > 1 and m.tree.codes_per_word.mean() > 1.2
    return m


def search(m, context, topn, max_codes):
    t, H = m.tree, m.context_matrix(context)
    words, logp = np.empty(topn, np.int64), np.empty(topn)
    found, expanded = best_first_codes(H, m.node_vectors, t.children, t.root, t.flat, max_codes,
                                       topn, words, logp,
                                       search_buffers(t.n_leaves, t.n_words, len(H)))
    return words[:found].tolist(), logp[:found], expanded


def test_search_is_exact_on_60_random_contexts(codes_model):
    """predict and predict_many return the brute force's top 10 words with their
    summed probabilities, on 60 random contexts of 1–5 words. The stopping rule is
    what makes it exact: stopping as with one code a word is wrong for some of the
    same contexts. The search visits far fewer nodes than the brute force."""
    m = codes_model
    rng = np.random.default_rng(11)
    contexts = [[m.words[i] for i in rng.integers(0, len(m.words), size=rng.integers(1, 6))]
                for _ in range(60)]
    batch = m.predict_many(contexts, 10)
    naive_wrong, expanded = 0, []
    for context, got_many in zip(contexts, batch):
        ref = reference_log_probs(m, context)
        top = np.argsort(-ref, kind="stable")[:10]
        got = m.predict(context, 10)
        assert [w for w, _ in got] == [m.words[i] for i in top]
        np.testing.assert_allclose([p for _, p in got], np.exp(ref[top]), rtol=1e-4)
        assert got_many == got
        n = search(m, context, 10, int(m.tree.codes_per_word.max()))[2]
        expanded.append(n)
        naive_wrong += search(m, context, 10, 1)[0] != top.tolist()
    assert naive_wrong > 0
    assert np.median(expanded) < (m.tree.n_leaves - 1) / 2
