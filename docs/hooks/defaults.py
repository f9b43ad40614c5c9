"""A griffe extension: the API reference's parameter tables state each real default.

A setting whose default belongs to the model kind is ``None`` in a signature
(``window=None``: 5, or 16 for lbl); a default held by a named constant reads as
the constant's name (``CHECKPOINT_MINUTES``). This fills the Default column from
the package's registries instead, through the same functions that ``--help``
and ``help(hsw2v.train)`` use (:func:`hsw2v.settings.kind_defaults`), and the
``[[name]]`` marks of a docstring as :func:`hsw2v.settings.with_kind_defaults`
fills them at import.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import fields

import griffe

from hsw2v.settings import KIND_DEFAULTS, TrainSettings, kind_defaults, with_kind_defaults

BRACKETED = re.compile(r"\[([^\[\]]+)\]\.?$")


def _runtime(obj: griffe.Object):
    """The Python object that ``obj`` describes, or None."""
    module = importlib.import_module(obj.module.path)
    found = module
    for part in obj.path[len(obj.module.path) + 1:].split("."):
        found = getattr(found, part, None)
    return found


def shown_default(name: str, value) -> str | None:
    """What the Default column shows for parameter ``name`` whose default is ``value``
    at run time, where that differs from the signature's text; else None."""
    settings = {f.name: f for f in fields(TrainSettings)}
    if value is None and name in KIND_DEFAULTS:
        return kind_defaults(name, python=True).replace("``", "")  # (shown as code already)
    if value is None and name in settings:
        m = BRACKETED.search(settings[name].metadata.get("help", ""))
        return m[1] if m else None
    return None


class KindDefaults(griffe.Extension):
    """Fills the Default column and the docstrings' ``[[name]]`` marks."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and "[[" in obj.docstring.value:
            obj.docstring.value = with_kind_defaults(obj.docstring.value)
        if not obj.is_function or not obj.path.startswith("hsw2v."):
            return
        try:
            signature = inspect.signature(_runtime(obj))
        except (ImportError, TypeError, ValueError):
            return
        written = {p.name: p for p in obj.parameters}
        for name, real in signature.parameters.items():  # keywords made at import (the
            if name not in written:  # kinds' and trees' settings): into griffe's signature
                obj.parameters.add(griffe.Parameter(
                    name, annotation=str(real.annotation),
                    kind=griffe.ParameterKind.keyword_only, default=repr(real.default)))
        shown = {}
        for name, real in signature.parameters.items():  # (with keywords made at import)
            if real.default is inspect.Parameter.empty:
                continue
            text = shown_default(name, real.default)
            if text is None and (name not in written
                                 or isinstance(written[name].default, griffe.ExprName)):
                text = repr(real.default)  # a named constant's value, or a made keyword's
            if text is not None:
                shown[name] = text
        if shown and obj.docstring is not None:  # the table's column; the signature stays
            for section in obj.docstring.parsed:
                if section.kind is griffe.DocstringSectionKind.parameters:
                    for documented in section.value:
                        documented.default = shown.get(documented.name, documented.default)
