"""Writing outputs safely: a temporary file beside the target, renamed over it on success."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from .errors import HSW2VError


@contextmanager
def atomic_write(path: str, mode: str = "wb") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it over ``path`` on success.

    On any error the temporary file is removed and an existing ``path`` is untouched.
    """
    directory = os.path.dirname(os.path.abspath(path))
    check_writable(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".hsw2v-", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def check_writable(path: str) -> None:
    """Fail early if ``path`` cannot be created: a missing or unwritable directory."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise HSW2VError(f"{path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise HSW2VError(f"{path}: is a directory")
    if not os.access(directory, os.W_OK):
        raise HSW2VError(f"{path}: directory {directory} is not writable")
