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


FORBIDDEN = {
    "memory": {
        "streamlit",
        "openai",
        "anthropic",
        "httpx",
        "requests",
        "urllib",
        "socket",
        "http",
        "providers",
        "lab",
        "xllamacpp",
    },
    "providers": {"streamlit", "lab"},
    "lab": {"streamlit", "ui", "present"},
    "present": {"streamlit", "ui"},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_layer_imports(package):
    modules = imported_modules(package)
    assert modules, f"{package}/ has no modules"
    for path, names in modules.items():
        bad = names & FORBIDDEN[package]
        assert not bad, f"{path} imports {sorted(bad)}"
