"""Streaming corpus reader: plain, .gz, .bz2 or .zst text, or ``-`` for stdin.

Words are runs of non-whitespace bytes (space, tab, newline, CR, VT, FF), as in
word2vec.c; a newline ends a sentence. The text must be UTF-8: invalid UTF-8 or
a NUL byte is rejected with the byte offset (no silent replacement), so every
word of the vocabulary decodes exactly. Lines of any length are streamed in
blocks that end on whitespace; no line is ever loaded whole. Plain Python: no numba.
"""
from __future__ import annotations

import bz2
import glob
import gzip
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO, NamedTuple

from ..errors import HSW2VError
from ..system.files import special_kind

BLOCK_BYTES = 1 << 20
"""Bytes read per block; each block ends on whitespace (unless the file ends)."""

MAX_WORD_BYTES = 1 << 16
"""A run of this many bytes without whitespace is not a word: the input is rejected."""


@contextmanager
def open_corpus(path: str) -> Iterator[BinaryIO]:
    """Open ``path`` for binary reading, decompressing .gz, .bz2 and .zst; ``-`` is stdin,
    and a URL (``http://``, ``s3://``, …) is read through fsspec."""
    if path == "-":
        yield sys.stdin.buffer
        return
    if is_url(path):
        with _open_url(path) as f:
            yield f
        return
    if os.path.isdir(path):
        raise HSW2VError(f"{path}: is a directory, not a corpus file")
    try:
        f = opener_of(path).open(path)
    except FileNotFoundError:
        raise HSW2VError(f"{path}: no such file") from None
    except OSError as e:
        raise HSW2VError(f"{path}: cannot read: {e.strerror or e}") from None
    with f:
        yield f


def _open_zstd(path: str) -> BinaryIO:
    """A .zst file's decompressed bytes (every frame), through zstandard (an
    optional extra: ``pip install zstandard``)."""
    try:
        import zstandard
    except ImportError:
        raise HSW2VError(f"{path}: reading .zst needs zstandard: pip install zstandard") from None
    raw = open(path, "rb")  # noqa: SIM115 (closed with the reader)
    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=True)


def _decompression_errors() -> tuple[type[BaseException], ...]:
    """What a corrupt compressed file raises while it is read."""
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, ValueError, zlib.error)
    try:
        import zstandard
    except ImportError:
        return errors
    return (*errors, zstandard.ZstdError)


def is_url(path: str) -> bool:
    return "://" in path


@contextmanager
def _open_url(url: str, compression: str | None = "infer") -> Iterator[BinaryIO]:
    """A URL's bytes, decompressed by its extension (unless ``compression`` is None),
    through fsspec (an optional extra: ``pip install 'fsspec[http]'``)."""
    try:
        import fsspec
    except ImportError:
        raise HSW2VError(f"{url}: reading URLs needs fsspec: pip install 'fsspec[http]'") from None
    try:
        opened = fsspec.open(url, "rb", compression=compression)
        f = opened.open()
    except FileNotFoundError as e:  # (fsspec says so of a refused connection too)
        raise HSW2VError(f"{url}: {_why_not_found(e)}") from None
    except ImportError as e:  # the protocol's own package (s3fs, gcsfs, aiohttp, …)
        raise HSW2VError(f"{url}: {e}") from None
    except Exception as e:  # noqa: BLE001 (network and protocol errors vary by backend)
        raise HSW2VError(f"{url}: cannot read: {' '.join(str(e).split())}") from None
    with f:
        yield f


def _why_not_found(e: BaseException) -> str:
    """What lies behind fsspec's FileNotFoundError: a connection that failed (its
    errno's words), an HTTP status, or a file that is not there."""
    seen: BaseException | None = e.__cause__ or e.__context__
    while seen is not None:
        if isinstance(seen, OSError) and not isinstance(seen, FileNotFoundError) and seen.errno:
            return f"cannot connect ({os.strerror(seen.errno)})"
        status = getattr(seen, "status", None)
        if isinstance(status, int) and status != 404:
            return f"cannot read (HTTP status {status})"
        seen = seen.__cause__ or seen.__context__
    return "no such file"


