"""Sentences from Python, as gensim takes them: an iterable of token lists (lists,
tuples, numpy arrays of str) or of strings (each one sentence, split on
whitespace like the files), a one-shot generator included.

They are written once, as UTF-8 text with one sentence a line, to a temporary
file in $TMPDIR named for this process (``.hsw2v-<pid>-sentences-….tmp``, which a
later run removes if this one is killed), and training reads that file as it
reads any corpus: the counting pass spools its tokens, and every epoch,
checkpoint and Dask worker on this machine work from it. So the same sentences
give the same vocabulary and, with one thread and a seed, the same vectors as a
text file of them. Plain Python: no numba.

The file holds at most ``HSW2V_SENTENCES_LIMIT`` bytes (a size such as ``20G``;
default: half the space free in $TMPDIR when writing starts): an endless generator
ends in one line that says so, not in a full disk. With ``progress``, a bar
counts the sentences, words and bytes written.
"""
from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import HSW2VError, param
from .reader import MAX_WORD_BYTES, Slice

LIMIT_VARIABLE = "HSW2V_SENTENCES_LIMIT"
WRITE_BYTES = 1 << 20
"""Text gathered before each write to the temporary file."""
SHOWN = 40
"""Characters of a bad token a message shows."""


def is_paths(corpus: Any) -> bool:
    """Whether ``corpus`` names files: a path (str or ``os.PathLike``), a slice of one,
    or a list or tuple of those. Anything else iterable holds sentences."""
    one = (str, os.PathLike, Slice)
    return isinstance(corpus, one) or (isinstance(corpus, (list, tuple)) and len(corpus) > 0
                                       and all(isinstance(p, one) for p in corpus))


def check_paths(corpus: Any) -> None:
    """A list of strings is a list of paths: when one of them holds whitespace and
    names no file, say how to give sentence strings instead."""
    if isinstance(corpus, (list, tuple)):
        for p in corpus:
            if isinstance(p, str) and _SPACES.search(p) and not os.path.exists(p):
                raise HSW2VError(f"corpus: a list of strings is a list of paths, and "
                                 f"{_shown(p)} is no file; give sentence strings as "
                                 f"{param('sentences')}=[...] (or token lists)")


def sentence_line(sentence: Any, number: int) -> str:
    """One sentence as a line of text (without its newline), checked: a string is
    split on whitespace (ASCII's, as in files); a sequence of tokens must hold
    non-empty strings without whitespace. ``number`` (from 0) names the sentence
    in errors."""
    if isinstance(sentence, str):
        return _readable(_SPACES.sub(" ", sentence).strip(" "), number)
    if isinstance(sentence, (bytes, bytearray)):
        raise HSW2VError(f"sentences: sentence {number} is bytes; decode it to str (UTF-8)")
    if not isinstance(sentence, (list, tuple)):
        try:
            sentence = list(sentence)  # (numpy arrays, generators of tokens)
        except TypeError:
            raise HSW2VError(f"sentences: sentence {number} is of type {type(sentence).__name__}, "
                             "not a list of tokens or a string") from None
    try:
        line = " ".join(sentence)
    except TypeError:
        k, token = next((k, t) for k, t in enumerate(sentence) if not isinstance(t, str))
        raise HSW2VError(f"sentences: token {k} of sentence {number} is of type "
                         f"{type(token).__name__} ({_shown(token)}), not str") from None
    # Each join adds one space: more means a token holds one; a double, leading or
    # trailing space means an empty token (all at C speed).
    if (line.count(" ") != max(len(sentence) - 1, 0) or "  " in line or line[:1] == " "
            or line[-1:] == " " or _OTHER_SPACE.search(line) or (not line and len(sentence))):
        k, token = next((k, t) for k, t in enumerate(sentence) if not t or _SPACES.search(t))
        what = "is empty" if not token else "holds whitespace"
        raise HSW2VError(f"sentences: token {k} of sentence {number} ({_shown(token)}) {what}; "
                         "a token is one word")
    return _readable(line, number)


