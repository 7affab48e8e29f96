"""Context anatomy: what fills each lane's request, part by part, against the context window.

The parts are the memory core's own account of the request (`TurnAccount.parts`, counted when
the request was built), never re-derived from the text here. Each part has one colour on every
figure and every lane, so one legend reads for all of them:

* `lane_anatomy_figure`: one lane over the turns, a stacked bar per turn (parts, reply reserve,
  free space) with that turn's upkeep calls drawn as a slim bar beside it;
* `anatomy_grid_figure`: every lane's `lane_anatomy_figure` as small multiples on one scale,
  with one shared legend;
* `comparison_anatomy_figure`: all lanes at one turn, one horizontal bar each, upkeep beside.

Hovering a part names the turns it holds. No streamlit here: the pages and the HTML report
draw the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from lanes.lane import LaneTurn
from present.anatomy_data import (
    FREE_COLOR,
    FREE_LABEL,
    OFF_SCALE,
    PART_COLORS,
    PART_LABELS,
    RESERVE_COLOR,
    RESERVE_LABEL,
    UPKEEP_COLOR,
    UPKEEP_LABEL,
    Anatomy,
    anatomy_of,
    holds,
    turn_warnings,
)
from present.lanes import FONT
from present.safe import html_text, plotly


def _scale(anatomies: Sequence[Anatomy]) -> tuple[float, int | None]:
    """The axis length in tokens, and the window if it is drawn (None: off the scale)."""
    biggest = max([max(a.total + a.reserve, a.upkeep_tokens) for a in anatomies] or [1], default=1)
    window = max((a.window or 0 for a in anatomies), default=0)
    if window and window <= OFF_SCALE * biggest:
        return max(window, biggest) * 1.04, window
    return biggest * 1.12, None


def _off_scale_note(anatomies: Sequence[Anatomy]) -> str | None:
    window = max((a.window or 0 for a in anatomies), default=0)
    if not window:
        return "context window unknown for this model: free space not drawn"
    used = max(a.total + a.reserve for a in anatomies)
    return f"context window {window:,} tokens, off the scale: the largest request uses {used / window:.0%}"


def _segments(anatomy: Anatomy, *, with_free: bool) -> list[tuple[str, int, str]]:
    """(key, tokens, hover text) of a bar, bottom to top."""
    segments = []
    for part in anatomy.parts:
        label = _part_label(part.name)
        segments.append(
            (
                part.name,
                part.tokens,
                f"{label}: {part.tokens:,} tokens<br>{plotly(holds(anatomy, part))}",
            )
        )
    segments.append(
        (
            "reserve",
            anatomy.reserve,
            f"{RESERVE_LABEL}: {anatomy.reserve:,} tokens<br>kept free for the reply (max reply tokens)",
        )
    )
    if with_free and anatomy.free is not None:
        segments.append(
            ("free", anatomy.free, f"{FREE_LABEL}: {anatomy.free:,} of {anatomy.window:,} tokens")
        )
    return segments


def _style(key: str, *, outline: bool = True) -> tuple[str, str, dict[str, object]]:
    """Legend label, colour and marker extras of a bar segment."""
    if key == "reserve":
        return (
            RESERVE_LABEL,
            RESERVE_COLOR,
            {"pattern": {"shape": "/", "fgcolor": "#A39B16", "size": 7, "fillmode": "overlay"}},
        )
    if key == "free":
        # outlined in the one-bar-per-lane view; in the turn-by-turn panels the free columns
        # are a plain light background (thirty outlines read as stripes on a projector)
        return FREE_LABEL, FREE_COLOR, {"line": {"color": "#CBD5E1", "width": 1 if outline else 0}}
    return _part_label(key), PART_COLORS.get(key, "#888888"), {}


def _part_label(name: str) -> str:
    """A part's legend and hover label (an imported record may name any part: as text)."""
    return plotly(PART_LABELS.get(name, name))


def _upkeep_hover(anatomy: Anatomy) -> str:
    if not anatomy.upkeep:
        return f"{UPKEEP_LABEL}: none this turn"
    kinds = ", ".join(f"{plotly(kind)} {tokens:,}" for kind, tokens in anatomy.upkeep)
    return f"{UPKEEP_LABEL}: {anatomy.upkeep_tokens:,} tokens<br>{kinds}"