class Opener(NamedTuple):
    """How to read one kind of corpus file: ``open(path)`` gives its text's bytes
    (closed by the caller); ``slices`` says whether its words can be read in byte
    ranges (:class:`Slice`: the Dask engine's slices and shards sized in bytes),
    which a compressed file's cannot."""

    open: Callable[[str], BinaryIO]
    slices: bool


PLAIN = Opener(lambda path: open(path, "rb", buffering=0), slices=True)  # noqa: SIM115
"""A file with none of the suffixes of :data:`openers`: plain UTF-8 text."""

openers: dict[str, Opener] = {
    ".gz": Opener(lambda path: gzip.open(path, "rb"), slices=False),  # noqa: SIM115
    ".bz2": Opener(lambda path: bz2.open(path, "rb"), slices=False),  # noqa: SIM115
    ".zst": Opener(_open_zstd, slices=False),
}
"""Corpus files by suffix: the extension point for inputs. A new format is an entry
here (its opener, and whether it can be read in byte ranges); reading, counting,
the Dask engine's shards and slices all ask :func:`opener_of`. URLs are read through
fsspec, which decompresses by the same suffixes, and whole."""


def opener_of(path: str) -> Opener:
    """The :class:`Opener` of a local corpus file ``path``, by its suffix."""
    return next((o for suffix, o in openers.items() if path.endswith(suffix)), PLAIN)


def reads_in_slices(path: str) -> bool:
    """Whether ``path``'s words can be read in byte ranges: a local file whose
    opener can (a server need not answer range requests, so not a URL)."""
    return not is_url(path) and opener_of(path).slices


class Slice(NamedTuple):
    """The words of an uncompressed file (or URL) that start in bytes
    ``start..end-1``: consecutive slices cover the file's words exactly once."""

    path: str
    start: int
    end: int


Source = str | Slice | Sequence[str | Slice]
"""A corpus: one path (``-`` for stdin) or slice, or a list of them, read in order."""


def as_source(source: Any) -> Source:
    """``source`` with every ``os.PathLike`` (a ``pathlib.Path``) as its ``str``: what
    a public function taking a corpus does first."""
    if isinstance(source, os.PathLike):
        return os.fspath(source)
    if isinstance(source, (list, tuple)):
        return [os.fspath(p) if isinstance(p, os.PathLike) else p for p in source]
    return source


def paths_of(source: Source) -> list[str]:
    """The paths a corpus reads, in order."""
    items = [source] if isinstance(source, str | Slice) else list(source)
    return [x.path if isinstance(x, Slice) else x for x in items]


def plain_bytes(source: Source) -> int | None:
    """The bytes of text ``source`` holds, where that is known before reading (local
    uncompressed files and slices); else None (stdin, a pipe, a compressed file, a URL)."""
    total = 0
    for x in [source] if isinstance(source, str | Slice) else list(source):
        if isinstance(x, Slice):
            total += x.end - x.start
            continue
        if not reads_in_slices(x) or x == "-":
            return None
        try:
            st = os.stat(x)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        total += st.st_size
    return total


def describe(source: Source) -> str:
    """The corpus's name in messages: its path, or the first one and how many more."""
    paths = paths_of(source)
    return paths[0] if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more files)"


