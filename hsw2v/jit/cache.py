"""Where numba caches the compiled kernels. numba writes beside the package (its
``__pycache__``) or in the user's cache directory; where it can do neither (a
read-only install and no writable HOME), every ``cache=True`` function would fail to
load. :func:`ensure_cache_dir` then points numba at a directory of the user's own
under the system's temporary directory, or at a fresh one for this process alone.
It says so once, naming ``NUMBA_CACHE_DIR`` when that was set and is what it
overrides: a note left in the directory keeps later runs quiet until the reason
changes."""
from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import warnings


def _probe() -> None:
    """A function of this package, for asking numba where it would cache it."""


def _can_cache() -> bool:
    """Whether numba finds a cache directory for this package's functions."""
    from numba.core.caching import FunctionCache

    try:
        FunctionCache(_probe)
    except RuntimeError:
        return False
    return True


def _own_private_dir(path: str) -> bool:
    """Create ``path`` (mode 700) if missing; whether it is then a directory (not a
    link) that this user owns, that no one else may write, and that this user can write."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & 0o022 and os.access(path, os.W_OK | os.X_OK))


def ensure_cache_dir() -> str | None:
    """Make sure numba can cache this package's kernels. Returns the directory
    chosen when numba had none (also set as ``NUMBA_CACHE_DIR`` for child processes),
    else None."""
    import numba

    if _can_cache():
        return None
    given = os.environ.get("NUMBA_CACHE_DIR")
    why = (f"NUMBA_CACHE_DIR ({given}) is not writable" if given
           else "numba cannot cache beside the package or in the home directory")
    path = os.path.join(tempfile.gettempdir(), f"hsw2v-numba-{os.getuid()}")
    told = os.path.join(path, "told.txt")
    if _own_private_dir(path):
        note = f"{why}; caching compiled kernels in {path} instead"
    else:
        path = tempfile.mkdtemp(prefix="hsw2v-numba-")
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        told, note = "", f"{why}; compiling the kernels afresh each run"
    numba.config.CACHE_DIR = path
    os.environ["NUMBA_CACHE_DIR"] = path
    try:
        with open(told) as f:
            quiet = f.read() == note
    except OSError:
        quiet = False
    if not quiet:
        warnings.warn(note, RuntimeWarning, stacklevel=2)
        try:
            with open(told, "w") as f:
                f.write(note)
        except OSError:
            pass
    return path
