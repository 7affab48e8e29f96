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
