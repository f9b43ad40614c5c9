"""The one exception type that the CLI turns into a one-line message, and how its
messages name parameters: as Python names for the library (``tree_from``), as
options on the command line (``--tree-from``)."""
from __future__ import annotations

import re

_PARAM = re.compile("\x1f([^\x1f\x1e]*)(?:\x1e([^\x1f\x1e]*)\x1e([^\x1f\x1e]*))?\x1f")
_NO_VALUE = object()


def param(name: str, value: object = _NO_VALUE) -> str:
    """A parameter (with ``value``, a setting of it) in an error message: the Python
    name in ``str(error)`` (``tree='semantic'``), the option in
    :meth:`HSW2VError.for_command_line` (``--tree semantic``)."""
    if value is _NO_VALUE:
        return f"\x1f{name}\x1f"
    return f"\x1f{name}\x1e{value!r}\x1e{value}\x1f"


class HSW2VError(Exception):
    """A user-facing error: bad input, bad parameters or an unreadable file."""

    def __str__(self) -> str:
        return _PARAM.sub(lambda m: m[1] if m[2] is None else f"{m[1]}={m[2]}", super().__str__())

    def for_command_line(self) -> str:
        """The message with options for parameters (``--tree-from``, ``--tree semantic``)."""
        return _PARAM.sub(lambda m: "--" + m[1].replace("_", "-") + ("" if m[3] is None else f" {m[3]}"),
                          super().__str__())


class UnknownWordError(HSW2VError, KeyError):
    """A word outside the vocabulary, looked up as ``model["word"]`` or
    ``vectors["word"]``: a :class:`KeyError` too, as gensim's lookups raise."""

    def __str__(self) -> str:
        return HSW2VError.__str__(self)
