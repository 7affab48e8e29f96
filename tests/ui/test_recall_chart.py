"""The recall frontier figure and table rows (no streamlit)."""

from __future__ import annotations

from engines.recall import RecallRow
from present.recall import frontier, frontier_chart, table_rows


def row(name, label, kept, share):
    return RecallRow(label, name, kept, kept, None, 100 * share, share, {"open": kept}, 1.0)


ROWS = [
    row("retrieval", "r 2%", 0.6, 0.02),
    row("retrieval", "r 5%", 0.8, 0.05),
    row("retrieval", "r 6%", 0.7, 0.06),  # dominated: costs more, keeps less
    row("window", "w", 0.1, 0.03),
]


def test_the_frontier_drops_dominated_settings():
    assert [r.label for r in frontier(ROWS[:3])] == ["r 2%", "r 5%"]


def test_one_line_per_strategy_plus_its_dominated_points():
    fig = frontier_chart(ROWS)
    lines = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in lines] == ["retrieval", "window"]
    assert list(lines[0].x) == [2.0, 5.0] and list(lines[0].y) == [60.0, 80.0]
    (extra,) = [t for t in fig.data if t.showlegend is False]
    assert list(extra.text) == ["r 6%"]
    assert fig.layout.xaxis.type == "log"


def test_table_rows_are_percentages_per_kind():
    (first,) = table_rows(ROWS[:1], ["open", "temporal"])
    assert first["evidence kept %"] == 60.0 and first["% of full"] == 2.0
    assert first["open %"] == 60.0 and first["temporal %"] is None
    assert first["answer in payload %"] is None
