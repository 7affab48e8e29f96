"""The token-growth page through AppTest: the seed's table by default, projections, costs."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from present.growth import trace_points

PAGE = "../../pages/2_Token_growth.py"  # AppTest resolves paths against this file's folder


def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def number(at: AppTest, label: str):
    return next(n for n in at.number_input if n.label == label)


def apply(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label == "Apply").click().run()
    assert not at.exception, at.exception
    return at


def test_defaults_show_the_seed_table_exactly():
    at = page()
    assert any("Matches seed 000's table exactly" in s.value for s in at.success)
    table = at.dataframe[0].value
    assert list(table["Prompt to API"]) == [149, 238, 334, 423, 513, 605, 700, 791, 882, 976]
    assert table["Sent so far"].iloc[-1] == 5611
    summary = " ".join(m.value for m in at.markdown)
    assert "**132 tokens**" in summary and "**6.55x**" in summary and "**5,611**" in summary


def test_the_seed_chart_and_the_projection_chart_are_drawn():
    at = page()
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    seed = charts[0].proto.spec
    assert "Prompt sent on this turn" in seed and "All prompts so far" in seed
    projection = charts[1].proto.spec
    for label in ("full: prompt", "window (k=3): so far", "summary_buffer (budget=600): prompt"):
        assert label in projection


def test_reply_length_and_turns_change_the_projection():
    at = page()
    number(at, "Reply length (tokens)").set_value(40)
    number(at, "Turns").set_value(300)
    apply(at)
    assert not at.success  # no longer the seed's table
    table = at.dataframe[0].value
    assert len(table) == 300 and table["Prompt to API"].iloc[1] == 149 + 40 + 9
    costs = at.dataframe[-1].value
    assert set(costs["strategy"]) == {"full", "window (k=3)", "summary_buffer (budget=600)"}
    full = costs[costs["strategy"] == "full"].iloc[0]
    window = costs[costs["strategy"] == "window (k=3)"].iloc[0]
    assert full["input tokens"] > 10 * window["input tokens"]


def test_seed_defaults_button_restores_the_table():
    at = page()
    number(at, "Turns").set_value(25)
    apply(at)
    next(b for b in at.button if b.label == "Seed defaults").click().run()
    assert any("Matches seed" in s.value for s in at.success)


def test_bad_variant_is_explained():
    at = page()
    next(t for t in at.text_input if t.label == "Extra variants").set_value("window:k=zero")
    apply(at)
    assert any("Cannot simulate" in e.value and "whole number" in e.value for e in at.error)


def test_prices_are_editable_and_priced_per_strategy():
    at = page()
    costs = at.dataframe[-1].value
    price_columns = [c for c in costs.columns if c.endswith(" $")]
    assert len(price_columns) >= 3
    assert len(at.get("download_button")) == 3


def test_chart_builder_points_match_the_seed():
    from engines.simulator import SimConfig, simulate
    from present.growth import seed_chart

    fig = seed_chart(simulate(SimConfig()).rows["full"])
    assert [y for _, y in trace_points(fig, "Prompt sent on this turn")][-1] == 976
    assert [y for _, y in trace_points(fig, "All prompts so far")][-1] == 5611
    assert fig.layout.yaxis2.overlaying == "y"