def _lane_traces(
    anatomies: Sequence[Anatomy], *, with_free: bool, legend: set[str]
) -> list[go.Bar]:
    """A lane's bars over the turns: one trace per part (then reserve, free, upkeep), each bar
    stacked by explicit bases so the upkeep bar can stand beside it."""
    if not anatomies:
        return []
    turns = [a.turn for a in anatomies]
    stacks = [_segments(a, with_free=with_free) for a in anatomies]
    keys = [k for k, _, _ in stacks[0]]
    bases = [0] * len(anatomies)
    traces = []
    for index, key in enumerate(keys):
        label, colour, extra = _style(key, outline=False)
        values = [stack[index][1] for stack in stacks]
        traces.append(
            go.Bar(
                x=turns,
                y=values,
                base=list(bases),
                offset=-0.42,
                width=0.58,
                name=label,
                legendgroup=plotly(key),
                showlegend=key not in legend,
                marker={"color": colour, **extra},
                hovertext=[stack[index][2] for stack in stacks],
                hovertemplate="turn %{x} · %{hovertext}<extra></extra>",
            )
        )
        legend.add(key)
        bases = [b + v for b, v in zip(bases, values, strict=True)]
    traces.append(
        go.Bar(
            x=turns,
            y=[a.upkeep_tokens for a in anatomies],
            base=[0] * len(anatomies),
            offset=0.2,
            width=0.24,
            name=UPKEEP_LABEL,
            legendgroup="upkeep",
            showlegend="upkeep" not in legend,
            marker={
                "color": UPKEEP_COLOR,
                "pattern": {"shape": "x", "fgcolor": "#00563F", "size": 6, "fillmode": "overlay"},
            },
            hovertext=[_upkeep_hover(a) for a in anatomies],
            hovertemplate="turn %{x} · %{hovertext}<extra></extra>",
        )
    )
    legend.add("upkeep")
    return traces


