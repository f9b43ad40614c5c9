"""The docs site builds strictly, fails on a broken link, and renders as a reader
reads it: the CLI reference shows each option's real default and its text as
written, the API reference holds no raw Sphinx roles and each parameter's own
default, and formulas are MathML (no script, no network).

Needs the ``docs`` extra (``pip install -e '.[test,docs]'``, as the README's test
command and CI install it).
"""
from __future__ import annotations

import dataclasses
import html
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")
pytest.importorskip("latex2mathml")

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the project laid out at ``root``."""
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=root, env=ENV, capture_output=True, text=True, timeout=300)


def copy_of_docs(tmp: Path) -> Path:
    """A copy of mkdocs.yml and docs/ to change, built from its own directory."""
    root = tmp / "project"
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copy(REPO / "README.md", root)  # (Getting started includes its Quick start)
    shutil.copytree(REPO / "docs", root / "docs")
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(REPO, out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return out


def text_of(fragment: str) -> str:
    """The text a reader sees of an HTML fragment."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split()).replace(" ,", ",")


def table_rows(page: str) -> list[list[str]]:
    """Every table row of a page, as the text of its cells."""
    return [[text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", page, re.S)]


def test_a_broken_link_fails_the_build(tmp_path):
    root = copy_of_docs(tmp_path)
    page = root / "docs" / "guides" / "files.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr


def test_the_unchanged_copy_builds(tmp_path):
    """The copy the broken-link test changes builds as it is (so the link broke it)."""
    done = build(copy_of_docs(tmp_path), tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]


def test_cli_reference_shows_each_default_that_help_shows(site):
    """Every ``[default: X]`` of every command's ``--help`` is in that option's row."""
    page = (site / "cli" / "index.html").read_text()
    assert "Sentinel" not in page
    from hsw2v.cli import cli

    checked = 0
    for name in cli.list_commands(None):
        start = page.index(f'id="hsw2v-{name}"')
        rows = [cells for cells in table_rows(page[start:page.find("<h2", start)]) if cells]
        helped = subprocess.run([sys.executable, "-m", "hsw2v", name, "--help"], env=ENV,
                                capture_output=True, text=True, check=True).stdout
        entries: list[str] = []  # one option's lines, joined
        for line in helped.split("Options:", 1)[-1].splitlines():
            if re.match(r"  -", line):
                entries.append(line)
            elif entries and line.startswith("   "):
                entries[-1] += " " + line.strip()
        for entry in entries:
            m = re.search(r"\[default: ([^\]]+)\]", entry)
            if not m:
                continue
            first = re.match(r"\s*(-[-\w]+)", entry)[1]
            row = next(cells for cells in rows if first in cells[0].split(", "))
            assert m[1] in row[2], (name, first, m[1], row)
            checked += 1
    assert checked >= 15  # (the settings a model kind sets say theirs in the help text: [5; lbl 16])


def test_cli_reference_keeps_help_text_as_written(site):
    page = text_of((site / "cli" / "index.html").read_text())
    assert "'word1<TAB>word2<TAB>score'" in page
    assert "HSW2V_CACHE_SIZE" in page


def _shown(value) -> str:
    """A default as the reference writes it (independently of the package's formatting)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, float) else str(value)


def test_api_reference_has_no_sphinx_roles_and_each_parameter_its_default(site):
    """Each parameter's Default cell holds the value a run uses: the signature's
    own, a named constant's value, or, for a setting that the model kind decides,
    what ``TrainSettings`` resolves to for each kind, given nothing else."""
    import hsw2v.api
    from hsw2v.settings import TrainSettings
    from hsw2v.training.kinds import model_kinds

    page = (site / "api" / "index.html").read_text()
    assert not re.search(r":(mod|data|class|func|meth|attr):", page)
    assert not re.search(r"\[\[\w+\]\]", page)
    params = {f"**{n}" if p.kind is inspect.Parameter.VAR_KEYWORD else n: p
              for n, p in inspect.signature(hsw2v.api.train).parameters.items()}
    start = page.index('id="hsw2v.api.train"')
    section = page[start:page.index('class="doc doc-object', start + 1)]
    rows = {cells[0]: cells for cells in table_rows(section) if len(cells) == 4}
    assert set(params) <= set(rows)
    resolved = {kind: TrainSettings(arch=kind).resolved() for kind in model_kinds}
    by_kind = 0
    for name, p in params.items():
        shown = rows[name][3]
        if p.kind is inspect.Parameter.VAR_KEYWORD:  # (none given: an empty dict)
            assert shown == "{}", (name, shown)
        elif p.default is not None or name in ("corpus", "sentences", "max_vocab", "vocab"):
            assert shown == repr(p.default), (name, shown)
        elif name == "threads":
            assert shown == "all cores"
        elif name in {f.name for f in dataclasses.fields(TrainSettings)} and name != "wordnet":
            segments = shown.split("; ")
            for kind, settings in resolved.items():
                value = getattr(settings, name)
                if value is None:  # (decided by other settings: the text says by which)
                    continue
                own = [s[len(kind) + 1:] for s in segments if s.startswith(kind + " ")]
                assert (own or segments)[0].startswith(_shown(value)), (name, kind, value, shown)
                by_kind += 1
    assert by_kind >= 24
    doc = inspect.getdoc(hsw2v.api.train)
    assert "[[" not in doc and "Default: 5; lbl 16." in " ".join(doc.split())
    assert "(default 12)" not in doc and "ADAPTIVE(0.25)" not in doc


def test_one_quick_start(site):
    """The README's Quick start is the one: Getting started shows it, as it is."""
    readme = (REPO / "README.md").read_text()
    first_run = re.search(r"^13684 words x 100 dims in .*$", readme, re.M)[0]
    page = (site / "getting-started" / "index.html").read_text()
    assert first_run in html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "--8&lt;--" not in page and "--8<--" not in page
    home = (site / "index.html").read_text()
    assert "13684 words x 100 dims" not in home  # the home page links to it instead


def test_formulas_are_mathml(site):
    page = (site / "guides" / "language-model" / "index.html").read_text()
    assert page.count("<math") >= 5
    outside = re.sub(r"<math.*?</math>", "", page, flags=re.S)
    assert "_{" not in outside and "\\hat" not in outside
    assert not re.search(r"<script[^>]+(mathjax|katex)", page, re.I)


def test_no_formula_of_the_site_holds_a_control_character(site):
    """Every formula of every page, as built: no TAB (``\t`` of ``\text`` typed in
    an escaped string), no other control character."""
    formulas = [m for page in site.rglob("*.html")
                for m in re.findall(r"<math.*?</math>", page.read_text(), re.S)]
    assert len(formulas) >= 5
    for formula in formulas:
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", formula), formula
    page = (site / "guides" / "language-model" / "index.html").read_text()
    assert "<mtext>tokens</mtext>" in page and "exttokens" not in page


def test_a_formula_with_a_tab_fails_the_build(tmp_path):
    root = copy_of_docs(tmp_path)
    page = root / "docs" / "guides" / "files.md"
    page.write_text(page.read_text() + "\nA formula: $x / \text{tokens}$.\n")
    done = build(root, tmp_path / "site")
    assert done.returncode != 0
    assert "control character" in done.stderr and "guides/files.md" in done.stderr


def test_tab_separated_output_lines_up_as_in_a_terminal(site):
    """Tabs in code blocks stop every 8 columns, as a terminal's do."""
    page = (site / "getting-started" / "index.html").read_text()
    assert re.search(r"five\t\S*0\.\d{4}", page)  # the tab itself reaches the page
    css = "".join(p.read_text() for p in (site / "stylesheets").glob("*.css"))
    assert re.search(r"\.md-typeset pre[^{]*\{[^}]*tab-size:\s*8", css)
    assert "stylesheets/extra.css" in (site / "index.html").read_text()


def test_the_commands_guide_lists_every_train_option():
    """The commands guide's table of ``hsw2v train`` options names every option the
    command takes, and every model kind and tree kind the registries hold."""
    from hsw2v.cli import cli
    from hsw2v.training.kinds import model_kinds
    from hsw2v.trees.registry import tree_builders

    text = (REPO / "docs" / "guides" / "commands.md").read_text()
    table = text[text.index("`hsw2v train` options"):text.index("## Evaluation sets")]
    firsts = [re.split(r"(?<!\\)\|", row)[1] for row in table.splitlines() if row.startswith("| `")]
    listed = set(re.findall(r"--[a-z][a-z-]*", " ".join(firsts)))
    options = {o for p in cli.commands["train"].params for o in p.opts + p.secondary_opts
               if o.startswith("--") and o != "--help"}
    assert options - listed == set()
    arch = next(f for f in firsts if f.strip().startswith("`--arch "))
    tree = next(f for f in firsts if f.strip().startswith("`--tree "))
    assert set(re.search(r"--arch ([\w\\|]+)", arch)[1].split("\\|")) == set(model_kinds)
    assert set(re.search(r"--tree ([\w\\|]+)", tree)[1].split("\\|")) == set(tree_builders)
