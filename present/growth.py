"""Plotly figures for the token-growth simulator (no streamlit here: exports reuse them).

`seed_chart` is seed 000's figure (bars: the prompt sent on each turn; line: all prompts
so far, on a second axis); `projection_chart` draws the same for every projected strategy
on one figure, one colour per strategy as on the main page.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from engines.simulator import SimRow, Simulation
from present.safe import plotly
from present.style import color, legend_below, projector, right_axis, token_axis

SEED_BAR = "#9370DB"  # the seed's colours
SEED_LINE = "#d64541"
BARS_UP_TO = 40  # more turns than this: per-turn prompts are drawn as lines, not bars


def _layout(fig: go.Figure, title: str, height: int, turns: int, log_scale: bool) -> go.Figure:
    projector(
        fig,
        title=title,
        height=height,
        top=70,
        hovermode="x unified",
        barmode="group",
        legend=legend_below(-0.3),
        yaxis=token_axis(
            "tokens in one request",
            type="log" if log_scale else "linear",
            dtick=1 if log_scale else None,  # one tick per power of ten
        ),
        # round numbers of its own, not ticks synced to the left axis; log: powers of ten
        yaxis2=right_axis(
            "tokens sent so far",
            tickmode="linear" if log_scale else "auto",
            tickformat=",.0f",
            type="log" if log_scale else "linear",
            dtick=1 if log_scale else None,
        ),
    )
    fig.update_xaxes(
        title_text="turn", dtick=1 if turns <= 20 else None, gridcolor="#f3f4f6", automargin=True
    )
    fig.update_yaxes(automargin=True)  # room for long tick labels (plotly does not by default)
    return fig


def seed_chart(rows: Sequence[SimRow], *, title: str | None = None, height: int = 480) -> go.Figure:
    """Seed 000's chart for one strategy: prompt per turn (bars), all prompts so far (line)."""
    turns = [r.turn for r in rows]
    fig = go.Figure()
    prompts = [r.prompt_tokens for r in rows]
    fig.add_bar(x=turns, y=prompts, name="Prompt sent on this turn", marker_color=SEED_BAR)
    fig.add_scatter(
        x=turns,
        y=[r.sent_so_far for r in rows],
        name="All prompts so far",
        mode="lines+markers" if len(rows) <= BARS_UP_TO else "lines",
        line={"color": SEED_LINE, "width": 4},
        marker={"size": 9},
        yaxis="y2",
    )
    strategy = rows[0].strategy if rows else "full"
    text = title or f"{strategy}: token growth over {len(rows)} turns"
    return _layout(fig, text, height, len(rows), False)


def projection_chart(
    sim: Simulation, *, height: int = 560, log_scale: bool = False, title: str | None = None
) -> go.Figure:
    """Every projected strategy: its prompt per turn (bars, or lines past 40 turns) and its
    running total (dashed line, right axis). `log_scale` puts both axes on a log scale, so
    a plateau of a few hundred tokens stays visible next to a full buffer's thousands."""
    n = sim.config.n_turns
    fig = go.Figure()
    for label, rows in sim.rows.items():
        c = color(sim.names.get(label, label))
        turns = [r.turn for r in rows]
        prompts = [r.prompt_tokens for r in rows]
        if n <= BARS_UP_TO:
            fig.add_bar(x=turns, y=prompts, name=plotly(f"{label}: prompt"), marker_color=c)
        else:
            fig.add_scatter(
                x=turns,
                y=prompts,
                name=plotly(f"{label}: prompt"),
                mode="lines",
                line={"color": c, "width": 3},
            )
        fig.add_scatter(
            x=turns,
            y=[r.sent_so_far for r in rows],
            name=plotly(f"{label}: so far"),
            mode="lines",
            line={"color": c, "width": 3, "dash": "dash"},
            yaxis="y2",
        )
    text = title or f"Projected token growth over {n} turns (dashed: all prompts so far)"
    return _layout(fig, text, height, n, log_scale)


def trace_points(fig: go.Figure, name: str) -> list[tuple[int, int]]:
    """(x, y) of a named trace (for tests and exports)."""
    for trace in fig.data:
        if trace.name == name:
            return list(zip(trace.x, trace.y, strict=True))
    raise KeyError(name)
