"""The architecture as tests: no import cycles, the engine is a library, layers import downwards only.

Reads the source with `ast` (nothing is imported), so a violation is reported with the importing file.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "interfaces", "workbench")
# The engine is a library: no web framework, CLI toolkit or UI.
FORBIDDEN_IN_ENGINE = ("click", "rich", "streamlit", "fastapi", "starlette", "uvicorn", "grpc", "flask", "pyvis")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (lazy imports inside functions count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _graph() -> nx.DiGraph:
    modules = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name, path=path)
        for target in _imports(path):
            if target in modules and target != name:
                graph.add_edge(name, target)
    return graph


def test_no_import_cycles() -> None:
    graph = _graph()
    # A package __init__ that re-exports its own submodules is not a cycle of the design.
    for node in list(graph):
        for target in list(graph.successors(node)):
            if target.startswith(node + "."):
                graph.remove_edge(node, target)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join([*c, c[0]]) for c in cycles[:5])


@pytest.mark.parametrize("path", sorted((ROOT / "engine").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_imports_no_framework_and_nothing_above_it(path: Path) -> None:
    for module in _imports(path):
        top = module.split(".")[0]
        assert top not in FORBIDDEN_IN_ENGINE, f"{path.relative_to(ROOT)} imports {module}: the engine is a library"
        assert top not in ("interfaces", "workbench", "benchmarks"), f"{path.relative_to(ROOT)} imports {module}"


def test_sql_lives_in_the_store() -> None:
    """Every SQL statement is written in engine/store/ (indexes and ingestion call its methods)."""
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        if "store" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value.lstrip().upper()
                if text.startswith(("SELECT ", "INSERT ", "UPDATE ", "DELETE FROM", "CREATE TABLE", "PRAGMA ")):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"SQL outside engine/store/: {offenders}"


def test_no_module_reaches_into_another_modules_private_names() -> None:
    """`from x import _private` and `obj._private` across packages are how layers start to leak."""
    offenders = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    offenders += [f"{path.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                                  if a.name.startswith("_") and not a.name.startswith("__")]
    assert not offenders, offenders


# The engine's floors, lowest first: a module imports only from its own floor or the ones below it. Modules
# on no floor (models, config, errors, api, analogy, ...) are the ground every floor may stand on.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("store", ("engine.store",)),
    ("index", ("engine.index", "engine.structures")),
    ("recall", ("engine.recall",)),
    ("write", ("engine.writer", "engine.ingest")),
    ("facade", ("engine.facade",)),
    ("interfaces", ("interfaces",)),
)
# Recall and write stand side by side on the floor above the indexes: neither imports the other.
SIDE_BY_SIDE = {"recall": 2, "write": 2}


def _floor(module: str) -> tuple[str, int] | None:
    """The floor a module stands on (its name and height), or None for the ground."""
    for level, (name, prefixes) in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return name, SIDE_BY_SIDE.get(name, level)
    return None


def test_the_engine_has_floors_and_nothing_imports_upwards() -> None:
    graph = _graph()
    back_arrows = []
    for source, target in graph.edges:
        low, high = _floor(source), _floor(target)
        if low is None or high is None or low[0] == high[0]:
            continue
        if high[1] >= low[1]:
            back_arrows.append(f"{source} ({low[0]}) -> {target} ({high[0]})")
    assert not back_arrows, "imports against the floors: " + "; ".join(sorted(back_arrows))


def test_storage_backends_do_not_import_each_other() -> None:
    """Each backend stands on the shared store modules (interface, rows, windows, lexical) alone, so that one
    can change or go without the other."""
    backends = ("engine.store.sqlite", "engine.store.postgres")
    crossing = [f"{source} -> {target}" for source, target in _graph().edges
                for mine in backends if source.startswith(mine + ".") or source == mine
                for other in backends if other != mine and (target == other or target.startswith(other + "."))]
    assert not crossing, "one storage backend imports another: " + "; ".join(sorted(crossing))
