"""Vocabulary: words with counts, most frequent first, and word2vec.c's vocab file."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..errors import HSW2VError
from ..system.files import atomic_write, check_regular_file


def pack_words(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Words as their concatenated UTF-8 bytes and the offsets where each starts (V+1)."""
    encoded = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(w) for w in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


UNKNOWN = "<unk>"
"""A language model's word for every word outside its vocabulary (KenLM's, SRILM's)."""
SENTENCE_END = "</s>"
"""A language model's last token of every line, predicted like a word."""


class Vocab:
    """Words in index order (count descending, first occurrence breaking ties).

    With ``markers`` (a language model's vocabulary, see :meth:`with_markers`), it
    holds :data:`UNKNOWN`, which every word outside it becomes, and
    :data:`SENTENCE_END`, which ends every line; their ids are :attr:`unknown_id`
    and :attr:`end_id` (-1 without markers).
    """

    def __init__(self, words: Sequence[str], counts: Sequence[int] | np.ndarray,
                 markers: bool = False):
        self.words: list[str] = list(words)
        self.counts = np.asarray(counts, dtype=np.int64)
        if len(self.words) != len(self.counts):
            raise HSW2VError("vocab: words and counts differ in length")
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            raise HSW2VError("vocab: a word appears twice")
        self.markers = markers
        if markers and not (UNKNOWN in self.index and SENTENCE_END in self.index):
            raise HSW2VError(f"vocab: a language model's vocabulary holds {UNKNOWN} and {SENTENCE_END}")

    def __repr__(self) -> str:
        return f"Vocab<words={len(self.words)}, tokens={int(self.counts.sum())}>"

    @property
    def unknown_id(self) -> int:
        """The id of :data:`UNKNOWN`, or -1 without markers."""
        return self.index[UNKNOWN] if self.markers else -1

    @property
    def end_id(self) -> int:
        """The id of :data:`SENTENCE_END`, or -1 without markers."""
        return self.index[SENTENCE_END] if self.markers else -1

    def with_markers(self, unknown: int, lines: int) -> tuple[Vocab, np.ndarray]:
        """This vocabulary with :data:`UNKNOWN` seen ``unknown`` times and
        :data:`SENTENCE_END` ``lines`` times (added to the counts of those words if
        the text holds them; each at least once, as a count must be positive), in
        count order; and each old word's new id."""
        counts = self.counts.copy()
        words = list(self.words)
        for word, extra in ((UNKNOWN, max(unknown, 1)), (SENTENCE_END, max(lines, 1))):
            if word in self.index:
                counts[self.index[word]] += extra
            else:
                words.append(word)
                counts = np.append(counts, np.int64(extra))
        order = np.argsort(-counts, kind="stable")
        new_id = np.empty(len(words), dtype=np.int32)
        new_id[order] = np.arange(len(words), dtype=np.int32)
        return Vocab([words[i] for i in order], counts[order], markers=True), new_id[:len(self)]

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    @property
    def total(self) -> int:
        """Tokens of the corpus that are in the vocabulary."""
        return int(self.counts.sum())

    @classmethod
    def from_counts(
        cls, counts: Counter | dict, min_count: int = 5, max_vocab: int | None = None
    ) -> Vocab:
        """Keep words with count ≥ min_count, the max_vocab most frequent of them."""
        items = [(w, c) for w, c in counts.items() if c >= min_count]
        items.sort(key=lambda wc: -wc[1])  # stable: first occurrence breaks ties
        if max_vocab is not None:
            items = items[:max_vocab]
        words = [w.decode("utf-8") if isinstance(w, bytes) else w for w, _ in items]
        return cls(words, [c for _, c in items])

    def pruned(self, min_count: int = 5, max_vocab: int | None = None) -> Vocab:
        """This vocabulary with min_count and max_vocab applied (its markers kept)."""
        if not self.markers:
            return Vocab.from_counts(dict(zip(self.words, self.counts.tolist())), min_count, max_vocab)
        marks = {UNKNOWN, SENTENCE_END}
        kept = Vocab.from_counts({w: c for w, c in zip(self.words, self.counts.tolist())
                                  if w not in marks}, min_count, max_vocab)
        unknown = self.total - kept.total - int(self.counts[self.end_id])
        return kept.with_markers(unknown, int(self.counts[self.end_id]))[0]

    def save(self, path: str) -> None:
        """Write ``word count`` lines, most frequent first (word2vec.c's -save-vocab)."""
        with atomic_write(path, "w") as f:
            for w, c in zip(self.words, self.counts.tolist()):
                f.write(f"{w} {c}\n")

    @classmethod
    def load(cls, path: str) -> Vocab:
        """Read a ``word count`` file as written by :meth:`save` or word2vec.c."""
        check_regular_file(path, "a vocabulary file")
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise HSW2VError(f"{path}: no such file") from None
        except OSError as e:
            raise HSW2VError(f"{path}: cannot read: {e.strerror or e}") from None
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise HSW2VError(f"{path}: invalid UTF-8 at byte {e.start}") from None
        raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark is not part of the first word
        words, counts = [], []
        line_of: dict[str, int] = {}
        total = 0
        # Lines end at \n and words at ASCII whitespace, as the corpus reader splits them
        # (bytes.split(), hsw2v.jit.helpers.is_space): a word holding U+00A0 or U+2028
        # reads back as written.
        for n, line in enumerate(raw.split(b"\n"), 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2 or not parts[1].isdigit():
                shown = line[:60].decode("utf-8", "replace")
                raise HSW2VError(f"{path}:{n}: expected 'word count', got {shown!r}")
            parts = [parts[0].decode("utf-8"), parts[1].decode("ascii")]
            count = int(parts[1])
            total += count
            if total >= 1 << 63:
                raise HSW2VError(f"{path}:{n}: the counts add up to more than 2^63 - 1")
            if parts[0] in line_of:
                raise HSW2VError(f"{path}:{n}: {parts[0]!r} is already on line {line_of[parts[0]]}")
            line_of[parts[0]] = n
            words.append(parts[0])
            counts.append(count)
        if not words:
            raise HSW2VError(f"{path}: no 'word count' lines")
        order = np.argsort(-np.asarray(counts, dtype=np.int64), kind="stable")
        return cls([words[i] for i in order], np.asarray(counts, dtype=np.int64)[order])


def keep_probabilities(counts: np.ndarray, sample: float) -> np.ndarray:
    """word2vec.c's subsampling: P(keep) = (sqrt(c / (s·N)) + 1) · s·N / c, capped at 1."""
    counts = counts.astype(np.float64)
    if sample <= 0:
        return np.ones(len(counts), dtype=np.float32)
    threshold = sample * counts.sum()
    keep = (np.sqrt(counts / threshold) + 1.0) * threshold / counts
    return np.minimum(keep, 1.0).astype(np.float32)
