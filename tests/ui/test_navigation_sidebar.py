"""The page list (st.navigation), the sidebar's key field, and the UI modules' imports."""

from __future__ import annotations

import subprocess
import sys

from streamlit.testing.v1 import AppTest

from tests.ui.conftest import ROOT
from ui import navigation
from ui.app_state import AppConfig, ProviderChoice, keyed_settings

APP = str(ROOT / "app.py")


def test_the_pages_are_titled_in_order_and_a_missing_file_is_left_out(monkeypatch):
    titles = [title for _, title, _ in navigation.listed()]
    assert titles[:4] == ["Compare strategies", "Fact survival", "Token growth", "Sessions"]
    monkeypatch.setattr(
        navigation, "PAGES", (*navigation.PAGES, ("pages/9_Not_there.py", "Not there", "x"))
    )
    assert "Not there" not in [title for _, title, _ in navigation.listed()]
    monkeypatch.setattr(navigation, "PAGES", (*navigation.PAGES, ("app.py", "Present", "y")))
    assert "Present" in [title for _, title, _ in navigation.listed()]  # existing: listed


def test_the_app_opens_on_compare_strategies(fake_transport):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Memory Lab"]
    assert at.chat_input  # the main page, not another one


def test_a_custom_endpoint_gets_a_key_field_whose_key_is_sent(fake_transport):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["config"] = AppConfig.default().replace(
        provider=ProviderChoice("custom", "my-model", base_url="http://127.0.0.1:9/v1")
    )
    at.run()
    [field] = [t for t in at.text_input if t.label.startswith("API key")]
    assert "optional" in field.label
    field.set_value("  sk-typed-for-custom-0123456789  ")
    next(b for b in at.button if b.label.startswith("Apply")).click().run()
    assert not at.exception, at.exception
    choice = at.session_state["config"].provider
    assert choice.preset == "custom" and choice.api_key == "sk-typed-for-custom-0123456789"
    assert keyed_settings(choice).resolve_key() == "sk-typed-for-custom-0123456789"
    assert "sk-typed" not in repr(at.session_state["config"])


def test_app_state_no_longer_imports_persistence():
    code = "import sys, ui.app_state; print('ui.persistence' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_store_that_cannot_open_leaves_the_chat_running_and_says_not_saved(
    fake_transport, monkeypatch, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MEMORY_LAB_DB_URL", f"sqlite:///{blocker / 'sessions.sqlite3'}")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert at.chat_input  # the conversation goes on, unsaved
    warnings = [w.value for w in at.sidebar.warning]
    # the reason attaching failed, not only that no tracker is attached
    assert any(w.startswith("Not saved:") and "a-file" in w for w in warnings), warnings
