"""Every name the package and the docs cite resolves: each Sphinx role's target
(``:func:``, ``:class:``, ``:mod:``, ``:data:``, ``:attr:``, ``:meth:`` and the
other Python roles), each dotted ``hsw2v.…`` name, in prose or in code, and each
``hsw2v/….py`` path, in every ``.py`` file of ``hsw2v/`` and ``docs/`` and every
``.md`` of ``docs/`` (``docs/benchmarks/log.md`` aside: a dated log keeps the
names of its day).

A dotted name resolves by importing its longest importable prefix and getting
each further part as an attribute. Its last part may also be a name declared
without a value: in a module's or class's ``__annotations__`` (or a base's), a
NamedTuple's ``_fields``, a dataclass's fields, or an instance attribute a method
of the class assigns (``self.name = …``).

A role's target (``~`` and a leading ``.`` stripped) outside ``hsw2v`` is looked
up as Sphinx does: in the classes whose bodies hold it, innermost first, then in
its module's namespace (what the module defines and imports). Failing those, in
the namespace of any module of the package (the docs link a short name that one
documented identifier ends with: ``docs/hooks/sphinx_roles.py``); failing that,
it is a builtin or another library's name, resolved from ``builtins`` or by import
(``numpy.memmap``, ``concurrent.futures``), and reported if that fails too. In
the docs' Markdown, which has no module, the search starts at the package's
modules. Placeholders in capitals (``hsw2v/SUB/NAME.py``) are no paths.
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path
from typing import Any

from tests.helpers import REPO

ROLE = re.compile(r":(?:py:)?(?:mod|data|class|func|meth|attr|obj|exc|const):`([^`]+)`")
DOTTED = re.compile(r"(?<![\w./~-])hsw2v(?:\.\w+)+")
PATH = re.compile(r"(?<![\w./-])hsw2v/[a-z0-9_/]*[a-z0-9_]\.py\b")
SKIPPED = {REPO / "docs" / "benchmarks" / "log.md"}


def cited_in() -> list[Path]:
    """The files whose citations are checked."""
    files = [*(REPO / "hsw2v").rglob("*.py"), *(REPO / "docs").rglob("*.py"),
             *(REPO / "docs").rglob("*.md")]
    return sorted(p for p in files if p not in SKIPPED)


def module_of(path: Path) -> str | None:
    """``hsw2v/runs/trainer.py`` -> ``hsw2v.runs.trainer``; None outside the package."""
    if path.suffix != ".py" or not path.is_relative_to(REPO / "hsw2v"):
        return None
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def declared(obj: Any) -> set[str]:
    """The names a module or class declares without a value: annotations, and a
    class's fields and instance attributes."""
    if inspect.ismodule(obj):
        return set(vars(obj).get("__annotations__", {}))
    if not inspect.isclass(obj):
        return set()
    cls = obj
    names: set[str] = set(getattr(cls, "_fields", ()))
    names |= set(getattr(cls, "__dataclass_fields__", {}))
    for base in inspect.getmro(cls):
        names |= set(vars(base).get("__annotations__", {}))
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(base)))
        except (OSError, TypeError, SyntaxError):
            continue
        names |= {t.attr for node in ast.walk(tree)
                  if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                  for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                  if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                  and t.value.id == "self"}
    return names


def walk(obj: Any, parts: list[str]) -> bool:
    """Whether each of ``parts`` is an attribute of the one before, from ``obj`` (the
    last may be declared without a value, see :func:`declared`)."""
    for k, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif inspect.ismodule(obj):
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                return k == len(parts) - 1 and part in declared(obj)
        else:
            return k == len(parts) - 1 and part in declared(obj)
    return True


