"""A Dask worker's spool of the slices it trained (``--spool``)."""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator

import numpy as np

from ..counting.corpus import TokenSpool
from ..text.reader import Slice
from ..text.tokens import spool_ids


class SliceSpool:
    """The word ids of the slices a worker trained, as a :class:`TokenSpool` (a
    type being a word id), so that later epochs of a slice read them back instead
    of reading and encoding its text again (``--spool``). One slice is written at
    a time; a slice not in the spool (another worker trained it before, or the
    spool was given up) is read from the text."""

    def __init__(self, n_words: int):
        self.tokens = TokenSpool()
        self.identity = [np.arange(n_words, dtype=np.int32)]
        self.where: dict = {}  # slice -> (byte, first block, blocks)
        self.writing = threading.Lock()

    def blocks(self, part: str | Slice, text: Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]],
               again: bool) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The slice's blocks: from the spool if it holds them, else ``text()``,
        kept in the spool if the slice trains ``again``. A spool given up while it
        is read (its file deleted by a failed write) gives the rest from the text:
        the spool holds one block for each of the text's."""
        at = self.where.get(part) if self.tokens.usable else None
        if at is None:
            yield from self._kept(part, text()) if again else text()
            return
        done = 0
        try:
            for block in self.tokens.blocks(self.identity, at=at[0], first=at[1], count=at[2]):
                done += 1
                yield block
            return
        except (OSError, ValueError):  # (a closed file)
            pass
        yield from itertools.islice(text(), done, None)

    def _kept(self, part: str | Slice, blocks: Iterator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``blocks`` (the slice's, from its text), written to the spool as they pass."""
        if part in self.where or not self.writing.acquire(blocking=False):
            yield from blocks
            return
        try:
            at, first, codes = self.tokens.bytes, len(self.tokens.tables), np.empty(0, np.uint8)
            for ids, ends in blocks:
                most = 5 * len(ids) + len(ends) + 1  # (spool_ids' bound)
                if len(codes) < most:
                    codes = np.empty(most, dtype=np.uint8)
                self.tokens.write(codes[:spool_ids(ids, ends, len(ends), codes)])
                yield ids, ends
            if self.tokens.usable:
                self.where[part] = (at, first, len(self.tokens.tables) - first)
        finally:
            self.writing.release()

    @staticmethod
    def warm_up() -> None:
        """Load the spool's kernels."""
        none = np.empty(0, dtype=np.int32)
        spool_ids(none, np.empty(0, dtype=np.int64), 0, np.empty(1, dtype=np.uint8))
        TokenSpool.warm_up()

    def close(self) -> None:
        self.tokens.close()