def _readable(line: str, number: int) -> str:
    """``line`` if the corpus reader can read it, else HSW2VError naming the token:
    no NUL character, no token of MAX_WORD_BYTES bytes or more (both checks at C
    speed in the common case)."""
    if "\0" not in line and len(line) < MAX_WORD_BYTES // 4:  # (4 bytes a character at most)
        return line
    for k, token in enumerate(line.split(" ")):
        if "\0" in token:
            raise HSW2VError(f"sentences: token {k} of sentence {number} ({_shown(token)}) holds "
                             "a NUL character; a token is text")
        if len(token) >= MAX_WORD_BYTES // 4 and len(token.encode("utf-8")) >= MAX_WORD_BYTES:
            raise HSW2VError(f"sentences: token {k} of sentence {number} ({_shown(token)}) has "
                             f"{MAX_WORD_BYTES} bytes or more; a token is one word")
    return line


_SPACES = re.compile("[ \t\n\r\x0b\x0c]+")
"""Whitespace as the reader splits words on (word2vec.c's: ASCII only)."""
_OTHER_SPACE = re.compile("[\t\n\r\x0b\x0c]")


def _shown(token: Any) -> str:
    text = repr(token)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def sentences_limit(directory: str) -> int:
    """The most bytes of sentences written to ``directory`` (see the module)."""
    given = os.environ.get(LIMIT_VARIABLE)
    if given:
        from ..system.memory import parse_size

        return parse_size(given, LIMIT_VARIABLE)
    try:
        st = os.statvfs(directory)
        return st.f_bavail * st.f_frsize // 2
    except OSError:
        return 1 << 40


@contextmanager
def sentences_file(sentences: Iterable[Any], progress: bool = False) -> Iterator[str]:
    """``sentences`` written to a temporary text file (see the module), removed on
    exit; yields its path. Errors that name the file name ``sentences`` instead.
    ``progress`` shows a bar of the sentences, words and bytes written."""
    from ..system.progress import progress_bar

    from ..system.files import discard, new_temporary

    if isinstance(sentences, (str, bytes, bytearray)) or not isinstance(sentences, Iterable):
        raise HSW2VError(f"sentences must be an iterable of token lists or strings, "
                         f"not of type {type(sentences).__name__}")
    limit = sentences_limit(tempfile.gettempdir())  # (refused before any file is made)
    tmp = new_temporary(tempfile.gettempdir(), "sentences-")
    try:
        try:
            with open(tmp, "wb") as out, progress_bar(progress, desc="sentences", unit="B",
                                                        unit_scale=True) as bar:
                lines: list[str] = []
                size = first = written = words = 0

                def write(number: int) -> None:
                    nonlocal written, words
                    data = _encoded(lines, first)
                    written += len(data)
                    words += sum(line.count(" ") + 1 for line in lines if line)
                    if written > limit:
                        raise HSW2VError(
                            f"sentences: more than {limit:,} bytes written to {os.path.dirname(tmp)} "
                            f"by sentence {number} ({LIMIT_VARIABLE} bounds it); is the "
                            "iterable endless?")
                    out.write(data)
                    bar.update(len(data))
                    bar.set_postfix(sentences=number, words=words, refresh=False)

                for number, sentence in enumerate(sentences):
                    line = sentence_line(sentence, number)
                    lines.append(line)
                    size += len(line) + 1
                    if size >= WRITE_BYTES:
                        write(number)
                        lines, size, first = [], 0, number + 1
                write(first + len(lines))
        except OSError as e:
            raise HSW2VError(f"sentences: cannot write them to {os.path.dirname(tmp)}: "
                             f"{e.strerror or e}") from None
        try:
            yield tmp
        except HSW2VError as e:  # name the input as the user gave it
            raise e.replace(tmp, "sentences") from None
    finally:
        discard(tmp)


def _encoded(lines: list[str], first: int) -> bytes:
    """``lines`` (sentences ``first``, ``first + 1``, …) as UTF-8, each ending in a
    newline; a token that cannot be encoded (a lone surrogate) gets an error."""
    text = "\n".join(lines) + "\n" if lines else ""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        for k, line in enumerate(lines):
            try:
                line.encode("utf-8")
            except UnicodeEncodeError as e:
                raise HSW2VError(f"sentences: sentence {first + k} holds "
                                 f"{_shown(line[e.start:e.end])}, which is not valid in UTF-8") from None
        raise
