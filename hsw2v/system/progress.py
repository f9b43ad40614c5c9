"""Progress bars: tqdm on a terminal; in Jupyter, ``tqdm.auto``'s widget (a plain
bar where ipywidgets is missing); in a log file (stderr not a terminal), a plain
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


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython with a kernel app)."""
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        return shell is not None and "IPKernelApp" in shell.config
    except (AttributeError, TypeError):  # an IPython too old or too strange to ask
        return False


def progress_bar(enabled: bool, **options):
    """A tqdm bar (``options`` as tqdm's), disabled unless ``enabled``."""
    if enabled and in_notebook():
        import warnings

        with warnings.catch_warnings():  # (tqdm warns where ipywidgets is missing)
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm as auto
            try:
                return auto(**options)
            except ImportError:  # (an older tqdm without ipywidgets: "IProgress not found")
                from tqdm import tqdm as plain
                return plain(**options)
    from tqdm import tqdm

    stream = sys.stderr
    if enabled and not stream.isatty():
        options = {**options, "file": _Lines(stream), "mininterval": LOG_INTERVAL,
                   "ascii": True, "ncols": 100}
        if not options.get("leave", True):  # a passing phase: a line only if it lasts
            options["delay"] = 1.0
    return tqdm(disable=not enabled, **options)
