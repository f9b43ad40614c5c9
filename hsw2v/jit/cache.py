"""Where numba caches the compiled kernels, and when a cached kernel is stale.

numba writes beside the package (its
``__pycache__``) or in the user's cache directory; where it can do neither (a
read-only install and no writable HOME), every ``cache=True`` function would fail to
load. :func:`ensure_cache_dir` then points numba at a directory of the user's own
under the system's temporary directory, or at a fresh one for this process alone.
It says so once, naming ``NUMBA_CACHE_DIR`` when that was set and is what it
overrides: a note left in the directory keeps later runs quiet until the reason
changes.

numba keys each cached function on its own source file only, yet a kernel
inlines steps from other files (the block kernel in ``training/block.py`` holds a
kind's step from ``training/lbl.py``): an edited step would run from the cache as
it was. :func:`stamp_kernel_sources` makes the key of every function of the
package's subpackages cover all their files."""
from __future__ import annotations

import atexit
import hashlib
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


def sources_stamp(package: str) -> str:
    """A digest of the path, time and size of every ``.py`` file in ``package``'s
    subpackages (where the numba code lives), which changes when any of them does."""
    digest = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(package)):
        dirs.sort()
        if root == package:
            continue
        for name in sorted(files):
            if name.endswith(".py"):
                st = os.stat(os.path.join(root, name))
                digest.update(f"{os.path.relpath(os.path.join(root, name), package)} "
                              f"{st.st_mtime_ns} {st.st_size}\n".encode())
    return digest.hexdigest()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_stamps: dict[str, str] = {}


class _PackageSources:
    """Mixed into numba's cache locators: for a function in one of the package's
    subpackages, the source stamp also covers every file of them."""

    def get_source_stamp(self):
        own = super().get_source_stamp()
        path = os.path.abspath(self._py_file)
        if not path.startswith(_PACKAGE + os.sep) or os.path.dirname(path) == _PACKAGE:
            return own
        if _PACKAGE not in _stamps:  # (once a process)
            _stamps[_PACKAGE] = sources_stamp(_PACKAGE)
        return own, _stamps[_PACKAGE]


def stamp_kernel_sources() -> bool:
    """Make numba's cache locators stamp this package's functions with
    :func:`sources_stamp`, before any of them is decorated. Returns whether they do
    (False where numba's caching module lacks what this needs)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    if impl is None or mixin is None or not isinstance(getattr(impl, "_locator_classes", None), list):
        return False
    impl._locator_classes = [
        cls if not issubclass(cls, mixin) or issubclass(cls, _PackageSources)
        else type(cls.__name__, (_PackageSources, cls), {}) for cls in impl._locator_classes]
    return True
