"""Settings that a model kind or a tree builder declares as its own: the one home of
each one's name, default, help, type, choices and check. :mod:`hsw2v.settings` makes
a field of :class:`~hsw2v.settings.TrainSettings` of each built-in one (the API's
typed signature and the CLI's option come from there), and keeps the settings of
kinds and trees registered later in ``TrainSettings.extra``; a setting given with a
kind or tree that does not declare it is refused by one rule."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Setting(NamedTuple):
    """A setting of one model kind or tree builder (or of a few: the entries whose
    ``settings`` hold it)."""

    name: str
    default: Any
    help: str
    type: type | None = None
    """The value's type where the default (None) does not say it."""
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    """The values allowed (or a function giving them, for choices that are registries)."""
    flag: str | None = None
    """A yes/no setting's two flags, ``--on/--off``."""
    check: Callable[[Any], str | None] | None = None
    """A problem with a value given (one line, naming the parameter), or None."""

    @property
    def value_type(self) -> type:
        return self.type or type(self.default)

    def allowed(self) -> tuple[str, ...] | None:
        """The values allowed, if they are a list."""
        return self.choices() if callable(self.choices) else self.choices


def declared(entries: Any) -> dict[str, Setting]:
    """Every setting the registries' ``entries`` (iterables of kinds or builders)
    declare, by name (one declaration each: a setting two entries share is the
    same ``Setting``)."""
    out: dict[str, Setting] = {}
    for registry in entries:
        for entry in registry:
            for setting in entry.settings:
                if out.setdefault(setting.name, setting) is not setting:
                    raise ValueError(f"setting {setting.name} is declared twice")
    return out
