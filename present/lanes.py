"""Plotly figures for the main page and the exports (no streamlit here: exports reuse them).

Built for a projector: large fonts, thick lines, one colour per strategy everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import plotly.graph_objects as go

from lanes.lane import LaneTurn
from present.safe import plotly
from present.style import color, font, right_axis, styled

FONT = font(15, "#1f2937")  # the main page's charts (anatomy uses it too)


def _layout(fig: go.Figure, *, title: str, height: int) -> go.Figure:
    styled(
        fig,
        title=title,
        title_size=18,
        height=height,
        text=FONT,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        hovermode="x unified",
        legend={"orientation": "h", "y": -0.25, "x": 0},
    )
    fig.update_xaxes(
        title_text="turn", dtick=1 if _max_turn(fig) <= 12 else None, gridcolor="#e5e7eb"
    )
    fig.update_yaxes(gridcolor="#e5e7eb", rangemode="tozero")
    return fig


def _max_turn(fig: go.Figure) -> int:
    turns = [x for trace in fig.data for x in (trace.x or ())]
    return int(max(turns)) if turns else 0


def charted(records: Sequence[LaneTurn]) -> list[LaneTurn]:
    """The turns that produced a request (an overflow sent nothing, so it has no point)."""
    return [r for r in records if r.counted > 0]


def lane_figure(name: str, records: Sequence[LaneTurn], *, height: int = 300) -> go.Figure:
    """One lane: prompt tokens counted and billed, maintenance tokens, and the running total."""
    rows = charted(records)
    turns = [r.turn for r in rows]
    fig = go.Figure()
    fig.add_bar(
        x=turns,
        y=[r.maintenance_tokens for r in rows],
        name="upkeep calls",
        marker_color="#cbd5e1",
    )
    fig.add_scatter(
        x=turns,
        y=[r.counted for r in rows],
        name="prompt (counted)",
        mode="lines+markers",
        line={"color": color(name), "width": 3},
        marker={"size": 8},
    )
    billed = [(r.turn, r.billed_input) for r in rows if r.billed_input is not None]
    if billed:
        fig.add_scatter(
            x=[t for t, _ in billed],
            y=[b for _, b in billed],
            name="prompt (billed)",
            mode="lines+markers",
            line={"color": color(name), "width": 2, "dash": "dot"},
            marker={"size": 6, "symbol": "diamond"},
        )
    fig.add_scatter(
        x=turns,
        y=cumulative(rows),
        name="all tokens so far",
        mode="lines",
        line={"color": "#374151", "width": 2, "dash": "dash"},
        yaxis="y2",
    )
    fig.update_layout(
        yaxis={"title": {"text": "tokens per call"}},
        yaxis2=right_axis("total so far"),
    )
    _layout(fig, title="Tokens per turn", height=height)
    # columns are narrow: the legend becomes a caption under the chart (LANE_LEGEND)
    fig.update_layout(
        showlegend=False,
        margin={"l": 6, "r": 6, "t": 40, "b": 6},
        font={"size": 13},
        title={"font": {"size": 15}},
    )
    return fig


LANE_LEGEND = (
    "solid: prompt counted · dotted: billed · grey bars: upkeep calls · "
    "dashed: total so far (right axis)"
)


def cumulative(records: Sequence[LaneTurn]) -> list[int]:
    """Running total of everything a lane sent and received: prompts, replies, upkeep."""
    total, out = 0, []
    for r in records:
        prompt = r.billed_input if r.billed_input is not None else r.counted
        total += prompt + (r.billed_output or 0) + r.maintenance_tokens
        out.append(total)
    return out


DASHES = ("solid", "dash", "dot", "dashdot")


def lane_looks(names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """(colour, dash) per lane: its strategy's colour; a second lane of the same strategy
    (another model or parameters) gets a lighter shade of it and a dashed line, a third a
    dotted one, so lanes of one strategy read as one family yet stay apart."""
    seen: dict[str, int] = {}
    out = {}
    for name in names:
        base, family = color(name), name.split(" ", 1)[0]
        k = seen.get(family, 0)
        seen[family] = k + 1
        out[name] = (shade(base, 0.3 * min(k, 2)), DASHES[k % len(DASHES)])
    return out


def shade(hex_color: str, towards_white: float) -> str:
    """`hex_color` mixed with white by `towards_white` (0: unchanged, 1: white)."""
    rgb = [int(hex_color[i : i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(c + (255 - c) * towards_white) for c in rgb]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def _by_lane(
    records: Mapping[str, Sequence[LaneTurn]],
    titles: Mapping[str, str],
    values: Callable[[list[LaneTurn]], list[int]],
    *,
    title: str,
    y_title: str,
    height: int,
) -> go.Figure:
    """One thick line per lane, in the lane's colour."""
    fig = go.Figure()
    looks = lane_looks(list(records))
    for i, (name, recs) in enumerate(records.items()):
        rows = charted(recs)
        # lanes often coincide early on (nothing dropped yet): earlier lanes are drawn wider,
        # so a line hidden under a later one still shows as a coloured band around it
        width = max(3, 10 - 1.5 * i)
        shade, dash = looks[name]
        fig.add_scatter(
            x=[r.turn for r in rows],
            y=values(rows),
            name=plotly(titles.get(name, name)),
            mode="lines+markers",
            line={"color": shade, "width": width, "dash": dash},
            marker={"size": width + 5},
        )
    fig.update_yaxes(title_text=y_title)
    return _layout(fig, title=title, height=height)


def comparison_figure(
    records: Mapping[str, Sequence[LaneTurn]], titles: Mapping[str, str], *, height: int = 430
) -> go.Figure:
    """All lanes' prompt tokens per turn on one chart: the picture for a stakeholder."""
    return _by_lane(
        records,
        titles,
        lambda rows: [r.counted for r in rows],
        title="Prompt tokens per turn, by strategy",
        y_title="prompt tokens sent",
        height=height,
    )


def cumulative_figure(
    records: Mapping[str, Sequence[LaneTurn]], titles: Mapping[str, str], *, height: int = 430
) -> go.Figure:
    """All lanes' running total of tokens (prompts + replies + upkeep calls)."""
    return _by_lane(
        records,
        titles,
        cumulative,
        title="Total tokens over the conversation",
        y_title="tokens so far",
        height=height,
    )
