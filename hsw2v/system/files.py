"""Writing outputs safely: each output is written to a temporary file beside it and
renamed over it only when complete, so an existing file is never half-replaced.

Temporaries are named ``.hsw2v-<pid>-<random>.tmp``, and their writer holds a lock
(``flock``) on each for as long as it exists. One that nobody holds locked (a run
killed with SIGKILL) is removed by the next write to the same directory. The lock,
not the process id, says whether a temporary is in use: a directory shared by
machines, containers or PID namespaces holds other writers' temporaries, whose
process ids mean nothing here (another namespace's live writer looked dead).
A temporary is created as ``….new``, locked, then renamed to ``….tmp``, so no
``.tmp`` is ever seen unlocked while its writer lives; a ``.new`` left by a crash in
between is removed once it is an hour old. Where the file system has no locks, the
old rule stands: the process id must be dead here. A lock found busy for an
instant (another run's scan trying it) is waited for, never taken for "no locks".

Outputs replaced together (the vectors and the model) are renamed in turn after a
journal in each of their directories names them all (``.hsw2v-<pid>-….journal``).
A run killed between two renames leaves the journal, the temporaries not yet
renamed and the backups (``….tmp.old``, hard links to the old files): the next
write to one of those directories finishes the renames, all the temporaries being
whole, removes the journals and backups, and warns naming the files.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import stat
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

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


_HELD: dict[str, int] = {}
"""This process's temporaries, each with the descriptor whose lock marks it in use."""
_OURS: set[str] = set()
"""This process's journals of replacements under way (see :func:`_journals`)."""
NEW_AFTER_SECONDS = 3600.0
"""A ``.new`` temporary (created, not yet locked) older than this was left by a crash."""


def new_temporary(directory: str, tag: str = "") -> str:
    """A new empty file ``.hsw2v-<pid>-<tag><random>.tmp`` in ``directory``, locked
    for this process until :func:`discard`; the directory's stale temporaries go
    first (see the module)."""
    remove_stale_temporaries(directory)
    fd, new = tempfile.mkstemp(dir=directory, prefix=f".hsw2v-{os.getpid()}-{tag}", suffix=".new")
    os.close(fd)
    new = os.path.abspath(new)  # (one form: the scans compare absolute paths)
    lock = os.open(new, os.O_RDONLY | os.O_CLOEXEC)
    _lock(lock)
    tmp = new[:-len(".new")] + ".tmp"
    try:
        os.rename(new, tmp)
    except OSError:
        os.close(lock)
        os.unlink(new)
        raise
    _HELD[tmp] = lock
    return tmp


def _lock(fd: int) -> None:
    """Lock ``fd`` for this process. Busy is not unsupported: another run's scan
    holds the lock for an instant while it looks at the file (and lets a new one
    be), so a busy lock is waited for; a file system without locks leaves it
    unlocked, and the process id rule protects the file."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
    except OSError:
        pass


def discard(tmp: str) -> None:
    """Remove the temporary ``tmp`` if it is still there (not renamed into place),
    and let go of its lock."""
    try:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    finally:
        lock = _HELD.pop(os.path.abspath(tmp), None)
        if lock is not None:
            os.close(lock)


def remove_stale_temporaries(directory: str, prefix: str = ".hsw2v-") -> None:
    """Delete the temporaries in ``directory`` that nobody is writing (see the module)."""
    pattern = re.compile(r"^" + re.escape(prefix) + r"(\d+)-[^/]*\.(tmp|new|tmp\.old)$")
    finish_replacements(directory, prefix)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    journal = re.compile(re.escape(prefix) + r"(\d+)-[0-9a-f]+\.journal$")
    journaled = {j.group(1) for j in map(journal.match, names) if j}
    for name in names:
        m = pattern.match(name)
        path = os.path.abspath(os.path.join(directory, name))
        if not m or path in _HELD or path in _OURS:
            continue
        if m.group(1) in journaled and m.group(2) != "new":
            continue  # (a replacement's: finished or discarded with its journal)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its writer holds it
            except OSError:  # no locks on this file system
                if _alive(int(m.group(1))):
                    continue
            if m.group(2) == "new" and time.time() - os.fstat(fd).st_mtime < NEW_AFTER_SECONDS:
                continue  # being created (locked just after)

            try:
                os.unlink(path)
            except OSError:
                pass
        finally:
            os.close(fd)


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
    """A new empty temporary file in ``path``'s directory, locked for this process
    (:func:`new_temporary`; :func:`discard` it, renamed into place or not)."""
    return new_temporary(_directory_of(path))


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
            discard(tmp)


def _identity(path: str) -> list[int] | None:
    """What tells a file apart from a later one at ``path``: device, inode, mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_mtime_ns]


