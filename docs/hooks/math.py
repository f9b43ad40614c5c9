"""A mkdocs hook: formulas become MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the
pages; this hook turns each into MathML with ``latex2mathml``, which browsers
draw natively, so a formula shows without JavaScript and without a network.
A formula whose source holds a control character (a TAB where ``\\t`` of
``\\text`` was meant, as an escaped string writes it; Markdown turns the TAB into
spaces, and the formula reads "ext") is a warning, which ``--strict`` fails.
"""

from __future__ import annotations

import html
import logging
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # (a newline may break a $$ formula)
CODE = re.compile(r"^(```|~~~).*?^\1|`[^`\n]*`", re.S | re.M)
SOURCE_FORMULA = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
log = logging.getLogger("mkdocs.hooks.math")


def control_characters(markdown: str) -> list[str]:
    """The formulas of a page's Markdown (code aside) that hold a control character."""
    return [f for f in SOURCE_FORMULA.findall(CODE.sub("", markdown)) if CONTROL.search(f)]


def on_page_markdown(markdown: str, page, **kwargs) -> str:
    for formula in control_characters(markdown):
        log.warning("%s: a formula holds a control character: %s", page.file.src_path,
                    formula.encode("unicode_escape").decode())
    return markdown


def mathml(content: str) -> str:
    """``content`` (a page's HTML) with arithmatex's formulas drawn as MathML."""
    content = BLOCK.sub(lambda m: convert(html.unescape(m.group(1)), display="block"), content)
    return INLINE.sub(lambda m: convert(html.unescape(m.group(1))), content)


def on_page_content(content: str, page, **kwargs) -> str:
    return mathml(content)