def _window_lines(
    axis: str, window: int | None, budget: int | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Shapes and labels for one panel (axis suffix '' or '2', ...): the window dashed, the
    budget dotted. Plain dicts added in one layout update (add_hline per panel is slow)."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for value, colour, dash in ((window, "#111827", "dash"), (budget, "#6B7280", "dot")):
        if value:
            shapes.append(
                {
                    "type": "line",
                    "xref": f"x{axis} domain",
                    "x0": 0,
                    "x1": 1,
                    "yref": f"y{axis}",
                    "y0": value,
                    "y1": value,
                    "line": {"color": colour, "width": 2, "dash": dash},
                }
            )
    if budget:
        notes.append(
            {
                "xref": f"x{axis} domain",
                "x": 1,
                "xanchor": "right",
                "yref": f"y{axis}",
                "y": budget,
                "yanchor": "bottom",
                "text": f"budget {budget:,}",
                "showarrow": False,
                "font": {"size": 14},
            }
        )
    return shapes, notes


def _anatomies(records: Sequence[LaneTurn], window: int | None, reserve: int) -> list[Anatomy]:
    out = [anatomy_of(r, window=window, reserve=reserve) for r in records]
    return [a for a in out if a is not None]


def _finish(fig: go.Figure, *, title: str, height: int, gap: int = 28) -> go.Figure:
    """Shared layout: title on top, the one legend under the plot (it pushes the margin)."""
    used = {
        t.legendgroup
        for t in fig.data
        if any(v for v in (t.x if t.orientation == "h" else t.y) or ())
    }
    for trace in fig.data:  # a part no lane has (retrieval turns without a retrieval lane)
        if trace.legendgroup not in used:
            trace.showlegend = False
    fig.update_layout(
        title={
            "text": title,
            "font": {"size": 20},
            "x": 0.01,
            "xanchor": "left",
            "y": 1,
            "yanchor": "bottom",
            "yref": "paper",
            "pad": {"b": gap},
        },
        height=height,
        barmode="overlay",
        font=FONT,
        plot_bgcolor="white",
        paper_bgcolor="white",
        hoverlabel={"font": {"size": 15}},
        legend={
            "orientation": "h",
            "x": 0,
            "y": 0.005,
            "yref": "container",
            "yanchor": "bottom",
            "font": {"size": 15},
            "traceorder": "normal",
            "entrywidthmode": "pixels",
            "entrywidth": 0,
        },
        bargap=0.1,
    )
    return fig


def lane_anatomy_figure(
    name: str,
    title: str,
    records: Sequence[LaneTurn],
    *,
    window: int | None,
    reserve: int,
    height: int = 360,
) -> go.Figure:
    """One lane over the turns: the request by part, the reply reserve, free space, upkeep."""
    return anatomy_grid_figure(
        {name: records}, {name: title}, window=window, reserve=reserve, columns=1, height=height
    )


def anatomy_grid_figure(
    records: Mapping[str, Sequence[LaneTurn]],
    titles: Mapping[str, str],
    *,
    window: int | None,
    reserve: int,
    columns: int = 3,
    height: int | None = None,
) -> go.Figure:
    """Every lane's request by part over the turns, small multiples on one token scale, with
    one shared legend (a part has the same colour in every lane)."""
    names = list(records)
    per_lane = {n: _anatomies(records[n], window, reserve) for n in names}
    everything = [a for items in per_lane.values() for a in items]
    length, drawn_window = _scale(everything)
    columns = max(1, min(columns, len(names)))
    rows = max(1, math.ceil(len(names) / columns))
    fig = make_subplots(
        rows=rows,
        cols=columns,
        shared_yaxes=True,
        subplot_titles=[plotly(titles.get(n, n)) for n in names],
        horizontal_spacing=0.03,
        vertical_spacing=0.16 if rows > 1 else 0.1,
    )
    legend: set[str] = set()
    last_turn = max((a.turn for a in everything), default=1)
    traces: list[go.Bar] = []
    where: tuple[list[int], list[int]] = ([], [])
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        lane = _lane_traces(per_lane[name], with_free=drawn_window is not None, legend=legend)
        traces += lane
        where[0].extend([i // columns + 1] * len(lane))
        where[1].extend([i % columns + 1] * len(lane))
        budget = per_lane[name][-1].budget if per_lane[name] else None
        lines, labels = _window_lines(
            str(i + 1) if i else "", drawn_window, budget if budget and budget < length else None
        )
        shapes += lines
        notes += labels
    if traces:
        fig.add_traces(traces, rows=where[0], cols=where[1])
    fig.update_yaxes(range=[0, length], gridcolor="#E5E7EB", tickformat=",", automargin=True)
    fig.update_yaxes(title_text="tokens", col=1)
    fig.update_xaxes(range=[0.4, last_turn + 0.6], dtick=1 if last_turn <= 12 else 5)
    fig.update_xaxes(title_text="turn", row=rows)
    fig.update_annotations(font={"size": 16})  # the lanes' titles
    fig.update_layout(shapes=shapes, annotations=[*fig.layout.annotations, *notes])
    title = "What fills each request, turn by turn"
    if drawn_window is None and everything:
        title += f"<br><sup>{_off_scale_note(everything)}</sup>"
    elif drawn_window:
        title += f"<br><sup>dashed: the context window ({drawn_window:,} tokens) · dotted: the lane's budget (message text; framing is outside it)</sup>"
    size = height or (200 + 280 * rows)
    fig = _finish(fig, title=title, height=size, gap=46)
    fig.update_layout(margin={"l": 10, "r": 10, "t": 115, "b": 120})
    return fig


def comparison_anatomy_figure(
    records: Mapping[str, Sequence[LaneTurn]],
    titles: Mapping[str, str],
    *,
    turn: int,
    window: int | None,
    reserve: int,
    height: int | None = None,
) -> go.Figure:
    """All lanes at `turn`: one horizontal bar per lane (parts, reply reserve, free space) and,
    just under it on the same scale, a slim bar of the upkeep calls that turn made."""
    shown: list[tuple[str, Anatomy]] = []
    for name, recs in records.items():
        record = next((r for r in recs if r.turn == turn), None)
        anatomy = anatomy_of(record, window=window, reserve=reserve) if record else None
        if anatomy is not None:
            shown.append((plotly(titles.get(name, name)), anatomy))
    length, drawn_window = _scale([a for _, a in shown])
    lanes = [t for t, _ in shown]
    stacks = [_segments(a, with_free=drawn_window is not None) for _, a in shown]
    fig = go.Figure()
    if shown:
        bases = [0] * len(shown)
        for index, (key, _, _) in enumerate(stacks[0]):
            label, colour, extra = _style(key)
            values = [stack[index][1] for stack in stacks]
            fig.add_bar(
                y=lanes,
                x=values,
                base=list(bases),
                orientation="h",
                offset=-0.4,
                width=0.56,
                name=label,
                legendgroup=plotly(key),
                marker={"color": colour, **extra},
                hovertext=[stack[index][2] for stack in stacks],
                hovertemplate="%{y} · %{hovertext}<extra></extra>",
            )
            bases = [b + v for b, v in zip(bases, values, strict=True)]
        upkeep = [a.upkeep_tokens for _, a in shown]
        fig.add_bar(
            y=lanes,
            x=upkeep,
            base=[0] * len(shown),
            orientation="h",
            offset=0.18,
            width=0.24,
            name=UPKEEP_LABEL,
            legendgroup="upkeep",
            marker={
                "color": UPKEEP_COLOR,
                "pattern": {"shape": "x", "fgcolor": "#00563F", "size": 6, "fillmode": "overlay"},
            },
            text=[f"upkeep {u:,}" if u else "" for u in upkeep],
            textposition="outside",
            textfont={"size": 14, "color": "#00563F"},
            hovertext=[_upkeep_hover(a) for _, a in shown],
            hovertemplate="%{y} · %{hovertext}<extra></extra>",
        )
        # the request's total, after the reply reserve (on the free space, where it reads)
        fig.add_scatter(
            y=lanes,
            x=[a.total + a.reserve for _, a in shown],
            mode="text",
            text=[f" {a.total:,} sent" for _, a in shown],
            cliponaxis=False,
            textposition="middle right",
            textfont={"size": 15, "color": "#111827"},
            showlegend=False,
            hoverinfo="skip",
            name="request total",
        )
        if drawn_window:
            fig.add_vline(
                x=drawn_window,
                line={"color": "#111827", "width": 2, "dash": "dash"},
                annotation={"text": f"window {drawn_window:,}", "font": {"size": 14}},
                annotation_position="top",
            )
    fig.update_yaxes(autorange="reversed", tickfont={"size": 16}, automargin=True)
    fig.update_xaxes(range=[0, length], gridcolor="#E5E7EB", tickformat=",", title_text="tokens")
    title = f"What each lane sends at turn {turn}"
    if shown and drawn_window is None:
        title += f"<br><sup>{_off_scale_note([a for _, a in shown])}</sup>"
    size = height or (190 + 62 * max(1, len(shown)))
    fig = _finish(fig, title=title, height=size)
    fig.update_layout(margin={"l": 10, "r": 30, "t": 80 if drawn_window is None else 60, "b": 130})
    return fig


def anatomy_html(
    saved: Any, titles: Mapping[str, str], fig_html: Callable[[go.Figure, str], str]
) -> str:
    """The HTML report's section (a saved session): all lanes at the last turn, then each lane
    over the turns; the window and reply reserve are the session's provider settings."""
    provider = saved.settings.get("provider") or {}
    window = provider.get("context_window")
    reserve = int(provider.get("max_tokens") or 0)
    records = saved.records
    turn = max((r.turn for rs in records.values() for r in rs if r.account.parts), default=0)
    if not turn:
        return ""
    e = html_text
    notes = "".join(
        f"<p class='bad'>{e(line)}</p>"
        for line in turn_warnings(records, titles, turn=turn, window=window, reserve=reserve)
    )
    bars = comparison_anatomy_figure(records, titles, turn=turn, window=window, reserve=reserve)
    grid = anatomy_grid_figure(records, titles, window=window, reserve=reserve)
    return (
        "<section id='anatomy'><h2>What fills each request</h2><p class='note'>The parts each "
        "strategy's memory put in its request, as counted when the request was built (hover a "
        "part for the turns it holds); green bars are upkeep calls spent outside the request."
        f"</p><div class='card'>{fig_html(bars, 'fig-anatomy-turn')}</div>{notes}"
        f"<div class='card'>{fig_html(grid, 'fig-anatomy-grid')}</div></section>"
    )
