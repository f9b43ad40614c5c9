"""The one exception type that the CLI turns into a one-line message, and how its
messages name parameters: as Python names for the library (``tree_from``), as
options on the command line (``--tree-from``)."""
from __future__ import annotations

import re

_PARAM = re.compile("\x1f([^\x1f\x1e]*)(?:\x1e([^\x1f\x1e]*)\x1e([^\x1f\x1e]*))?\x1f")
_NO_VALUE = object()
_OPTION = "\x1d"  # marks a setting's whole spelling on the command line


def param(name: str, value: object = _NO_VALUE, option: str | None = None) -> str:
    """A parameter (with ``value``, a setting of it) in an error message: the Python
    name in ``str(error)`` (``tree='semantic'``), the option in
    :meth:`HSW2VError.for_command_line` (``--tree semantic``; ``option`` spells it
    where the command line has a flag of its own, as ``--no-node-bias``)."""
    if value is _NO_VALUE:
        return f"\x1f{name}\x1f"
    return f"\x1f{name}\x1e{value!r}\x1e{_OPTION + option if option else value}\x1f"


class HSW2VError(Exception):
    """A user-facing error: bad input, bad parameters or an unreadable file.

    ``str(e)``, ``e.args[0]`` and ``repr(e)`` name Python parameters (``tree_from``);
    :meth:`for_command_line` names the options (``--tree-from``)."""

    def __init__(self, message: object = "") -> None:
        self._marked = str(message)  # with param()'s markers, for either reader
        super().__init__(_PARAM.sub(lambda m: m[1] if m[2] is None else f"{m[1]}={m[2]}",
                                    self._marked))

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self):  # (a Dask worker's error reaches the client with its markers)
        return type(self), (self._marked,)

    def replace(self, old: str, new: str) -> HSW2VError:
        """This error with ``old`` replaced by ``new`` in its message (a temporary
        file's name by the input's, as the user gave it)."""
        return type(self)(self._marked.replace(old, new))

    def for_command_line(self) -> str:
        """The message with options for parameters (``--tree-from``, ``--tree semantic``)."""
        def option(m: re.Match) -> str:
            if m[3] is not None and m[3].startswith(_OPTION):
                return m[3][len(_OPTION):]
            return "--" + m[1].replace("_", "-") + ("" if m[3] is None else f" {m[3]}")
        return _PARAM.sub(option, self._marked)


class HSW2VWarning(UserWarning):
    """A warning whose message names parameters as :class:`HSW2VError`'s does:
    ``str(w)`` the Python names, :meth:`for_command_line` the options."""

    def __init__(self, message: object = "") -> None:
        self._error = HSW2VError(message)
        super().__init__(str(self._error))

    def for_command_line(self) -> str:
        return self._error.for_command_line()


class UnknownWordError(HSW2VError, KeyError):
    """A word outside the vocabulary, looked up as ``model["word"]`` or
    ``vectors["word"]``: a :class:`KeyError` too, as gensim's lookups raise."""
