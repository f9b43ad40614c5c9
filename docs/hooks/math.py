"""A mkdocs hook: formulas become MathML when the site is built.

``pymdownx.arithmatex`` (generic mode) marks ``$...$`` and ``$$...$$`` in the
pages; this hook turns each into MathML with ``latex2mathml``, which browsers
draw natively, so a formula shows without JavaScript and without a network.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert

INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)


def mathml(content: str) -> str:
    """``content`` (a page's HTML) with arithmatex's formulas drawn as MathML."""
    content = BLOCK.sub(lambda m: convert(html.unescape(m.group(1)), display="block"), content)
    return INLINE.sub(lambda m: convert(html.unescape(m.group(1))), content)


def on_page_content(content: str, page, **kwargs) -> str:
    return mathml(content)
