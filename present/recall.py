"""Figures and tables for long-conversation recall (no streamlit here).

`frontier_chart`: evidence turns kept (y) against prompt tokens as a share of the full buffer
(x, log scale), one colour per strategy; each strategy's settings are joined by a line in
token order, with its best-so-far frontier drawn solid, so "more recall for fewer tokens"
is up and to the left. `category_chart`: a benchmark report the same way, one panel per
question category, tokens as the mean sent for that category's questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engines.benchmarks import BenchReport
from engines.recall import RecallRow
from present.lanes import color
from present.safe import plotly

FONT = {"family": "Inter, Segoe UI, Helvetica, Arial, sans-serif", "size": 16, "color": "#111827"}


def frontier(rows: Sequence[RecallRow]) -> list[RecallRow]:
    """The settings no cheaper setting beats: token order, each keeping more than the last."""
    out: list[RecallRow] = []
    for row in sorted(rows, key=lambda r: (r.full_share, -r.evidence_kept)):
        if not out or row.evidence_kept > out[-1].evidence_kept:
            out.append(row)
    return out


def frontier_chart(rows: Sequence[RecallRow], *, title: str = "") -> go.Figure:
    fig = go.Figure()
    names = list(dict.fromkeys(r.name for r in rows))
    for name in names:
        mine = sorted((r for r in rows if r.name == name), key=lambda r: r.full_share)
        front = frontier(mine)
        fig.add_trace(
            go.Scatter(
                x=[100 * r.full_share for r in front],
                y=[100 * r.evidence_kept for r in front],
                mode="lines+markers",
                name=plotly(name),
                legendgroup=name,
                line={"color": color(name), "width": 4},
                marker={"size": 12, "color": color(name)},
                text=[plotly(r.label) for r in front],
                hovertemplate="%{text}<br>%{y:.0f}% of evidence at %{x:.1f}% of full"
                "<extra></extra>",
            )
        )
        others = [r for r in mine if r not in front]
        if others:
            fig.add_trace(
                go.Scatter(
                    x=[100 * r.full_share for r in others],
                    y=[100 * r.evidence_kept for r in others],
                    mode="markers",
                    name=plotly(f"{name} (other settings)"),
                    legendgroup=name,
                    showlegend=False,
                    marker={"size": 9, "color": color(name), "opacity": 0.45},
                    text=[plotly(r.label) for r in others],
                    hovertemplate="%{text}<br>%{y:.0f}% of evidence at %{x:.1f}% of full"
                    "<extra></extra>",
                )
            )
    fig.update_layout(
        title={
            "text": title or "Evidence kept vs tokens sent (up and left is better)",
            "font": {"size": 21},
            "x": 0.01,
            "xanchor": "left",
        },
        font=FONT,
        height=520,
        margin={"l": 20, "r": 20, "t": 70, "b": 20},
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0},
        xaxis={
            "title": {"text": "prompt tokens, % of the full buffer (log scale)"},
            "type": "log",
            "gridcolor": "#e5e7eb",
            "tickvals": [0.2, 0.5, 1, 2, 5, 10, 20, 50, 100],
            "ticksuffix": "%",
        },
        yaxis={
            "title": {"text": "evidence turns in the payload"},
            "range": [-3, 103],
            "gridcolor": "#e5e7eb",
            "ticksuffix": "%",
        },
    )
    for share in (5, 10):
        fig.add_vline(x=share, line={"color": "#9ca3af", "dash": "dot", "width": 2})
    return fig


def table_rows(rows: Sequence[RecallRow], kinds: Sequence[str]) -> list[dict[str, Any]]:
    """One plain record per setting, percentages as numbers 0-100 (for a dataframe or CSV)."""
    out = []
    for r in rows:
        record: dict[str, Any] = {
            "strategy (setting)": r.label,
            "evidence kept %": round(100 * r.evidence_kept, 1),
            "all evidence %": round(100 * r.all_evidence, 1),
            "answer in payload %": None
            if r.answer_in_payload is None
            else round(100 * r.answer_in_payload, 1),
            **(
                {"answered %": None if r.answered is None else round(100 * r.answered, 1)}
                if any(row.model for row in rows)  # a model answered (interactive or batch)
                else {}
            ),
            "mean prompt tokens": round(r.mean_tokens),
            "% of full": round(100 * r.full_share, 1),
        }
        for kind in kinds:
            value = r.by_kind.get(kind)
            record[f"{kind} %"] = None if value is None else round(100 * value, 1)
        record["ms per query"] = round(r.ms_per_query, 2)
        out.append(record)
    return out


SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x", "star")


def category_chart(report: BenchReport, *, columns: int = 3) -> go.Figure:
    """Evidence recall (y) against mean prompt tokens (x, log scale) per category of a
    benchmark report: one panel per category, one marker per setting (its strategy's colour;
    a strategy's settings told apart by shape), one legend entry per setting."""
    categories = sorted({c for r in report.rows for c in r.tokens_by_category})
    cols = max(1, min(columns, len(categories)))
    rows = max(1, -(-len(categories) // cols))
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[plotly(c) for c in categories],
        horizontal_spacing=0.07,
        vertical_spacing=0.16 if rows > 1 else 0.1,
    )
    seen: dict[str, int] = {}
    for row in report.rows:
        symbol = SYMBOLS[seen.get(row.name, 0) % len(SYMBOLS)]
        seen[row.name] = seen.get(row.name, 0) + 1
        first = True
        for i, category in enumerate(categories):
            tokens = row.tokens_by_category.get(category)
            recall = row.by_category.get(category)
            if tokens is None or recall is None:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[max(tokens, 1.0)],
                    y=[100 * recall],
                    mode="markers",
                    name=plotly(row.label),
                    legendgroup=row.label,
                    showlegend=first,
                    marker={
                        "size": 16,
                        "color": color(row.name),
                        "symbol": symbol,
                        "line": {"width": 1.5, "color": "#111827"},
                    },  # fmt: skip
                    text=[plotly(f"{row.label} · {category}")],
                    hovertemplate="%{text}<br>%{y:.0f}% of evidence at %{x:,.0f} tokens"
                    "<extra></extra>",
                ),
                row=i // cols + 1,
                col=i % cols + 1,
            )
            first = False
    fig.update_xaxes(type="log", gridcolor="#e5e7eb", title={"text": "mean prompt tokens"})
    fig.update_yaxes(range=[-5, 105], gridcolor="#e5e7eb", ticksuffix="%")
    for r in range(1, rows + 1):
        fig.update_yaxes(title={"text": "evidence kept"}, row=r, col=1)
    fig.update_annotations(font={"size": 19})
    fig.update_layout(
        title={
            "text": plotly(f"Evidence kept vs tokens sent, per category ({report.dataset})"),
            "font": {"size": 21},
            "x": 0.01,
            "xanchor": "left",
        },
        font=FONT,
        height=140 + 340 * rows,
        margin={"l": 20, "r": 20, "t": 90, "b": 20},
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.08 if rows > 1 else -0.2, "x": 0},
    )
    return fig
