"""Progress bars: tqdm on a terminal; in a log file (stderr not a terminal), a plain
line about once a minute instead of hundreds of carriage-return updates."""
from __future__ import annotations

import sys
from typing import TextIO

LOG_INTERVAL = 60.0
"""Seconds between progress lines when stderr is not a terminal."""


class _Lines:
    """A stream that turns tqdm's carriage-return redraws into whole lines."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> None:
        text = text.replace("\r", "").strip()
        if text:
            self.stream.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()


def progress_bar(enabled: bool, **options):
    """A tqdm bar (``options`` as tqdm's), disabled unless ``enabled``."""
    from tqdm import tqdm

    stream = sys.stderr
    if enabled and not stream.isatty():
        options = {**options, "file": _Lines(stream), "mininterval": LOG_INTERVAL,
                   "ascii": True, "ncols": 100}
        if not options.get("leave", True):  # a passing phase: a line only if it lasts
            options["delay"] = 1.0
    return tqdm(disable=not enabled, **options)
