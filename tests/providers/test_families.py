"""Provider families behind one registry: nothing outside providers/families/ switches on a
provider's kind, family or preset, and a family registered later (one module, one
`register` line) is offered by the sidebar, the CLI's `--provider` and a sweep plan."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cli.main import main
from providers import ProviderSettings, build_body, catalog
from providers.catalog import ModelInfo, Preset
from providers.families import BUILT_IN, FAMILIES, family, register, unregister
from providers.families.base import CallSettings
from providers.families.openai import OpenAIChat
from tests.providers.conftest import make_request
from tests.ui.conftest import APP

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5  # the bound on such checks outside the family modules and the registry
WORDS = ("kind", "family", "preset", "provider")


def _provider_values() -> set[str]:
    return set(FAMILIES) | set(catalog.PRESETS) | {"openai", "anthropic"}


def _literals(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts) and all(isinstance(v, str) for v in values):
            return set(values)
    return set()


def _words(node: ast.AST) -> list[str]:
    """The identifiers an expression reads, and the attribute names given to getattr()."""
    out: list[str] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.append(n.id)
        elif isinstance(n, ast.Attribute):
            out.append(n.attr)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr":
            out.extend(a.value for a in n.args[1:2] if isinstance(a, ast.Constant))
    return [str(w) for w in out]


def provider_switches(source: str, values: set[str]) -> list[str]:
    """Comparisons of a kind / family / preset / provider against a provider's name, in any
    spelling (`==`, `!=`, `in (...)`, getattr), and dicts keyed by two or more kinds."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if not set().union(*(_literals(s) for s in sides)) & values:
                continue
            named = [w.lower() for s in sides if not _literals(s) for w in _words(s)]
            if any(word in w for w in named for word in WORDS):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if len(keys & set(FAMILIES)) >= 2:
                found.append(f"{node.lineno}: a dict keyed by provider kinds")
    return found


def test_the_switch_finder_sees_every_spelling():
    values = _provider_values()
    spelled = [
        'if settings.kind == "embedded": pass',
        'x = "anthropic" if settings.kind == "anthropic" else "openai"',
        'ok = preset.kind in ("embedded", "anthropic")',
        'ok = app.provider.preset != "embedded"',
        'ok = getattr(settings, "kind", None) == "embedded"',
        'ok = family == "openai"',
        'LABELS = {"openai": "OpenAI", "anthropic": "Anthropic"}',
    ]
    for line in spelled:
        assert provider_switches(line, values), line
    assert not provider_switches('ok = block.kind == "summary"', values)


def test_provider_switches_live_only_in_the_families():
    values = _provider_values()
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", "tests", "bench", "wip"}:
            continue
        if rel.parts[:2] == ("providers", "families"):
            continue
        found += [f"{rel}:{hit}" for hit in provider_switches(path.read_text("utf-8"), values)]
    assert len(found) <= LIMIT, "\n".join(found)


# ---- a family registered later -------------------------------------------------------------


@dataclass(frozen=True)
class Throwaway(OpenAIChat):
    """A test family: the chat-completions format with a marker field of its own."""

    def server_fields(self, settings: CallSettings, slot: int | None) -> dict[str, object]:
        return {"throwaway": True}


THROWAWAY = Throwaway(
    kind="throwaway",
    label="the throwaway API",
    wire="openai",
    sdk="openai",
    key_env="THROWAWAY_KEY",
    hosted=True,
    batch_lines=2,
    presets=(
        Preset(
            "throwaway",
            "Throwaway API",
            "throwaway",
            "A family registered by a test.",
            base_url="https://throwaway.invalid/v1",
            key_env="THROWAWAY_KEY",
            models=(ModelInfo("tiny-1", 8192, 1.0, 2.0),),
        ),
    ),
)


@pytest.fixture
def throwaway(monkeypatch):
    monkeypatch.setenv("THROWAWAY_KEY", "throwaway-key-0123456789")
    register(THROWAWAY)
    yield THROWAWAY
    unregister(THROWAWAY.kind)


def test_registering_twice_or_removing_a_built_in_is_refused(throwaway):
    with pytest.raises(ValueError, match="already registered"):
        register(THROWAWAY)
    with pytest.raises(ValueError, match="built-in"):
        unregister(BUILT_IN[0])
    with pytest.raises(ValueError, match="unknown provider kind 'nowhere'"):
        family("nowhere")


def test_a_registered_family_builds_its_own_bodies(throwaway):
    settings = catalog.preset("throwaway").settings()
    assert settings.needed_key_env == "THROWAWAY_KEY"
    body = build_body(make_request(("user", "Hi")), settings)
    assert body["throwaway"] is True and body["model"] == "tiny-1"
    unregister(THROWAWAY.kind)
    try:
        with pytest.raises(ValueError, match="unknown provider kind"):
            ProviderSettings("throwaway", "tiny-1")
    finally:
        register(THROWAWAY)


def test_the_sidebar_offers_a_registered_family(throwaway):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    (provider,) = [s for s in at.selectbox if s.label == "Provider"]
    assert "Throwaway API" in provider.options


def test_the_cli_takes_a_registered_family(throwaway, capsys):
    argv = ["survival", "--provider", "throwaway", "--estimate-only"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["probe_calls"] > 0
    unregister(THROWAWAY.kind)
    try:
        with pytest.raises(SystemExit) as refused:
            main(argv)
        assert refused.value.code == 2
        assert "unknown provider 'throwaway'" in capsys.readouterr().err
    finally:
        register(THROWAWAY)


def test_a_sweep_plan_uses_a_registered_familys_batch_limit(throwaway, capsys, tmp_path):
    db = f"sqlite:///{tmp_path / 'sweeps.sqlite3'}"
    grid = ["--probe-turns", "2,6", "--strategy", "full", "--strategy", "window:k=2"]
    code = main(["sweep", "--db", db, "plan", "--provider", "throwaway", *grid])
    out, err = capsys.readouterr()
    assert code == 0, err
    requests = int(out.split("then all ")[1].split(" requests")[0].replace(",", ""))
    assert f"one round of {-(-requests // 2)} batch(es)" in out


def test_only_a_family_with_slots_takes_a_slot():
    request = make_request(("user", "Hi"))
    embedded = catalog.preset("embedded").settings()
    assert build_body(request, embedded, slot=2)["id_slot"] == 2
    for settings, slot in ((embedded, -1), (embedded, True),
                           (ProviderSettings("openai", "gpt-4o-mini"), 0),
                           (ProviderSettings("openai", "o4-mini"), 0),
                           (ProviderSettings("anthropic", "claude-haiku-4-5"), 0)):  # fmt: skip
        with pytest.raises(ValueError, match="slot number"):
            build_body(request, settings, slot=slot)