def corpus_files(args: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The files that CORPUS arguments name, in order: a file as given, a directory's
    files (:func:`directory_files`) but those in ``exclude`` (the run's own
    outputs), a (quoted) glob's matches sorted; ``-`` is stdin."""
    files: list[str] = []
    for arg in args:
        if arg == "-" or is_url(arg) or os.path.isfile(arg) or is_stream(arg):
            files.append(arg)
        elif (kind := _special_kind(arg)) is not None:
            raise HSW2VError(f"{arg}: {kind}, not a text file")
        elif os.path.isdir(arg):
            found = directory_files(arg, exclude)
            if not found:
                raise HSW2VError(f"{arg}: the directory holds no files")
            files.extend(found)
        elif glob.has_magic(arg):
            found = sorted(p for p in glob.glob(arg, recursive=True) if os.path.isfile(p))
            if not found:
                raise HSW2VError(f"{arg}: no file matches")
            files.extend(found)
        else:
            raise HSW2VError(f"{arg}: no such file")
    if files.count("-") > 1:
        raise HSW2VError("stdin (-) can be read once only")
    return files


def is_stream(path: str) -> bool:
    """Whether ``path`` is ``-`` or a FIFO (a named pipe, or a shell's process
    substitution such as ``<(zcat a.gz)``): read once, as it comes."""
    if path == "-":
        return True
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _special_kind(path: str) -> str | None:
    """What ``path`` is if it exists and is neither a regular file, a directory nor
    a FIFO (which is read as a stream), else None (see
    :func:`hsw2v.system.files.special_kind`)."""
    kind = special_kind(path)
    return None if kind == "a FIFO" else kind


def directory_files(top: str, exclude: Sequence[str] = ()) -> list[str]:
    """The files below directory ``top``, sorted: symbolic links followed (each
    directory once, so a link loop ends), hidden files and directories (a name
    starting with ``.``) skipped, and the files in ``exclude`` left out."""
    skip = set()
    for path in exclude:
        try:
            st = os.stat(path)
            skip.add((st.st_dev, st.st_ino))
        except OSError:
            pass
    seen: set[tuple[int, int]] = set()
    found = []
    for root, dirs, names in os.walk(top, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:  # reached again through a link
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in names:
            path = os.path.join(root, name)
            if name.startswith(".") or not os.path.isfile(path):
                continue
            st = os.stat(path)
            if (st.st_dev, st.st_ino) not in skip:
                found.append(path)
    return sorted(found)


def slice_block_bytes(part: Source, threads: int, blocks_each: int = 4) -> int:
    """The block size to read ``part`` in with ``threads`` threads: for a slice, about
    1/(``blocks_each`` × threads) of it (32 KiB to :data:`BLOCK_BYTES`), so that each
    thread has some (one thread would train a 125,000-word slice, a single block,
    alone); with one thread, or for a whole file, :data:`BLOCK_BYTES`."""
    if threads > 1 and isinstance(part, Slice):
        return min(BLOCK_BYTES, max(1 << 15, (part.end - part.start) // (blocks_each * threads)))
    return BLOCK_BYTES


def iter_blocks(source: Source, block_bytes: int = BLOCK_BYTES) -> Iterator[bytes]:
    """Yield the corpus as validated byte blocks, file after file (a block never spans
    two files, and a block's end ends a sentence, so words and sentences never join
    across files). A block of about ``block_bytes`` ends at a newline where one lies
    in its second half (so lines shorter than half a block stay whole), else on
    whitespace; a whole file's last line gets the newline it may lack.

    Raises HSW2VError on unreadable, corrupt-compressed, binary or non-UTF-8 input.
    """
    for item in [source] if isinstance(source, str | Slice) else source:
        if isinstance(item, Slice):
            yield from _file_blocks(item.path, block_bytes, item)
        else:
            yield from _file_blocks(item, block_bytes)


BOM = b"\xef\xbb\xbf"
"""UTF-8's byte-order mark, which some editors put at the start of a file."""


def _file_blocks(path: str, block_bytes: int, part: Slice | None = None) -> Iterator[bytes]:
    """:func:`iter_blocks` for one file, or the words of ``part`` of it."""
    carry = b""
    corrupt = _decompression_errors()
    with open_corpus(path) if part is None else _open_slice(part) as f:
        offset = f.tell() if part is not None else 0  # of ``carry``'s start in the text
        at_start = offset == 0
        open_line = False  # whether words follow the last newline yielded
        while True:
            try:
                want = max(block_bytes - len(carry), block_bytes // 2, 1)  # (a block stays near block_bytes)
                data = _read_full(f, want)
            except corrupt as e:  # a corrupt .gz, .bz2 or .zst
                raise HSW2VError(f"{path}: cannot read: {e}") from None
            except Exception as e:
                if not is_url(path):
                    raise
                raise HSW2VError(f"{path}: cannot read: {' '.join(str(e).split())}") from None
            if not data:
                break
            at_end = len(data) < want  # the end of the file, which ends its last word
            if at_start:
                at_start = False
                if data.startswith(BOM):  # a byte-order mark is not part of the first word
                    data, offset = data[len(BOM):], len(BOM)
            buf = carry + data if carry else data
            if at_end:
                carry = buf
                break
            cut = _cut_point(buf) + 1
            if cut == 0:
                if len(buf) > MAX_WORD_BYTES:
                    raise HSW2VError(
                        f"{path}: more than {MAX_WORD_BYTES} bytes without whitespace at byte "
                        f"{offset}; is this a text file?"
                    )
                carry = buf
                continue
            block, carry = buf[:cut], buf[cut:]
            _check_word_lengths(block, path, offset)
            _validate(block, path, offset)
            open_line = _ends_open_line(block, open_line)
            yield block
            offset += cut
    if carry:
        _check_word_lengths(carry, path, offset)
        _validate(carry, path, offset)
        open_line = _ends_open_line(carry, open_line)
    if part is None and open_line:  # a last line without its newline still ends there
        carry += b"\n"
    if carry:
        yield carry


@contextmanager
def _open_slice(part: Slice) -> Iterator[BinaryIO]:
    """The bytes of ``part``'s words, from the start of its first word to the end of
    its last (see :class:`Slice`), as a file positioned at that start."""
    if not is_url(part.path) and not opener_of(part.path).slices:
        raise HSW2VError(f"{part.path}: a compressed file is read whole, not in slices")
    with _open_url(part.path, compression=None) if is_url(part.path) else open_corpus(part.path) as f:
        start, end = _word_start(f, part.start, part.path), _word_start(f, part.end, part.path)
        f.seek(start)
        yield _Bounded(f, end)


class _Bounded:
    """A binary file that ends at byte ``end``."""

    def __init__(self, f: BinaryIO, end: int):
        self.f, self.end = f, end

    def tell(self) -> int:
        return self.f.tell()

    def read(self, size: int = -1) -> bytes:
        left = self.end - self.f.tell()
        return self.f.read(left if size < 0 else min(size, left)) if left > 0 else b""


def _word_start(f: BinaryIO, pos: int, path: str) -> int:
    """The first byte at or after ``pos`` where a word may start: ``pos`` itself at
    the file's start or after whitespace, else the byte after the word that covers
    it (or the file's end)."""
    if pos <= 0:
        return 0
    f.seek(pos - 1)
    seen = 0
    while True:
        chunk = f.read(1 << 14)
        found = _SPACE.search(chunk)
        if found:
            return pos + seen + found.start()
        if not chunk:
            return pos - 1 + seen
        seen += len(chunk)
        if seen > MAX_WORD_BYTES:
            raise HSW2VError(f"{path}: more than {MAX_WORD_BYTES} bytes without whitespace at "
                             f"byte {pos}; is this a text file?")


def _read_full(f: BinaryIO, size: int) -> bytes:
    """``size`` bytes, or fewer only at the end: a decompressor or a network stream
    may return less per read (zstd stops at each frame), and a short read would
    cut a block, and so a sentence, where the text has none."""
    data = f.read(size)
    if not data or len(data) == size:
        return data
    parts = [data]
    while size - len(data) > 0:
        more = f.read(size - len(data))
        if not more:
            break
        parts.append(more)
        data = b"".join(parts)
        parts = [data]
    return data


def _cut_point(buf: bytes) -> int:
    """Where a block may end: its last newline if one lies in its second half (a
    line stays whole in a block, as a language model's ``</s>`` needs), else its
    last whitespace byte; -1 if it has none."""
    newline = buf.rfind(b"\n", len(buf) // 2)
    return newline if newline >= 0 else _last_whitespace(buf)


def _ends_open_line(block: bytes, open_line: bool) -> bool:
    """Whether words follow the last newline once ``block`` is read, given whether
    they did before it."""
    newline = block.rfind(b"\n")
    return bool(block[newline + 1:].strip()) or (open_line and newline < 0)


def _last_whitespace(buf: bytes) -> int:
    """Index of the last whitespace byte of ``buf``, or -1 (the tail is searched
    first, so a byte that never occurs does not cost a scan of the whole block)."""
    start = max(0, len(buf) - 4096)
    while True:
        found = max(buf.rfind(c, start) for c in (b" ", b"\n", b"\t", b"\r", b"\x0b", b"\x0c"))
        if found >= 0 or start == 0:
            return found
        start = max(0, start - 16 * 4096)


_SPACE = re.compile(rb"[ \t\n\r\x0b\x0c]")


def _check_word_lengths(block: bytes, path: str, offset: int) -> None:
    """Reject a run of more than MAX_WORD_BYTES bytes without whitespace anywhere in
    the block. Such a run covers a whole aligned chunk of half that size, so only
    chunks without whitespace (none, in text) are measured."""
    step = (MAX_WORD_BYTES + 1) // 2
    for lo in range(0, len(block) - step + 1, step):
        if _SPACE.search(block, lo, lo + step) is None:
            start = _last_whitespace(block[:lo]) + 1
            after = _SPACE.search(block, lo + step)
            end = after.start() if after else len(block)
            if end - start > MAX_WORD_BYTES:
                raise HSW2VError(
                    f"{path}: more than {MAX_WORD_BYTES} bytes without whitespace at byte "
                    f"{offset + start}; is this a text file?")


def _validate(block: bytes, path: str, offset: int) -> None:
    """Reject NUL bytes and invalid UTF-8, naming the byte offset."""
    nul = block.find(b"\0")
    if nul >= 0:
        raise HSW2VError(f"{path}: NUL byte at byte {offset + nul}; this looks like a binary file")
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HSW2VError(
            f"{path}: invalid UTF-8 at byte {offset + e.start}; "
            "convert the file to UTF-8 (for example with iconv -c)"
        ) from None


@contextmanager
def rereadable(source: Source) -> Iterator[Source]:
    """The corpus as paths that can be read many times: stdin (``-``) and FIFOs
    (:func:`is_stream`) are copied to temporary files in $TMPDIR, named for this
    process (``.hsw2v-<pid>-stdin-….tmp``) so that a later run removes them if this
    one is killed before it can."""
    streams = [p for p in paths_of(source) if not isinstance(p, Slice) and is_stream(p)]
    if not streams:
        yield source
        return
    from ..system.files import discard, new_temporary

    copies: dict[str, str] = {}
    try:
        for stream in streams:
            tmp = new_temporary(tempfile.gettempdir(), "stdin-")
            copies[stream] = tmp
            try:
                with open(tmp, "wb") as out, open_corpus(stream) as f:
                    shutil.copyfileobj(f, out, 1 << 20)
            except OSError as e:
                raise HSW2VError(f"{stream}: cannot keep a copy of it in {os.path.dirname(tmp)}: "
                                 f"{e.strerror or e}") from None
        try:
            yield (copies[source] if isinstance(source, str)
                   else [copies.get(p, p) if isinstance(p, str) else p for p in source])
        except HSW2VError as e:  # name the input as the user gave it
            for stream, tmp in copies.items():
                e = e.replace(tmp, stream)
            raise e from None
    finally:
        for tmp in copies.values():
            discard(tmp)
