"""The package's structure stays layered, at two levels: no import cycle between
modules or between subpackages (imports inside functions count too), subpackages
and top-level modules import only those listed before them in the architecture
page's layer table, no underscore name is imported across subpackages, numba
kernels stay narrow, no Python function holds over 60 lines of code, and ``tests/``
mirrors the package. Imports under ``if TYPE_CHECKING:`` are for type hints only and
do not count."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "hsw2v"
ARCHITECTURE = REPO / "docs" / "architecture.md"
MAX_KERNEL_PARAMS = 14
ENTRY = ("__init__", "__main__")  # the package's own entry files, above every layer


def module_name(path: Path) -> str:
    """``hsw2v/runs/trainer.py`` -> ``runs.trainer``; ``hsw2v/softmax/__init__.py`` -> ``softmax``."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text()) for p in PACKAGE.rglob("*.py")}


def unit(module: str) -> str:
    """The layer a module belongs to: its subpackage, or itself at the top level."""
    return module.split(".")[0]


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skip


def imports(tree: ast.Module, here: str, names: set[str]) -> list[tuple[str, str]]:
    """(module, imported name) for each import of a package module in ``tree``, the
    module ``here`` (``from hsw2v.x.y import z``, ``from .y import z``,
    ``from hsw2v.x import y``, ``import hsw2v.x.y``). The name is '' for a module import."""
    package = here.split(".")[:-1] if not (PACKAGE / here.replace(".", "/")).is_dir() else here.split(".")
    skip = _type_checking_only(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            elif node.module and (node.module == "hsw2v" or node.module.startswith("hsw2v.")):
                target = node.module[len("hsw2v."):] if node.module != "hsw2v" else ""
            else:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}".strip(".")
                if sub in names:  # a module imported by name
                    found.append((sub, ""))
                elif target in names:
                    found.append((target, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("hsw2v."):
                    found.append((a.name[len("hsw2v."):], ""))
    return [(m, n) for m, n in found if m in names]


def graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The import graph of modules, and of layers (subpackages and top-level modules)."""
    mods = modules()
    names = set(mods)
    edges = {name: {m for m, _ in imports(tree, name, names)} - {name} for name, tree in mods.items()}
    layers: dict[str, set[str]] = {}
    for m, targets in edges.items():
        layers.setdefault(unit(m), set()).update(unit(t) for t in targets)
    return edges, {k: v - {k} for k, v in layers.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for n in sorted(edges.get(m, ())):
            if state.get(n) == 1:
                return [*path, m, n][[*path, m].index(n):]
            if n not in state and (cycle := visit(n, [*path, m])):
                return cycle
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (cycle := visit(m, [])):
            return cycle
    return None


def documented_layers() -> list[str]:
    """The layers in the order of the architecture page's table: rows of the form
    ``| `hsw2v/name/` |`` (a subpackage) or ``| `hsw2v/name.py` |`` (a module)."""
    text = ARCHITECTURE.read_text()
    table = text[text.index("## Layers"):]
    return re.findall(r"^\| `hsw2v/(\w+)(?:/|\.py)` \|", table, flags=re.MULTILINE)


def test_no_cycle_between_modules():
    cycle = find_cycle(graphs()[0])
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_cycle_between_subpackages():
    cycle = find_cycle(graphs()[1])
    assert cycle is None, "import cycle between layers: " + " -> ".join(cycle)


def test_a_cycle_would_be_found():
    """The parser sees imports inside functions, absolute and relative ones, and
    skips type-checking imports; the search reports a cycle."""
    names = {"model.model", "trees.tree", "trees", "cli", "runs.trainer"}
    tree = ast.parse("def f():\n    from hsw2v.model.model import Model\n    from . import tree\n"
                     "    from ..cli import x\n"
                     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from hsw2v.runs.trainer import train\n")
    found = imports(tree, "trees.plot", names)
    assert {m for m, _ in found} == {"model.model", "trees.tree", "cli"}
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({**edges, "c": set()}) is None


def test_layers_import_only_layers_listed_before_them():
    """Each subpackage or top-level module imports only those listed before it in
    the architecture page's table, which lists every one of them once."""
    order = documented_layers()
    layers = graphs()[1]
    listed = set(order) | set(ENTRY)
    assert sorted(set(order)) == sorted(order), "a layer is listed twice"
    assert set(layers) <= listed and set(order) <= set(layers), (
        f"the table and the package differ: {sorted(set(layers) ^ (set(order) | set(ENTRY)))}")
    for i, layer in enumerate(order):
        later = layers.get(layer, set()) - set(order[:i])
        assert not later, f"{layer} imports {sorted(later)}, listed after it"


def test_subpackages_say_what_they_hold():
    """Every subpackage's ``__init__`` has a docstring saying what lives there and
    what it may import."""
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc.split()) >= 15, f"{init.parent.name}: too short a docstring"
        assert "import" in doc, f"{init.parent.name}: the docstring does not say what it may import"


def test_no_underscore_name_crosses_subpackages():
    mods = modules()
    names = set(mods)
    for here, tree in mods.items():
        for module, name in imports(tree, here, names):
            if unit(module) != unit(here):
                assert not name.startswith("_"), f"{here} imports {module}.{name}"


def test_kernels_stay_narrow():
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "jit" in ast.unparse(d) for d in node.decorator_list):
                n = len(node.args.args) + len(node.args.kwonlyargs)
                assert n <= MAX_KERNEL_PARAMS, f"{path.name}: {node.name} takes {n} parameters"


