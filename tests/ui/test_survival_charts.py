"""The survival lab's figures: heat map cells, guess/leak labels, tokens spent; no streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engines.survival import DEFAULT_FACTS, SurvivalConfig, run_survival
from memory.lane_spec import parse_spec
from memory.standins import StaticReply
from present.survival import heatmap, heatmap_cells, strategies_of, tokens_chart

ROOT = Path(__file__).resolve().parents[2]


def guess(request, on_delta=None):
    return StaticReply("Your name is Chiru.")


@pytest.fixture(scope="module")
def result():
    config = SurvivalConfig(
        facts=DEFAULT_FACTS[:2],
        probe_turns=(2, 5),
        strategies=(parse_spec("full"), parse_spec("window:k=3")),
    )
    return run_survival(config, send=guess)


def test_payload_heat_map_cells(result):
    fig = heatmap(result, "in_payload")
    assert strategies_of(fig) == ["full", "window (k=3)"]
    assert list(fig.data[0].x) == ["N=2", "N=5"]
    assert heatmap_cells(fig) == [["2/2", "2/2"], ["2/2", "0/2"]]
    assert list(fig.data[0].z[1]) == [1.0, 0.0]
    assert fig.layout.title.text == "Fact in the payload at turn N"


def test_recall_heat_map_flags_guesses(result):
    fig = heatmap(result, "recalled")
    cells = heatmap_cells(fig)
    assert cells[0] == ["1/2", "1/2"]  # the name is recalled, the salary is not
    assert cells[1][1] == "1/2<br>1 guess/leak"  # window lost the name yet "recalled" it


def test_payload_only_recall_cells_are_empty():
    config = SurvivalConfig(
        facts=DEFAULT_FACTS[:1], probe_turns=(2,), strategies=(parse_spec("full"),)
    )
    fig = heatmap(run_survival(config), "recalled")
    assert heatmap_cells(fig) == [["—"]] and [list(r) for r in fig.data[0].z] == [[None]]


def test_tokens_chart_has_one_bar_series_per_strategy(result):
    fig = tokens_chart(result)
    assert [t.name for t in fig.data] == ["full", "window (k=3)"]
    full, window = fig.data
    assert full.y[0] == window.y[0]  # same conversation at N=2
    assert full.y[1] > window.y[1]  # the window sends less by N=5
    assert fig.layout.yaxis.title.text == "prompt tokens sent so far"


def test_projector_fonts(result):
    fig = heatmap(result, "in_payload")
    assert fig.layout.font.size >= 16 and fig.layout.title.font.size >= 20
    assert fig.data[0].textfont.size >= 18


def test_unknown_verdict_is_refused(result):
    with pytest.raises(ValueError, match="in_payload"):
        heatmap(result, "vibes")


@pytest.mark.parametrize("module", ["present/survival.py", "present/growth.py"])
def test_chart_modules_do_not_import_streamlit(module):
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not {n for n in names if n.split(".")[0] == "streamlit"}


def test_the_page_figure_puts_both_verdicts_side_by_side(result):
    from present.survival import heatmaps

    fig = heatmaps(result)
    assert len(fig.data) == 2
    payload, recall = fig.data
    assert [list(r) for r in payload.text] == [["2/2", "2/2"], ["2/2", "0/2"]]
    assert recall.text[1][1] == "1/2<br>1 guess/leak"
    from present.survival import LEGEND

    assert [a.text for a in fig.layout.annotations] == [
        "In the payload (deterministic)",
        "Recalled by the model",
        LEGEND,
    ]
    assert payload.showscale is False and recall.showscale is True


def test_the_page_figure_without_a_model_has_the_payload_only():
    from present.survival import heatmaps

    config = SurvivalConfig(
        facts=DEFAULT_FACTS[:1], probe_turns=(2,), strategies=(parse_spec("full"),)
    )
    fig = heatmaps(run_survival(config))
    assert len(fig.data) == 1 and fig.layout.annotations[0].text.startswith("In the payload")


def test_heat_maps_show_stale_values_and_say_when_stand_ins_did_the_upkeep():
    from engines.survival import EXAMPLE_FACTS
    from present.survival import LEGEND, STAND_IN_LABEL, heatmap, heatmaps, text_table

    rent = EXAMPLE_FACTS[1]

    def old_rent(request, on_delta=None):
        return StaticReply("Your rent is ₹25,000.")

    config = SurvivalConfig(
        facts=(rent,),
        probe_turns=(8, 12),
        strategies=(parse_spec("full"), parse_spec("summary")),
    )
    result = run_survival(config, send=old_rent)
    recall = heatmap(result, "recalled")
    assert heatmap_cells(recall) == [["1/1", "0/1<br>1 stale"], ["1/1", "0/1<br>1 stale"]]
    assert STAND_IN_LABEL in heatmaps(result).layout.title.text
    assert STAND_IN_LABEL in recall.layout.title.text
    assert "stale" in LEGEND and "current" in LEGEND
    table = text_table(result)
    assert "0/1 (1 stale)" in table and STAND_IN_LABEL in table
    # a run with no stand-in upkeep says nothing of the kind
    plain = run_survival(
        SurvivalConfig(facts=(rent,), probe_turns=(12,), strategies=(parse_spec("full"),))
    )
    assert STAND_IN_LABEL not in heatmaps(plain).layout.title.text
