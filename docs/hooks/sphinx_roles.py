"""A griffe extension: Sphinx roles in docstrings become Markdown.

The package's docstrings cite names as Sphinx does (``:class:`~hsw2v.Tree```,
``:mod:`hsw2v.settings```), which help() shows well. mkdocstrings renders Markdown,
so each role becomes inline code, linked where the name has a page of its own in
the API reference (the ``:::`` lines of ``docs/api.md``).
"""

from __future__ import annotations

import re
from pathlib import Path

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|data|class|func|meth|attr|obj|exc|const):`(~?)([^`]+)`")
API_PAGE = Path(__file__).resolve().parent.parent / "api.md"


def documented() -> set[str]:
    """The identifiers that the API reference renders: each ``::: name`` line."""
    return {m.group(1) for m in re.finditer(r"^::: *([\w.]+)", API_PAGE.read_text(), re.M)}


def markdown_of(text: str, targets: set[str]) -> str:
    """``text`` with each Sphinx role replaced by inline code, or by a link where
    exactly one documented identifier ends with the role's name."""
    def one(m: re.Match) -> str:
        short, name = m.group(1), m.group(2).strip().lstrip(".")
        shown = name.rsplit(".", 1)[-1] if short else name
        found = [t for t in targets if t == name or t.endswith("." + name)]
        return f"[`{shown}`][{found[0]}]" if len(found) == 1 else f"`{shown}`"
    return ROLE.sub(one, text)


class SphinxRoles(griffe.Extension):
    """Rewrites every docstring's Sphinx roles as it is loaded."""

    def __init__(self) -> None:
        self.targets = documented()

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value, self.targets)
