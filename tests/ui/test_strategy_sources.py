"""Framework lanes and a user's strategy file appear in the main page's picker and the survival
lab, the sidebar says where each came from, and the one-click framework-defaults set runs
every framework lane beside the lab's hybrid on the real page (AppTest, fake provider)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from plugins import loading
from tests.ui.conftest import APP, shown

pytest.importorskip("langchain_core")

SEED = (
    f"{Path(__file__).parents[1] / 'plugins' / 'fixtures' / 'seed_memory.py'}:SlidingWindowMemory"
)


def page(path: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if path:
        at.switch_page(path)
    at.run()
    assert not at.exception, at.exception
    return at


def test_pickers_offer_framework_and_file_strategies(monkeypatch) -> None:
    monkeypatch.setenv(loading.FILES_VARIABLE, SEED)
    main = page()
    options = [shown(o) for o in main.button_group(key="lane-strategies").options]
    assert any(o.startswith("LangGraph trim_messages (langchain-core ") for o in options)
    # the seed's window starts on an assistant message from turn 3: marked, still offered
    assert "sliding_window_memory — breaks: roles alternate" in options
    sources = [shown(m.value) for m in main.markdown]
    assert any(line.startswith("sliding_window_memory: file ") for line in sources)
    assert "langgraph_trim: langchain-core 1.8.1" in sources
    survival = page("pages/1_Fact_survival.py")
    pills = [shown(p) for p in survival.button_group(key="strategy-pills").options]
    assert "sliding_window_memory" in pills and any(p.startswith("langgraph_trim") for p in pills)


def test_framework_defaults_run_as_lanes(fake_transport) -> None:
    at = page()
    next(b for b in at.button if b.label == "Framework defaults lane set").click().run()
    assert not at.exception, at.exception
    at.chat_input[0].set_value("Hi! I'm Chiru. My salary is ₹1,20,000.").run()
    assert not at.exception, at.exception
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    from ui.strategy_sources import framework_defaults

    assert len(headers) == len(framework_defaults()) >= 9
    # the sidebar's picker shows the lanes that run, not the ones before the click
    assert list(at.button_group(key="lane-strategies").value) == framework_defaults()
    assert not at.error, [e.value for e in at.error]
