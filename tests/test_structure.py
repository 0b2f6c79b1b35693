"""The package's import graph, counting imports inside functions: no cycle, and nothing imports the root."""

from __future__ import annotations

import ast
from pathlib import Path

import posviz

PACKAGE = Path(posviz.__file__).parent
MAX_LINES = 600


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Sibling modules ``path`` imports anywhere in its text (top level or inside a function);
    ``from . import name`` of a name that is not a module counts as importing the root."""
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                targets.add(node.module.split(".")[0])
            else:
                targets.update(a.name if a.name in modules else "__init__" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("posviz"):
            parts = node.module.split(".")
            targets.add(parts[1] if len(parts) > 1 else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("posviz."):
                    targets.add(alias.name.split(".")[1])
    return targets


def _graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    names = set(modules) | {"__init__"}
    return {name: {t for t in _imports(path, names) if t in names and t != name} for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_inside_posviz():
    graph = _graph()
    assert {"methods", "models", "relative", "t5", "results"} <= set(graph)
    assert _cycles(graph) == []


def test_the_import_reader_sees_function_level_and_root_imports(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from . import __version__, rope\n    from .models import TinyTransformer\n")
    assert _imports(planted, {"rope", "models"}) == {"__init__", "rope", "models"}


def test_no_module_imports_the_package_root():
    graph = _graph()
    assert [name for name, targets in graph.items() if "__init__" in targets] == []


def test_registry_lives_in_methods_and_models_holds_the_model():
    graph = _graph()
    assert "models" not in graph["relative"] | graph["t5"] | graph["methods"]
    assert posviz.POSITION_METHODS is posviz.methods.POSITION_METHODS


def test_modules_are_small_enough_to_read():
    long = {p.name: n for p in PACKAGE.glob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
