"""A mkdocs hook: formulas become MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the
pages; this hook turns each into MathML with ``latex2mathml``, which browsers
draw natively, so a formula shows without JavaScript and without a network.
A formula holding a control character (a TAB where ``\\t`` of ``\\text`` was
meant, as an escaped string writes it) is a warning, which ``--strict`` fails.
"""

from __future__ import annotations

import html
import logging
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
log = logging.getLogger("mkdocs.hooks.math")


def _checked(latex: str, where: str) -> str:
    """``latex``, warned about if it holds a control character (newlines aside)."""
    bad = CONTROL.search(latex.replace("\n", " "))
    if bad:
        log.warning("%s: a formula holds the control character %r: %s", where, bad.group(),
                    latex.replace("\t", "\\t"))
    return latex


def mathml(content: str, where: str = "a page") -> str:
    """``content`` (a page's HTML) with arithmatex's formulas drawn as MathML."""
    content = BLOCK.sub(lambda m: convert(_checked(html.unescape(m.group(1)), where),
                                          display="block"), content)
    return INLINE.sub(lambda m: convert(_checked(html.unescape(m.group(1)), where)), content)


def on_page_content(content: str, page, **kwargs) -> str:
    return mathml(content, page.file.src_path)
