"""The layers of DESIGN.md: the core imports no UI, no network client and no SDK."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names
    return found


PROJECT = {
    "memory",
    "providers",
    "scenarios",
    "lanes",
    "storage",
    "engines",
    "present",
    "ui",
    "cli",
    "memorylab",
    "plugins",
}
NETWORK = {"openai", "anthropic", "httpx", "requests", "urllib", "socket", "http", "xllamacpp"}

# What each package may NOT import (its docstring says what it may).
FORBIDDEN = {
    "memory": {"streamlit", *NETWORK, *(PROJECT - {"memory"})},
    "providers": {"streamlit", *(PROJECT - {"memory", "providers"})},
    "scenarios": {"streamlit", *NETWORK, *(PROJECT - {"memory", "scenarios"})},
    "lanes": {"streamlit", "ui", "present", "storage", "engines", "cli"},
    "storage": {"streamlit", "ui", "present", "engines", "cli"},
    "engines": {"streamlit", "ui", "present", "cli"},
    "present": {"streamlit", "ui", "cli"},
    "cli": {"streamlit", "ui"},
    "memorylab": {"streamlit", "ui", "present", "cli"},
    "plugins": {"streamlit", *NETWORK, *(PROJECT - {"memory", "plugins"})},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_imports(package):
    modules = imported_modules(package)
    assert modules, f"{package}/ has no modules"
    for path, names in modules.items():
        bad = names & FORBIDDEN[package]
        assert not bad, f"{path} imports {sorted(bad)}"


def test_every_package_is_checked():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name != "tests"}
    assert packages == PROJECT, "a new package needs its row in FORBIDDEN and a docstring"
    for name in PROJECT:
        doc = ast.get_docstring(ast.parse((ROOT / name / "__init__.py").read_text()))
        assert doc and "May import" in doc, f"{name}/__init__.py must say what it may import"


def module_imports(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, anywhere in its text (imports
    inside functions and under TYPE_CHECKING count: a lazy import is still a circle)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[module] = names
    return {m: {n for n in names if n in graph and n != m} for m, names in graph.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a circle (strongly connected
    components of more than one module), each sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                other = stack.pop()
                group.append(other)
                if other == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(found)


@pytest.mark.parametrize("package", sorted(PROJECT))
def test_no_import_circle_inside_a_package(package):
    assert circles(module_imports(package)) == []


def test_the_circle_finder_finds_a_lazy_import_circle(tmp_path):
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}
    assert circles(graph) == [["p.a", "p.b", "p.c"]]
    assert circles({"p.a": {"p.b"}, "p.b": set()}) == []


def test_storage_is_used_through_its_one_face():
    """Outside storage/ (and its tests), the app imports storage/store.py only."""
    places = [*(ROOT / p for p in sorted(PROJECT - {"storage"})), ROOT / "pages", ROOT / "bench"]
    files = [f for place in places for f in sorted(place.rglob("*.py"))] + [ROOT / "app.py"]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                if name == "storage" and isinstance(node, ast.ImportFrom):
                    bad = [a.name for a in node.names if a.name != "store"]
                    assert not bad, f"{path.relative_to(ROOT)} imports storage.{bad[0]}"
                elif name.startswith("storage."):
                    assert name == "storage.store", f"{path.relative_to(ROOT)} imports {name}"