MAX_FUNCTION_LINES = 60


def code_lines(node: ast.FunctionDef, source: list[str]) -> int:
    """Lines of a function's code: its docstring, comments and blank lines not counted."""
    body = node.body
    doc = (body[0].end_lineno - body[0].lineno + 1
           if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
           and isinstance(body[0].value.value, str) else 0)
    lines = source[node.lineno - 1:node.end_lineno]
    return sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#")) - doc


def test_functions_stay_short():
    """No Python function over 60 lines of code (numba kernels are exempt); the count
    itself is checked on a function of known length."""
    sample = ast.parse('def f():\n    """Doc\n    string."""\n    # a comment\n    a = 1\n\n    return a\n')
    assert code_lines(sample.body[0], 'def f():\n    """Doc\n    string."""\n    # a comment\n'
                      '    a = 1\n\n    return a\n'.splitlines()) == 3
    long = []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(source))):
            if isinstance(node, ast.FunctionDef) and not any(
                    "jit" in ast.unparse(d) or "overload" in ast.unparse(d)
                    for d in node.decorator_list):
                if (n := code_lines(node, source)) > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}: {node.name} ({n})")
    assert not long, long


PROJECT_TESTS = {"test_layers", "test_docs_site", "test_docs_examples", "test_docs_commands",
                 "test_readme", "test_packaging", "test_install", "test_hostile",
                 "test_properties", "test_registries", "test_references"}
"""Test modules at the top of ``tests/`` that test the whole project, not one module."""
MIRRORED_LINES = 100
"""A package module longer than this (``wc -l``) has a test module of its own name."""


def test_tests_mirror_the_package():
    """``tests/SUB/test_NAME.py`` tests ``hsw2v/SUB/NAME.py``, ``tests/test_NAME.py`` a
    top-level ``hsw2v/NAME.py`` (or the whole project: PROJECT_TESTS), and
    ``tests/references/`` holds the independent references beside their own tests;
    every module of the package (``__init__.py`` aside) over MIRRORED_LINES lines, as
    ``wc -l`` counts them, has its namesake test module."""
    tests = REPO / "tests"
    strays = []
    for path in tests.rglob("test_*.py"):
        place = path.relative_to(tests)
        if place.parts[0] == "references":
            subject = tests / "references" / path.name.removeprefix("test_")
        elif len(place.parts) == 1 and path.stem in PROJECT_TESTS:
            continue
        else:
            subject = PACKAGE.joinpath(*place.parts[:-1], path.name.removeprefix("test_"))
        if not subject.is_file():
            strays.append(f"{place} (no {subject.relative_to(REPO)})")
    assert not strays, strays
    for sub in (p for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))):
        assert (sub / "__init__.py").is_file() and ast.get_docstring(
            ast.parse((sub / "__init__.py").read_text())), f"tests/{sub.name} says what it tests"
    untested = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__init__.py" or path.read_bytes().count(b"\n") <= MIRRORED_LINES:
            continue
        place = path.relative_to(PACKAGE)
        namesake = tests.joinpath(*place.parts[:-1], f"test_{place.name}")
        if not namesake.is_file():
            untested.append(f"{path.relative_to(REPO)} (no {namesake.relative_to(REPO)})")
    assert not untested, untested
