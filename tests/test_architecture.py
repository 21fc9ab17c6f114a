"""The layout's rules, checked on the source: no import cycle, layers only import downwards.

Every ``import`` counts, including the lazy ones inside functions (a lazy import still makes
the importing module depend on the imported one).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "parakit"

#: packages (and top-level modules) -> what they may import, besides the data model
#: (``schema``, ``labels``, ``errors``, the ``registry`` helper) and themselves. ``cli`` wires
#: stages together and may import anything; ``parakit/__init__`` (the ``read``/``write``
#: facade) and ``__main__`` too.
ALLOWED: dict[str, set[str]] = {
    "offline": set(),
    "io": {"split"},
    "text": set(),
    "split": set(),
    "lexical": {"text"},
    "describe": {"io", "text"},
    "vectors": {"io", "text", "offline"},
    "build": {"io", "text", "vectors", "offline"},
    "annotate": {"io", "text", "split", "build"},
    "evaluate": {"io", "text", "vectors", "offline"},
    "models": {"io", "text", "vectors", "build", "evaluate", "offline", "split"},
    "mine": {"io", "text", "vectors", "models", "evaluate", "offline"},
    "analysis": {"io", "text", "evaluate"},
    "examples": {"io"},
}
DATA_MODEL = {"schema", "labels", "errors", "registry"}
TOP = {"cli", "parakit", "__main__"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {
        _module_name(p): p
        for p in SRC.rglob("*.py")
        if "migrations" not in p.relative_to(SRC).parts
    }
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    # ``from pkg import submodule`` depends on the submodule, not on pkg/__init__
                    targets.append(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in modules and target != name:
                    edges[name].add(target)
    for name in modules:
        edges.setdefault(name, set())
    return edges


def _unit(module: str) -> str:
    """The package (``parakit.mine.x`` -> ``mine``) or top-level module of a module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "parakit"


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for vertex in list(edges):
        if vertex not in index:
            visit(vertex)
    return found


def test_no_import_cycle_between_files():
    assert _strongly_connected(_graph()) == []


def test_no_import_cycle_between_packages():
    edges = _graph()
    packages: dict[str, set[str]] = defaultdict(set)
    for source, targets in edges.items():
        for target in targets:
            if _unit(source) != _unit(target):
                packages[_unit(source)].add(_unit(target))
    assert _strongly_connected(packages) == []


def test_layers_only_import_downwards():
    wrong = []
    for source, targets in _graph().items():
        unit = _unit(source)
        if unit in TOP:
            continue
        assert unit in ALLOWED or unit in DATA_MODEL, f"{unit}: add it to ALLOWED"
        for target in targets:
            other = _unit(target)
            if other in (unit, *DATA_MODEL) or other in ALLOWED.get(unit, set()):
                continue
            if target == "parakit" and source == "parakit.analysis.report":
                continue  # reports stamp parakit.__version__ (a constant of the facade)
            wrong.append(f"{source} -> {target}")
    assert wrong == []


def test_only_cli_imports_cli():
    importers = {s for s, ts in _graph().items() for t in ts if _unit(t) == "cli"}
    assert {_unit(s) for s in importers} <= {"cli", "__main__"}
