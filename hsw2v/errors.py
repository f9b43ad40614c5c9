"""The one exception type that the CLI turns into a one-line message."""


class HSW2VError(Exception):
    """A user-facing error: bad input, bad options or an unreadable file."""
