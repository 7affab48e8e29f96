"""A strategy registered once shows up everywhere: every page's picker, the lanes with its
colour, and the CLI. Nothing else lists the strategies (issue 9)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from cli.main import main as cli_main
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY, Param, register, unregister
from memory.strategies.full import FullBuffer
from memory.types import Request
from tests.ui.conftest import ROOT, shown
from ui.app_state import AppConfig

APP = str(ROOT / "app.py")
COLOR = "#123456"


class Throwaway(FullBuffer):
    """The last `depth` turns: a new strategy in a few lines (its own module, in real life)."""

    name = "throwaway"
    title = "Throwaway memory"
    description = "A strategy registered only by this test."

    def __init__(self, system_prompt: str, *, depth: int = 4, **options) -> None:
        super().__init__(system_prompt, **options)
        self.depth = depth

    def _build(self, user_text: str) -> Request:
        n = len(self.history)
        return self.request(user_text, range(max(1, n - self.depth + 1), n + 1))


@pytest.fixture
def throwaway():
    spec = register(
        Throwaway,
        Param("depth", 4, "how deep", minimum=0, maximum=9, in_label=True),
        color=COLOR,
    )
    yield spec
    unregister("throwaway")
    assert "throwaway" not in REGISTRY


def page(path: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if path:
        at.switch_page(path)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_main_page_offers_draws_and_colours_it(throwaway, fake_transport):
    at = page()
    assert "Throwaway memory" in at.button_group(key="lane-strategies").options
    at.session_state["config"] = AppConfig.default().replace(
        lanes=(LaneSpec("full"), LaneSpec("throwaway", {"depth": 7}))
    )
    at.session_state["session"] = None
    at.run()
    at.chat_input[0].set_value("hello").run()
    assert not at.exception, at.exception
    headers = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert headers == ["#### Full buffer", "#### Throwaway memory"]
    assert any("depth=7" in shown(c.value) for c in at.caption)
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    colours = {t["name"]: t["line"]["color"] for f in figures for t in f["data"] if "line" in t}
    assert colours["Throwaway memory"] == COLOR


def test_the_survival_growth_and_recall_pages_offer_it(throwaway):
    survival = page("pages/1_Fact_survival.py")
    pills = survival.button_group(key="strategy-pills").options
    assert "throwaway (depth=4)" in [shown(o) for o in pills]
    growth = page("pages/2_Token_growth.py")
    assert "throwaway (depth=4)" in [
        shown(o) for o in growth.button_group(key="growth-strategies").options
    ]
    recall = page("pages/4_Long_recall.py")
    assert "throwaway" in recall.multiselect[0].options


def test_the_tune_and_composer_pages_offer_it(throwaway):
    tune = page("pages/6_Tune.py")
    assert "Throwaway memory" in tune.button_group(key="tune-strategies").options
    composer = page("pages/7_Composer.py")
    compare = next(b for b in composer.button_group if b.label == "Compare with")
    assert "Throwaway memory" in compare.options


def test_the_sessions_page_offers_it_for_a_replay(throwaway):
    at = page("pages/3_Sessions.py")
    at.text_area(key="import_text").set_value('[{"role": "user", "content": "hi"}]').run()
    assert not at.exception, at.exception
    assert "Throwaway memory" in at.button_group(key="replay-strategies").options


def test_the_cli_simulates_it_and_lists_it(throwaway, capsys):
    assert cli_main(["simulate", "--turns", "3", "--strategy", "throwaway:depth=2"]) == 0
    assert "throwaway (depth=2)" in capsys.readouterr().out
    assert cli_main(["simulate", "--strategy", "nope"]) == 2
    assert "throwaway" in capsys.readouterr().err
