"""The per-category chart of a benchmark report (the Long recall page draws it): one panel
per scored category, one marker per setting and panel at its mean tokens and evidence
recall, labels from the file escaped as text."""

from __future__ import annotations

from engines.benchmarks import BenchReport, BenchRow
from present.recall import category_chart


def row(label: str, name: str, recall: dict[str, float], tokens: dict[str, float]) -> BenchRow:
    return BenchRow(label=label, name=name, questions=4, evidence_recall=0.5, all_evidence=0.5,
                    answer_in_payload=None, mean_tokens=100.0, full_share=0.1, recall_at={},
                    by_category=recall, apart={}, no_evidence=0,
                    tokens_by_category=tokens)  # fmt: skip


def report() -> BenchReport:
    rows = (
        row("full", "full", {"multi-hop": 1.0, "<b>odd</b>": 1.0}, {"multi-hop": 900.0, "<b>odd</b>": 800.0}),
        row("window (k=10)", "window", {"multi-hop": 0.25, "<b>odd</b>": 0.5}, {"multi-hop": 90.0, "<b>odd</b>": 80.0}),
        row("window (k=20)", "window", {"multi-hop": 0.5}, {"multi-hop": 160.0}),
    )  # fmt: skip
    return BenchReport("locomo", 2, 8, rows, (), ())


def test_one_panel_per_category_and_one_marker_per_setting_and_panel():
    fig = category_chart(report())
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["&lt;b&gt;odd&lt;/b&gt;", "multi-hop"]
    points = {(t.name, t.xaxis, t.x[0], t.y[0]) for t in fig.data}
    assert ("window (k=10)", "x2", 90.0, 25.0) in points
    assert ("full", "x", 800.0, 100.0) in points
    assert len(fig.data) == 5  # window (k=20) has no "<b>odd</b>" figure
    assert [t.name for t in fig.data if t.showlegend] == ["full", "window (k=10)", "window (k=20)"]
    window = [t for t in fig.data if t.name.startswith("window")]
    assert len({t.marker.color for t in window}) == 1  # one colour per strategy
    assert len({t.marker.symbol for t in window}) == 2  # its settings told apart by shape


def test_many_categories_wrap_into_rows_and_the_figure_grows():
    cats = {f"c{i}": 0.5 for i in range(5)}
    one = BenchReport(
        "locomo", 1, 5, (row("full", "full", cats, dict.fromkeys(cats, 50.0)),), (), ()
    )
    fig = category_chart(one)
    assert len(fig.layout.annotations) == 5 and fig.layout.height > 600
    assert fig.data[3].xaxis == "x4" and fig.data[3].yaxis == "y4"
