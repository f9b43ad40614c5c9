"""hsw2v.training.state: a thread's buffers, each on cache lines of its own."""
import numpy as np

from hsw2v.training.state import LINE, new_state


def test_each_buffer_is_its_own_and_aligned_and_the_ring_starts_empty():
    hot = np.arange(12, dtype=np.float32).reshape(3, 4)
    words = np.ones((2, 4), np.float32)
    states = [new_state(s, 10, 3, 5, hot, (), words, subwords=True) for s in (1, 2)]
    spans = []
    for st in states:
        assert st.ring.shape == (2, 2 * 3 + 2, 4) and st.ring_pos.tolist() == [-1] * 8
        assert st.ring_word.shape == (8,) and st.sentence.shape == (10,)
        assert np.array_equal(st.hot_rows, hot) and st.hot_rows is not hot
        for a in (st.rng, st.sentence, st.ctx, st.rows, st.ring, st.ring_pos, st.ring_word,
                  st.hot_rows, st.word_rows):
            assert a.ctypes.data % LINE == 0 and a.flags.c_contiguous
            spans.append((a.ctypes.data, a.ctypes.data + a.nbytes))
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))  # no overlap
    assert states[0].rng[0] == 1 and states[1].rng[0] == 2


def test_without_subwords_the_ring_has_no_slots():
    st = new_state(1, 4, 2, 3, np.zeros((0, 4), np.float32))
    assert st.ring.shape[1] == 0 and len(st.ring_pos) == 0 and len(st.ring_word) == 0
