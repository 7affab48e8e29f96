"""One session factory (issue 38, part 3): production code builds a running Session only
through engines/sessions.py, and storage hands back records, never live sessions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engines import sessions
from engines.sessions import RunOptions
from memory.lane_spec import LaneSpec
from providers.fake import FakeTransport
from storage.store import Store
from tests.storage.store_support import make_session, openai_settings

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = ["app.py", "pages", "ui", "present", "engines", "lanes", "storage", "memory",
              "plugins", "providers", "scenarios", "cli", "memorylab", "scripts"]  # fmt: skip
BUILDERS = {"lanes/session.py", "engines/sessions.py"}


def _files() -> list[Path]:
    out = []
    for name in PRODUCTION:
        path = ROOT / name
        out.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return out


def _builds_a_session(tree: ast.AST) -> list[int]:
    """Lines that call lanes.session.Session or any `from_snapshot`, or define
    `continue_session` (the store's old way to hand back a live session)."""
    local = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "lanes.session":
            local |= {a.asname or a.name for a in node.names if a.name == "Session"}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in local:
                lines.append(node.lineno)
            if isinstance(f, ast.Attribute) and f.attr in ("from_snapshot", "Session"):
                lines.append(node.lineno)
        if isinstance(node, ast.FunctionDef) and node.name == "continue_session":
            lines.append(node.lineno)
    return lines


def test_production_code_builds_sessions_only_through_the_factory():
    files = _files()
    assert len(files) > 100
    found = {
        str(p.relative_to(ROOT)): lines
        for p in files
        if str(p.relative_to(ROOT)) not in BUILDERS
        and (lines := _builds_a_session(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_scan_sees_a_session_built_elsewhere():
    tree = ast.parse(
        "from lanes.session import Session as S\nS(system_prompt='x')\n"
        "import lanes.session\nlanes.session.Session(lanes=[])\nX.from_snapshot({})\n"
    )
    assert _builds_a_session(tree) == [2, 4, 5]


def test_start_needs_a_provider():
    with pytest.raises(ValueError, match="needs a provider"):
        sessions.start("You help.", [LaneSpec("full")], RunOptions())


def test_a_resumed_session_runs_on_the_saved_provider_unless_told(tmp_path):
    """Without a provider, the saved one (through the endpoint policy); with one, that one;
    the transport given either way."""
    store = Store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    session = make_session(lanes=("full", "summary"))
    store.track(session)
    session.run_turn("I'm Chiru.")
    saved = store.load(session.id)
    transport = FakeTransport()
    again = sessions.resume(saved, RunOptions(transport=transport))
    assert again.provider.model == session.provider.model
    assert again.provider.base_url == session.provider.base_url
    told = openai_settings().with_(model="gpt-4o")
    other = sessions.continue_stored(store, session.id, RunOptions(told, transport=transport))
    assert other.provider.model == "gpt-4o"
    for live in (again, other):
        assert live.records() == session.records()
        live.run_turn("What is my name?")
        assert live.turn == 2
    assert transport.calls  # the given transport answered, not a real endpoint
