"""The epochs' producer and workers (hsw2v.runs.epochs): each thread's own part of
the spool, and every block trained once."""
import numpy as np
import pytest

from hsw2v.counting.corpus import TokenSpool, count_words
from hsw2v.runs.checkpoint import Position
from hsw2v.runs.common import fresh_model
from hsw2v.runs.epochs import Epochs, part_blocks
from hsw2v.settings import TrainSettings
from hsw2v.trees.registry import TreeInputs, build_tree
from tests.helpers import planted_corpus


@pytest.fixture
def spooled(tmp_path):
    """A corpus of about 30 blocks, counted into a token spool."""
    text, _ = planted_corpus(groups=3, size=5, sentences=300, seed=2)
    path = tmp_path / "c.txt"
    path.write_text(text)
    with TokenSpool() as spool:
        counts = count_words(str(path), spool=spool, block_bytes=500)
        yield str(path), text, spool, counts


@pytest.mark.parametrize("n", [2, 3, 5])
def test_parts_take_turns_each_in_its_order(spooled, n):
    """part_blocks gives part t's k-th block before every part's (k+1)-th and after
    the k-th of the parts before t; the parts are contiguous runs of the spool's
    blocks, in order, covering them once."""
    _, _, spool, counts = spooled
    type_ids = counts.spool_ids(counts.type_ids(min_count=1))
    every = list(spool.blocks(type_ids))
    got = list(part_blocks(spool, type_ids, n))
    labels = [t for t, _, _ in got]
    rank = [labels[:i].count(t) for i, t in enumerate(labels)]  # k: the part's k-th block
    assert [(k, t) for k, t in zip(rank, labels)] == sorted(zip(rank, labels))
    assert len(set(labels)) == n and len(got) == len(every)
    by_part = [[ids for t, ids, _ in got if t == part] for part in range(n)]
    joined = [ids for part in by_part for ids in part]
    assert all(np.array_equal(a, b[0]) for a, b in zip(joined, every))


def test_threads_train_every_block_once(spooled):
    """Three threads on their parts (a queue's blocks taken by whichever thread is
    free) train each block once: every word counted, and each line's every word
    with another in the line is one CBOW example, each epoch."""
    path, text, spool, counts = spooled
    s = TrainSettings(arch="cbow", dim=8, epochs=2, threads=3, min_count=1, sample=0, window=2,
                      seed=1).resolved()
    vocab = counts.to_vocab(1)
    model = fresh_model(vocab, build_tree("huffman", TreeInputs(vocab.words, vocab.counts, s)), s)
    position = Position(vocab.total, exact=True)
    epochs = Epochs(path, model, s, position, spool, counts.spool_ids(counts.type_ids(min_count=1)),
                    None, None, None, None)
    assert epochs.parts
    epochs.run(False)
    assert position.words == 2 * vocab.total
    examples = sum(len(line.split()) for line in text.splitlines() if len(line.split()) > 1)
    assert epochs.losses.examples == [examples, examples]


NO_MORE_THREADS = '''
import sys, threading
real, started = threading.Thread.start, []
def start(self):  # a process limit (ulimit -u, a pids cgroup) reached after one thread
    if len(started) >= LIMIT:
        raise RuntimeError("can't start new thread")
    started.append(self)
    return real(self)
threading.Thread.start = start
sys.argv = ["hsw2v", *sys.argv[1:]]
from hsw2v.cli import main
main()
'''


@pytest.mark.parametrize("limit", [1, 2, 3, 5])  # (the reader, a writer's pool, training)
def test_a_process_limit_on_threads_is_one_line(tmp_path, small_corpus, limit):
    """Hostile round five, item 11, in a real process where no thread starts after
    the first ``limit`` (as under ``ulimit -u``): wherever that strikes (the
    reader, a writer's pool, the training threads, each of which owns a share),
    the run ends with one line naming --threads and leaves no output. (Counting,
    whose own thread counts too, goes on with the threads that started, and warns.)"""
    import subprocess
    import sys

    from tests.helpers import one_line_error

    script = NO_MORE_THREADS.replace("LIMIT", str(limit))
    done = subprocess.run([sys.executable, "-c", script, "train", small_corpus,
                           "--threads", "4", "--dim", "8", "--epochs", "1", "--min-count", "1",
                           "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    error = one_line_error(done)
    assert "can't start new thread" in error and error.endswith("lower --threads"), error
    assert not (tmp_path / "vectors.txt").exists() and not (tmp_path / "model.npz").exists()
