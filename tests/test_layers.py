"""The package's structure stays layered: no import cycle (imports inside functions
count too), modules of a readable size, narrow kernels, and the README's layout
table in layer order."""
from __future__ import annotations

import ast
import re

from .conftest import REPO

PACKAGE = REPO / "hsw2v"
MAX_LINES = 420
MAX_KERNEL_PARAMS = 14


def modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text()) for p in PACKAGE.glob("*.py")
            if p.stem not in ("__init__", "__main__")}


def imports(tree: ast.Module, names: set[str]) -> set[str]:
    """The package modules that ``tree`` imports anywhere (``from .x import``,
    ``from . import x``, ``import hsw2v.x``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found.update(a.name for a in node.names)
            elif node.module and node.module.startswith("hsw2v."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("hsw2v."))
    return found & names


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(tree, set(mods)) - {name} for name, tree in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for n in sorted(edges[m]):
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


def test_import_graph_has_no_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_a_cycle_would_be_found():
    """The parser sees imports inside functions, and the search reports a cycle."""
    tree = ast.parse("def f():\n    from .model import Model\n    from . import tree\n")
    assert imports(tree, {"model", "tree", "cli"}) == {"model", "tree"}
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({**edges, "c": set()}) is None


def test_readme_layout_lists_modules_in_layer_order():
    """Each module imports only modules listed before it in the README's layout table."""
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Layout"):]
    order = re.findall(r"^\| `hsw2v/(\w+)\.py` \|", table, flags=re.MULTILINE)
    edges = graph()
    assert sorted(order) == sorted(edges), "the layout table lists every module once"
    for i, m in enumerate(order):
        later = edges[m] - set(order[:i])
        assert not later, f"{m} imports {sorted(later)}, listed after it"


def test_modules_and_kernels_stay_small():
    for path in PACKAGE.glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= MAX_LINES, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and any(
                    "jit" in ast.unparse(d) for d in node.decorator_list):
                n = len(node.args.args) + len(node.args.kwonlyargs)
                assert n <= MAX_KERNEL_PARAMS, f"{path.name}: {node.name} takes {n} parameters"
