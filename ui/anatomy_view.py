"""Context anatomy on the main page and in presentation mode: what fills each lane's request.

    anatomy_view.section(session)                          # main page, at the latest turn
    anatomy_view.section(session, records=upto, turn=n)    # presentation mode, at turn n

The figures come from present/anatomy.py; the window and the reply reserve are the session's
provider settings (its model's context window and max reply tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from lanes.lane import LaneTurn
from lanes.session import Session
from present.anatomy import anatomy_grid_figure, comparison_anatomy_figure, turn_warnings
from present.anatomy_data import has_anatomy, ungrounded_lines
from ui.safe import md

CACHE = "anatomy_figures"


def window_of(session: Session) -> tuple[int | None, int]:
    """The context window and the tokens reserved for the reply, from the session's settings."""
    provider = session.provider
    return getattr(provider, "context_window", None), int(getattr(provider, "max_tokens", 0) or 0)


def _version(records: Mapping[str, Sequence[LaneTurn]]) -> tuple[Any, ...]:
    return tuple((n, len(rs), id(rs[-1]) if rs else None) for n, rs in records.items())


def section(
    session: Session,
    *,
    records: Mapping[str, Sequence[LaneTurn]] | None = None,
    turn: int | None = None,
    key: str = "anatomy",
    grid: bool = True,
) -> None:
    """The side-by-side bars at `turn` (default: the latest), warnings, and every lane's parts
    over the turns as small multiples. Figures are rebuilt only when the records change."""
    records = records if records is not None else session.records()
    turn = turn or session.turn
    if not turn or not any(records.values()):
        return
    if not has_anatomy(records, turn=turn):
        st.caption(
            "What fills each request: not shown for this turn, saved before Memory Lab recorded "
            "the parts of each request. New turns show it."
        )
        return
    titles = {name: lane.title for name, lane in session.lanes.items()}
    window, reserve = window_of(session)
    cache: dict[str, tuple[tuple[Any, ...], Any, Any]] = st.session_state.setdefault(CACHE, {})
    version = (session.id, turn, window, reserve, grid, _version(records))
    cached = cache.get(key)
    if cached is None or cached[0] != version:
        bars = comparison_anatomy_figure(records, titles, turn=turn, window=window, reserve=reserve)
        small = (
            anatomy_grid_figure(records, titles, window=window, reserve=reserve) if grid else None
        )
        cached = (version, bars, small)
        cache[key] = cached
    st.subheader("What fills each request")
    st.caption(
        "The parts each strategy's memory put in its request, counted when the request was "
        "built; hover a part to see the turns it holds. Green bars: upkeep calls (summaries, "
        "fact extraction) spent outside the request."
    )
    config = {"displayModeBar": False}  # theme=None: the part colours exactly as in the report
    st.plotly_chart(cached[1], width="stretch", key=f"{key}-bars-{turn}", config=config, theme=None)
    lines = turn_warnings(records, titles, turn=turn, window=window, reserve=reserve)
    if lines:
        st.warning("\n".join(md("- {}", line) for line in lines))
    invented = ungrounded_lines(records, titles, turn=turn)
    if invented:
        st.caption("\n".join(md("- {}", line) for line in invented))
    if cached[2] is not None:
        st.plotly_chart(
            cached[2], width="stretch", key=f"{key}-grid-{turn}", config=config, theme=None
        )
