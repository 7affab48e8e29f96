"""The auto-tuner's frontier as a Plotly figure (no streamlit here: exports can reuse it).

Every setting tried is a dot in its strategy's colour (tokens per turn across, share of the
facts kept up); the frontier (settings no other beats on both) is a line through them, the
target a dashed line, and the cheapest setting that meets it a large star with its label.
"""

from __future__ import annotations

from collections import defaultdict

import plotly.graph_objects as go

from engines.tune import COST_PER_TURN, Trial, TuneResult
from present.safe import plotly
from present.style import color, projector

FRONTIER = "#111827"
TARGET = "#b91c1c"


def _hover(t: Trial, result: TuneResult) -> str:
    per = "turn" if result.cost == COST_PER_TURN else "request"
    return (
        f"{plotly(t.label)}<br>{t.tokens_per_turn:,.0f} tokens/{per}<br>"
        f"{t.kept}/{t.probes} {result.what} kept" + (f"<br>{t.error}" if t.error else "")
    )


def frontier_figure(result: TuneResult, *, height: int = 520) -> go.Figure:
    """Tokens per turn vs facts kept for every setting tried, with the frontier and winner."""
    fig = go.Figure()
    by_strategy: dict[str, list[Trial]] = defaultdict(list)
    for t in result.trials:
        if t.error is None:
            by_strategy[t.choice.name].append(t)
    for name, trials in by_strategy.items():
        fig.add_trace(
            go.Scatter(
                x=[t.tokens_per_turn for t in trials],
                y=[t.share * 100 for t in trials],
                mode="markers",
                name=plotly(name),
                marker={"size": 12, "color": color(name), "opacity": 0.75},
                hovertext=[_hover(t, result) for t in trials],
                hoverinfo="text",
            )
        )
    front = result.frontier
    if front:
        fig.add_trace(
            go.Scatter(
                x=[t.tokens_per_turn for t in front],
                y=[t.share * 100 for t in front],
                mode="lines",
                line={"color": FRONTIER, "width": 3, "shape": "hv"},
                name="frontier",
                hoverinfo="skip",
            )
        )
    fig.add_hline(
        y=result.target.share * 100,
        line={"color": TARGET, "dash": "dash", "width": 2},
        annotation_text=f"target {result.target.share:.0%}",
        annotation_position="bottom right",
        annotation_font={"size": 16, "color": TARGET},
    )
    winner = result.winner
    per = "turn" if result.cost == COST_PER_TURN else "request"
    if winner is not None:
        fig.add_trace(
            go.Scatter(
                x=[winner.tokens_per_turn],
                y=[winner.share * 100],
                mode="markers",
                marker={
                    "symbol": "star",
                    "size": 26,
                    "color": color(winner.choice.name),
                    "line": {"color": FRONTIER, "width": 2},
                },  # fmt: skip
                name="cheapest meeting the target",
                hovertext=[_hover(winner, result)],
                hoverinfo="text",
            )
        )
        fig.add_annotation(  # below the star, on white: the top of the chart is crowded
            x=winner.tokens_per_turn,
            y=winner.share * 100,
            text=f"<b>{plotly(winner.label)}</b><br>{winner.tokens_per_turn:,.0f} tokens/{per}",
            showarrow=True,
            arrowhead=2,
            ax=110,
            ay=90,
            align="left",
            font={"size": 17},
            bgcolor="white",
            bordercolor=FRONTIER,
            borderwidth=1,
        )
    projector(
        fig,
        title=f"Cheapest memory that keeps the {result.what} ({len(result.trials)} settings tried)",
        height=height,
        top=70,
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0, "font": {"size": 16}},
        xaxis={
            "title": {
                "text": "prompt tokens per turn (upkeep included)"
                if result.cost == COST_PER_TURN
                else "prompt tokens per request at the questions (+ upkeep per turn)"
            },
            "rangemode": "tozero",
            "gridcolor": "#e5e7eb",
            "tickformat": ",.0f",
        },
        yaxis={
            "title": {"text": f"{result.what} kept in the payload (%)"},
            "range": [-5, 108],
            "gridcolor": "#e5e7eb",
        },
    )
    # room for the axis titles beside the tick labels and for the legend under the x title
    fig.update_layout(margin={"l": 90, "b": 40}, xaxis_automargin=True, yaxis_automargin=True)
    return fig