def resolves(name: str) -> bool:
    """Whether the absolute dotted ``name`` names something."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        return walk(module, parts[i:])
    return False


def classes_around(tree: ast.Module, line: int) -> list[str]:
    """The qualified names of the classes whose bodies hold ``line``, innermost first."""
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and child.lineno <= line <= child.end_lineno:
                found.insert(0, prefix + child.name)
                visit(child, prefix + child.name + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue  # a class inside a function is no attribute of the module
    visit(tree, "")
    return found


def target_resolves(target: str, module: str | None, tree: ast.Module | None, line: int) -> bool:
    """Whether a role's target resolves by the rule of this module's docstring."""
    target = target.split("<")[-1].rstrip(">").strip().lstrip("~").lstrip(".")
    if target == "hsw2v" or target.startswith("hsw2v."):
        return resolves(target)
    parts = target.split(".")
    if module is not None:
        mod = importlib.import_module(module)
        for scope in [walk_to(mod, q) for q in classes_around(tree, line)] + [mod]:
            if hasattr(scope, parts[0]) or (len(parts) == 1 and parts[0] in declared(scope)):
                return walk(scope, parts)
    if any(walk(mod, parts) for mod in package_modules()):
        return True
    if hasattr(builtins, parts[0]):
        return walk(builtins, parts)
    return resolves(target)


@functools.cache
def package_modules() -> list[Any]:
    """Every module of the package, imported (``__main__`` runs the CLI: not it)."""
    import hsw2v
    return [hsw2v, *(importlib.import_module(m.name) for m in
                     pkgutil.walk_packages(hsw2v.__path__, "hsw2v.")
                     if m.name != "hsw2v.__main__")]


def walk_to(obj: Any, qualname: str) -> Any:
    """The attribute ``qualname`` (``A.B``) of ``obj``."""
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def unresolved(path: Path) -> list[str]:
    """``file:line: name`` for each citation of ``path`` that names nothing."""
    text = path.read_text()
    module = module_of(path)
    tree = ast.parse(text) if module else None
    where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in ROLE.finditer(line):
            if not target_resolves(m.group(1), module, tree, n):
                bad.append(f"{where}:{n}: {m.group(0)}")
        for m in DOTTED.finditer(line):
            if not resolves(m.group(0)):
                bad.append(f"{where}:{n}: {m.group(0)}")
        for m in PATH.finditer(line):
            if not (REPO / m.group(0)).is_file():
                bad.append(f"{where}:{n}: {m.group(0)}")
    return bad


def test_every_cited_name_resolves():
    bad = [b for path in cited_in() for b in unresolved(path)]
    assert not bad, "names that name nothing:\n" + "\n".join(bad)


def test_a_stale_name_is_found(tmp_path):
    """Each kind of citation that names nothing is reported, with its line; those
    that resolve, absolute, relative and another library's, are not."""
    page = tmp_path / "page.md"
    page.write_text("See `hsw2v.reader.slice_block_bytes` and hsw2v/semantic.py,\n"
                    ":func:`hsw2v.softmax.several_codes.step_of`, :class:`~hsw2v.Tree`,\n"
                    "hsw2v.training.kinds.ModelKind.hot_sync_words, :class:`numpy.memmap`,\n"
                    ":exc:`ValueError`, :func:`no_such_name`, hsw2v/training/block.py.\n")
    assert [b.split(":", 2)[1:] for b in unresolved(page)] == [
        ["1", " hsw2v.reader.slice_block_bytes"], ["1", " hsw2v/semantic.py"],
        ["2", " :func:`hsw2v.softmax.several_codes.step_of`"],
        ["2", " hsw2v.softmax.several_codes.step_of"], ["4", " :func:`no_such_name`"]]
    source = (REPO / "hsw2v" / "training" / "kinds.py").read_text()
    line = next(n for n, s in enumerate(source.splitlines(), 1) if "hot_sync_words: int" in s)
    tree = ast.parse(source)
    assert target_resolves("hot_sync_words", "hsw2v.training.kinds", tree, line)
    assert target_resolves("~.ModelKind.edge", "hsw2v.training.kinds", tree, line)
    assert not target_resolves("no_such_field", "hsw2v.training.kinds", tree, line)
