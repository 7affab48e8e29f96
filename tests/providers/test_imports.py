"""providers/ never imports streamlit: not directly, and not through anything it loads."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_module_under_providers_imports_streamlit():
    files = sorted((ROOT / "providers").rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] != "streamlit", f"{path.name} imports {name}"


def test_importing_providers_loads_no_streamlit():
    modules = [
        f"providers.{p.stem}"
        for p in sorted((ROOT / "providers").glob("*.py"))
        if p.stem != "__init__"
    ]
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in ["providers", *modules])
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'lanes', 'engines', 'storage', 'ui'))\n"
        + "print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
