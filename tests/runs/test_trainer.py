import numpy as np
import pytest

import hsw2v
from hsw2v.training.kinds import model_kinds


@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_planted_groups_are_neighbours(planted, arch):
    corpus, groups = planted
    model = hsw2v.train(corpus, arch=arch, min_count=1, dim=16, epochs=3, sample=0,
                        threads=2, seed=3, progress=False)
    group_of = {w: g for g, words in enumerate(groups) for w in words}
    hits = total = 0
    for word, group in group_of.items():
        for other, _ in model.most_similar(word, topn=3):
            hits += group_of[other] == group
            total += 1
    assert hits / total >= 0.95
    losses = model.epoch_loss
    # a uniform guess costs log V nats; knowing the group, log(group size) is the floor
    # for a fresh example (within a window the path has just seen the target, so the
    # reported loss can dip a little below it)
    assert losses[-1] < np.log(len(group_of)) - 0.5
    assert abs(losses[-1] - np.log(len(groups[0]))) < 0.3


def test_single_thread_is_deterministic(small_corpus):
    a = hsw2v.train(small_corpus, min_count=1, dim=8, epochs=1, threads=1, seed=5, progress=False)
    b = hsw2v.train(small_corpus, min_count=1, dim=8, epochs=1, threads=1, seed=5, progress=False)
    c = hsw2v.train(small_corpus, min_count=1, dim=8, epochs=1, threads=1, seed=6, progress=False)
    assert np.array_equal(a.vectors, b.vectors)
    assert not np.array_equal(a.vectors, c.vectors)


@pytest.mark.parametrize("arch", sorted(model_kinds))
def test_spooled_tokens_train_as_the_text(small_corpus, arch):
    """Epochs read from the counting pass's token spool train exactly as epochs
    that read and encode the text again."""
    kw = {"arch": arch, "min_count": 2, "dim": 8, "epochs": 2, "threads": 1, "seed": 5,
          "progress": False}
    spooled = hsw2v.train(small_corpus, **kw)
    text = hsw2v.train(small_corpus, spool=False, **kw)
    assert np.array_equal(spooled.vectors, text.vectors)
    assert np.array_equal(spooled.node_vectors, text.node_vectors)
    assert spooled.epoch_loss == text.epoch_loss
