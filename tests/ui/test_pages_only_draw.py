"""Pages only draw (issue 38, part 4): no page file over 300 lines, and every function a page
defines draws something (calls Streamlit); computations live in ui/ or engines/ modules,
tested there."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "pages").glob("*.py")) + [ROOT / "app.py"]
NOT_DRAWING = {"cache_data", "cache_resource", "session_state", "query_params", "secrets"}


def _root_and_first(node: ast.expr) -> tuple[str | None, str | None]:
    """For `st.a.b(...)`: ("st", "a")."""
    first = None
    while isinstance(node, ast.Attribute):
        first = node.attr
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), first


def _non_drawing_functions(tree: ast.AST) -> list[str]:
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        draws = any(
            isinstance(node, ast.Call)
            and _root_and_first(node.func)[0] == "st"
            and _root_and_first(node.func)[1] not in NOT_DRAWING
            for node in ast.walk(fn)
        )
        if not draws:
            out.append(fn.name)
    return out


def test_no_page_is_over_300_lines():
    assert len(PAGES) >= 8
    long = {
        p.name: n for p in PAGES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300
    }
    assert long == {}


def test_every_function_a_page_defines_draws():
    found = {
        p.name: names
        for p in PAGES
        if (names := _non_drawing_functions(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_check_sees_a_function_that_only_computes():
    tree = ast.parse(
        "@st.cache_data\ndef f(x):\n    return x + 1\n"
        "def g():\n    st.session_state.x = 1\n"
        "def h():\n    c1, c2 = st.columns(2)\n    c1.write('x')\n"
    )
    assert _non_drawing_functions(tree) == ["f", "g"]
