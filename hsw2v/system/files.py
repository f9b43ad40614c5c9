"""Writing outputs safely: each output is written to a temporary file beside it and
renamed over it only when complete, so an existing file is never half-replaced.

Temporaries are named ``.hsw2v-<pid>-<random>.tmp``; one whose process is gone (a
run killed with SIGKILL) is removed by the next write to the same directory.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO

from ..errors import HSW2VError


_KINDS = ((stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def special_kind(path: str) -> str | None:
    """What ``path`` is, in words, when it exists and is neither a regular file nor a
    directory (``"a FIFO"``, ``"a character device"``: ``/dev/null``), else None."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), None)


def check_regular_file(path: str, what: str) -> None:
    """HSW2VError unless ``path`` is a regular file: an input that is read whole
    (a model, vectors, a vocabulary, word pairs, WordNet's files) from a FIFO would
    block in ``open`` for ever, and from ``/dev/zero`` fill memory. ``stat`` never
    blocks; ``what`` names the input in the message. A directory or a path that
    does not exist passes: opening it fails at once, and each reader says so in its
    own words."""
    kind = special_kind(path)
    if kind is not None:
        raise HSW2VError(f"{path}: {kind}, not {what}")


def _directory_of(path: str) -> str:
    """The directory ``path`` is in, as the system resolves it (``nodir/../f`` is in
    ``nodir/..``, which does not exist: not normalised away)."""
    return os.path.dirname(path) or "."


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same file if both exist (links
    and other spellings included), else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_distinct(outputs: dict[str, str], inputs: dict[str, Sequence[str]]) -> None:
    """Fail if an output (``{option: path}``) is another output or one of the
    inputs (``{option: paths}``), which writing it would destroy."""
    named = [(k, v) for k, v in outputs.items() if v]
    for i, (option, path) in enumerate(named):
        for other, other_path in named[:i]:
            if same_file(path, other_path):
                raise HSW2VError(f"{other} and {option} name the same file ({path}); "
                                 "give two paths")
        for source, paths in inputs.items():
            for p in paths:
                if p and p != "-" and "://" not in p and same_file(path, p):
                    raise HSW2VError(f"{option} {path} is the {source} {p}: writing it would "
                                     "destroy it; give another path")


def check_writable(path: str) -> None:
    """Fail early if ``path`` cannot be created or replaced: a missing or unwritable
    directory, a directory, or a special file (device, FIFO, socket) or symlink,
    which would be replaced by a regular file."""
    directory = _directory_of(path)
    if not os.path.isdir(directory):
        raise HSW2VError(f"{path}: directory {directory} does not exist")
    if os.path.isdir(path):
        raise HSW2VError(f"{path}: is a directory")
    if os.path.islink(path):
        raise HSW2VError(f"{path}: is a symbolic link; give the path it points to")
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise HSW2VError(f"{path}: not a regular file (a device, FIFO or socket); not replacing it")
    if not os.access(directory, os.W_OK):
        raise HSW2VError(f"{path}: directory {directory} is not writable")


def new_file_mode(path: str) -> int:
    """The mode an output gets: the replaced file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~umask()


def umask() -> int:
    """This process's umask, read without changing it where Linux allows."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_stale_temporaries(directory: str, prefix: str = ".hsw2v-") -> None:
    """Delete this program's temporaries in ``directory`` whose process has ended."""
    pattern = re.compile(r"^" + re.escape(prefix) + r"(\d+)-[^/]*\.tmp$")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = pattern.match(name)
        if m and not _alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def temporary_beside(path: str) -> str:
    """A new empty temporary file in ``path``'s directory, named for this process."""
    directory = _directory_of(path)
    remove_stale_temporaries(directory)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".hsw2v-{os.getpid()}-", suffix=".tmp")
    os.close(fd)
    return tmp


def replace_together(outputs: dict[str, Callable[[IO[bytes]], None]]) -> None:
    """Write every output, ``write(binary file)`` into a temporary beside each final
    path, then rename them all into place: either every output is replaced or none is."""
    for path in outputs:
        check_writable(path)
    done: dict[str, str] = {}
    try:
        for path, write in outputs.items():
            done[path] = temporary_beside(path)
            try:
                with open(done[path], "wb") as f:
                    write(f)
            except OSError as e:
                raise HSW2VError(f"{path}: cannot write: {e.strerror or e}") from None
            os.chmod(done[path], new_file_mode(path))
        _rename_all(done)
    finally:
        for tmp in done.values():
            if os.path.exists(tmp):
                os.unlink(tmp)


def _rename_all(done: dict[str, str]) -> None:
    """Rename each temporary over its path; if one cannot be (an immutable file, a
    vanished directory), put back those already renamed, from hard links made
    first where the file system allows, and fail naming the path."""
    replaced: list[tuple[str, str | None, bool]] = []
    try:
        for path, tmp in done.items():
            existed = os.path.lexists(path)
            backup: str | None = tmp + ".old"
            try:
                os.link(path, backup)
            except OSError:  # no file yet, or no hard links here
                backup = None
            try:
                os.replace(tmp, path)
            except OSError:
                if backup is not None:
                    os.unlink(backup)
                raise
            replaced.append((path, backup, existed))
    except OSError as e:
        for undo, backup, existed in reversed(replaced):
            if backup is not None:
                os.replace(backup, undo)
            elif not existed:
                os.unlink(undo)
        replaced.clear()
        raise HSW2VError(f"{path}: cannot replace it: {e.strerror or e}") from None
    finally:
        for _, backup, _ in replaced:
            if backup is not None and os.path.lexists(backup):
                os.unlink(backup)


@contextmanager
def atomic_write(path: str, mode: str = "wb") -> Iterator[IO]:
    """Write to a temporary file beside ``path`` and rename it over ``path`` on success.

    On any error the temporary file is removed and an existing ``path`` is untouched.
    A replaced file keeps its mode; a new one gets 0666 less the umask.
    """
    check_writable(path)
    tmp = temporary_beside(path)
    try:
        try:
            with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
                yield f
        except OSError as e:
            raise HSW2VError(f"{path}: cannot write: {e.strerror or e}") from None
        os.chmod(tmp, new_file_mode(path))
        try:
            os.replace(tmp, path)
        except OSError as e:
            raise HSW2VError(f"{path}: cannot replace it: {e.strerror or e}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
