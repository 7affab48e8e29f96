"""The look every figure shares: fonts, white backgrounds, a strategy's colour, a right axis.

One place for the projector-sized styling that the main page, the survival lab, the
token-growth simulator and the exports all use; a strategy's colour comes from the registry.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from memory.registry import REGISTRY

FONT_FAMILY = "Inter, Segoe UI, Helvetica, Arial, sans-serif"
UNKNOWN_COLOR = "#555555"  # a lane whose strategy is no longer registered


def font(size: int, color: str = "#111827") -> dict[str, Any]:
    return {"family": FONT_FAMILY, "size": size, "color": color}


def color(name: str) -> str:
    """The colour the strategy `name` is drawn in everywhere (set where it is registered); a
    lane label ('summary_buffer · gpt-4o-mini') takes its strategy's colour."""
    found = REGISTRY.get(name) or REGISTRY.get(name.split(" ", 1)[0])
    return found.color if found else UNKNOWN_COLOR


def styled(
    fig: go.Figure,
    *,
    title: str,
    title_size: int,
    height: int,
    text: dict[str, Any],
    margin: dict[str, int],
    **layout: Any,
) -> go.Figure:
    """Title at the top left, the given font, height and margins, white backgrounds."""
    fig.update_layout(
        title={"text": title, "font": {"size": title_size}, "x": 0.01, "xanchor": "left"},
        font=text,
        height=height,
        margin=margin,
        plot_bgcolor="white",
        paper_bgcolor="white",
        **layout,
    )
    return fig


def right_axis(title: str, **extra: Any) -> dict[str, Any]:
    """A second y axis on the right, from zero, without its own grid lines."""
    return {
        "title": {"text": title},
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
        **extra,
    }


def projector(fig: go.Figure, *, title: str, height: int, top: int, **layout: Any) -> go.Figure:
    """The survival lab's and the simulator's large style: 22-pt titles, 17-pt text."""
    margin = {"l": 20, "r": 20, "t": top, "b": 20}
    return styled(
        fig, title=title, title_size=22, height=height, text=font(17), margin=margin, **layout
    )
