"""Where numba caches the compiled kernels, and when a cached kernel is stale.

The package's kernels are cached in the user's cache directory
(``$XDG_CACHE_HOME/hsw2v/kernels``, else ``~/.cache/hsw2v/kernels``), one folder
for each directory of sources, never inside the installed package: a file left
there would outlive ``pip uninstall`` and make the leftover folder a namespace
package that shadows a later install. ``NUMBA_CACHE_DIR`` still wins.
A cache locator (``KernelCacheLocator``) puts them there; it applies to this package's
functions only, so a notebook's other numba code caches as numba's settings say.

Where the chosen directory cannot be written (no writable HOME, or an unwritable
``NUMBA_CACHE_DIR``), :func:`ensure_cache_dir` points numba at a directory of the
user's own under the system's temporary directory, or at a fresh one for this
process alone. It says so once: a note left in the directory keeps later runs
quiet until the reason changes.

numba keys each cached function on its own source file only, yet a kernel
inlines steps from other files (the block kernel in ``training/block.py`` holds a
kind's step from ``training/lbl.py``): an edited step would run from the cache as
it was. :func:`stamp_kernel_sources` makes the key of every function of the
package's subpackages cover all their files; a reinstall (new files, new times)
compiles once again. A kernel that cannot be written to the cache (a full disk)
is said once and runs all the same (:func:`guard_cache_writes`)."""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
import warnings

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_chosen: list[str] = []  # the kernels' directory, once ensure_cache_dir found it usable


def kernel_cache_dir() -> str:
    """The directory of the compiled kernels when ``NUMBA_CACHE_DIR`` is not set:
    ``hsw2v/kernels`` in the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hsw2v", "kernels")


def _in_package(py_file: str) -> bool:
    return os.path.abspath(py_file).startswith(_PACKAGE + os.sep)


def _writable_dir(path: str) -> bool:
    """Create ``path`` (and its parents) if missing; whether a file can then be made in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
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
    """Choose where numba caches this package's kernels: ``NUMBA_CACHE_DIR`` if set
    and writable, else :func:`kernel_cache_dir` if writable, else a private
    directory under $TMPDIR (said once). Returns the fallback directory when one
    was needed (also set as ``NUMBA_CACHE_DIR`` for child processes), else None."""
    import numba

    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        if _writable_dir(given):
            return None
        why = f"NUMBA_CACHE_DIR ({given}) is not writable"
    else:
        own = kernel_cache_dir()
        if _writable_dir(own):
            _chosen[:] = [own]
            return None
        why = f"numba cannot cache in the user's cache directory ({own})"
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


def _kernel_locator(mixin: type, base: type) -> type:
    """The locator of this package's kernels, built on numba's own locator bases."""

    class KernelCacheLocator(_PackageSources, mixin, base):
        """This package's functions, cached in :func:`kernel_cache_dir` (one folder
        for each directory of sources) unless ``NUMBA_CACHE_DIR`` is set."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(_chosen[0], self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self):
            return self._cache_path

        @classmethod
        def from_function(cls, py_func, py_file):
            from numba.core import config

            if config.CACHE_DIR or not _chosen or not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

    return KernelCacheLocator


def stamp_kernel_sources() -> bool:
    """Make numba's cache locators stamp this package's functions with
    :func:`sources_stamp`, and put them in the user's cache directory (see
    :func:`ensure_cache_dir`), before any of them is decorated. Returns whether they
    do (False where numba's caching module lacks what this needs)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    base = getattr(caching, "_CacheLocator", None)
    if (impl is None or mixin is None or base is None
            or not isinstance(getattr(impl, "_locator_classes", None), list)):
        return False
    classes = [cls if not issubclass(cls, mixin) or issubclass(cls, _PackageSources)
               else type(cls.__name__, (_PackageSources, cls), {}) for cls in impl._locator_classes]
    if not any(cls.__name__ == "KernelCacheLocator" for cls in classes):
        after = [i + 1 for i, cls in enumerate(classes) if "UserProvided" in cls.__name__]
        classes.insert(after[0] if after else 0,  # after NUMBA_CACHE_DIR's, before __pycache__
                       _kernel_locator(mixin, base))
    impl._locator_classes = classes
    return True


_unwritable: list[str] = []  # the cache directories already said to be unwritable


def guard_cache_writes() -> bool:
    """Make a failed write of one of this package's kernels to numba's cache (a full
    disk, a quota) a warning naming the directory, said once, instead of an error:
    the kernel is compiled and runs; it compiles again next time. Returns whether
    the guard is in place (False where numba's caching module lacks what it needs)."""
    from numba.core import caching

    cache = getattr(caching, "Cache", None)
    original = getattr(cache, "save_overload", None)
    if original is None or getattr(original, "guarded", False):
        return original is not None

    def save_overload(self, sig, data):
        try:
            original(self, sig, data)
        except OSError as e:
            locator = getattr(getattr(self, "_impl", None), "locator", None)
            if not _in_package(getattr(locator, "_py_file", "") or ""):
                raise
            where = os.path.dirname(str(getattr(self, "_cache_path", ""))) or "numba's cache"
            if where not in _unwritable:  # (one line for the cache, not one a subfolder)
                _unwritable.append(where)
                warnings.warn(f"numba cannot write compiled kernels to {where} "
                              f"({e.strerror or e}); they run, and compile again next time",
                              RuntimeWarning, stacklevel=2)

    save_overload.guarded = True  # type: ignore[attr-defined]
    cache.save_overload = save_overload
    return True

