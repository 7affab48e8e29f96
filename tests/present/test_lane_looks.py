"""Lanes of one strategy share its colour family but are told apart by shade and dash."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lanes.lane import LaneTurn
from memory.registry import REGISTRY
from present.lanes import comparison_figure, lane_looks
from present.style import color


def test_a_second_lane_of_a_strategy_is_a_lighter_dashed_line_of_its_colour():
    names = ["full", "summary_buffer", "summary_buffer · gpt-4o-mini", "summary_buffer · gpt-4o"]
    looks = lane_looks(names)
    base = REGISTRY["summary_buffer"].color.lower()
    assert looks["summary_buffer"] == (base, "solid")
    assert looks["full"] == (REGISTRY["full"].color.lower(), "solid")
    (c2, d2), (c3, d3) = looks[names[2]], looks[names[3]]
    assert (d2, d3) == ("dash", "dot") and len({base, c2, c3}) == 3
    assert color(names[2]) == REGISTRY["summary_buffer"].color  # the family's colour


def test_the_comparison_chart_names_each_lane_by_its_title():
    records = {
        n: [LaneTurn(n, 1, "hi", "ok", counted=100)]
        for n in ("summary_buffer", "summary_buffer · gpt-4o-mini")
    }
    titles = {"summary_buffer": "Summary buffer", "summary_buffer · gpt-4o-mini": "SB · mini"}
    fig = comparison_figure(records, titles)
    assert [(t.name, t.line.dash) for t in fig.data] == [
        ("Summary buffer", "solid"),
        ("SB · mini", "dash"),
    ]


@given(st.lists(st.sampled_from(sorted(REGISTRY)), min_size=1, max_size=10))
def test_lanes_of_one_strategy_never_look_alike(strategies):
    names = [f"{s} · m{i}" if i else s for i, s in enumerate(strategies)]
    names = list(dict.fromkeys(names))
    looks = lane_looks(names)
    for s in set(strategies):
        family = [looks[n] for n in names if n.split(" ", 1)[0] == s][:4]
        assert len(set(family)) == len(family)