def _journals(done: dict[str, str]) -> list[tuple[str, int]]:
    """Before renaming several temporaries into place: a journal in each of their
    directories (``.hsw2v-<pid>-<token>.journal``, JSON: each final path, its
    temporary, and what each file is now), written whole under a name no scan
    reads, locked, then renamed into place, so that a run killed between two
    renames leaves what a later one needs to finish the job
    (:func:`finish_replacements`). Returns each journal's path and lock."""
    token = secrets.token_hex(6)
    pairs = [{"path": os.path.abspath(path), "tmp": os.path.abspath(tmp),
              "old": _identity(path), "new": _identity(tmp)} for path, tmp in done.items()]
    record = json.dumps({"format": "hsw2v-replace", "token": token, "pairs": pairs}).encode()
    made: list[tuple[str, int]] = []
    try:
        for directory in dict.fromkeys(os.path.dirname(p["path"]) for p in pairs):
            name = os.path.join(directory, f".hsw2v-{os.getpid()}-{token}.journal")
            fd = os.open(name + ".new", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            made.append((name, fd))
            _lock(fd)
            os.write(fd, record)
            os.rename(name + ".new", name)
            _OURS.add(name)
    except OSError:
        _close_journals(made)
        return []  # (renamed as before: a kill between the renames is not recovered)
    return made


def _close_journals(journals: list[tuple[str, int]]) -> None:
    for name, fd in journals:
        for path in (name, name + ".new"):
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.close(fd)
        _OURS.discard(name)


def _journal_pairs(record: Any, pid: int, token: str, directory: str, prefix: str
                   ) -> list[dict] | None:
    """The pairs of a journal found in ``directory``, if it is one hsw2v wrote there
    for process ``pid``: each temporary named as that process's, beside its path, and
    the journal's directory one of theirs; else None (never acted on)."""
    try:
        if record["format"] != "hsw2v-replace" or record["token"] != token:
            return None
        pairs = [{k: p[k] for k in ("path", "tmp", "old", "new")} for p in record["pairs"]]
    except (KeyError, TypeError):
        return None
    named = re.compile(r"^" + re.escape(prefix) + str(pid) + r"-[^/]*\.tmp$")
    for p in pairs:
        if not (isinstance(p["path"], str) and isinstance(p["tmp"], str)
                and named.match(os.path.basename(p["tmp"]))
                and os.path.dirname(p["tmp"]) == os.path.dirname(p["path"])):
            return None
    if os.path.abspath(directory) not in {os.path.dirname(p["path"]) for p in pairs}:
        return None
    return pairs


def finish_replacements(directory: str, prefix: str = ".hsw2v-") -> None:
    """Finish the replacements that a run killed between two renames left in
    ``directory`` (its journals, see :func:`_journals`), if the journal is this
    user's and the files are as the run left them: every temporary still there is
    renamed over its path (all were written whole before the journal), and a
    warning names the files. Where a file changed since, nothing is renamed and the
    leftovers go, said likewise. The journals and backups go either way."""
    pattern = re.compile(r"^" + re.escape(prefix) + r"(\d+)-([0-9a-f]+)\.journal$")
    try:
        names = [n for n in os.listdir(directory) if pattern.match(n)]
    except OSError:
        return
    for name in names:
        journal = os.path.abspath(os.path.join(directory, name))
        m = pattern.match(name)
        if journal in _OURS:
            continue
        try:
            fd = os.open(journal, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                continue  # (another user's: not ours to act on)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its run is renaming now
            except OSError:
                if _alive(int(m.group(1))):
                    continue
            try:
                record = json.loads(os.read(fd, 1 << 20))
            except (ValueError, OSError):
                record = None
            pairs = _journal_pairs(record, int(m.group(1)), m.group(2), directory, prefix)
            if pairs is not None:
                _finish(pairs, int(m.group(1)), m.group(2), prefix)
        finally:
            os.close(fd)


def _finish(pairs: list[dict], pid: int, token: str, prefix: str) -> None:
    """Go forward with a killed run's renames (:func:`finish_replacements`)."""
    left = [p for p in pairs if os.path.lexists(p["tmp"])]
    unchanged = all(_identity(p["path"]) == (p["old"] if p in left else p["new"]) for p in pairs)
    for p in left:
        with contextlib.suppress(OSError):
            if unchanged:
                os.replace(p["tmp"], p["path"])
            else:
                os.unlink(p["tmp"])
    for p in pairs:
        with contextlib.suppress(OSError):
            os.unlink(p["tmp"] + ".old")
    for d in {os.path.dirname(p["path"]) for p in pairs}:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(d, f"{prefix}{pid}-{token}.journal"))
    files = " and ".join(p["path"] for p in pairs)
    if left and unchanged:
        warnings.warn(f"finished replacing {files}, which process {pid} was killed while "
                      "replacing (now all new)", RuntimeWarning, stacklevel=3)
    elif left:
        warnings.warn(f"left {files} as they are: process {pid} was killed while replacing "
                      "them, and they changed since; its unfinished copies are removed",
                      RuntimeWarning, stacklevel=3)


def _rename_all(done: dict[str, str]) -> None:
    """Rename each temporary over its path; if one cannot be (an immutable file, a
    vanished directory), put back those already renamed, from hard links made
    first where the file system allows (each locked as temporaries are), and fail
    naming the path. With several, a journal first (:func:`_journals`): a kill
    between two renames is finished by the next run that writes in one of their
    directories."""
    journals = _journals(done) if len(done) > 1 else []
    replaced: list[tuple[str, str | None, bool]] = []
    locks: list[int] = []
    try:
        for path, tmp in done.items():
            existed = os.path.lexists(path)
            backup: str | None = tmp + ".old"
            try:
                os.link(path, backup)
            except OSError:  # no file yet, or no hard links here
                backup = None
            else:
                with contextlib.suppress(OSError):
                    locks.append(os.open(backup, os.O_RDONLY | os.O_CLOEXEC))
                    _lock(locks[-1])
            try:
                os.replace(tmp, path)
            except OSError:
                if backup is not None:
                    os.unlink(backup)
                raise
            replaced.append((path, backup, existed))
    except OSError as e:
        for undo, backup, existed in reversed(replaced):
            with contextlib.suppress(OSError):
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
        for fd in locks:
            os.close(fd)
        _close_journals(journals)


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
        discard(tmp)
