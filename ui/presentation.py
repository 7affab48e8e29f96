"""Presentation mode for the main page: one turn at a time, big charts, no payloads.

For replaying a conversation in front of an audience (a saved session opened from the
Sessions page, or the one on screen): ◀ / ▶ step through the turns (the Left and Right
arrow keys too), each lane's reply to that turn, and the charts drawn up to that turn.

    presentation.sidebar(session)              # the toggle, and whether turns are being saved
    if st.session_state.get("presentation"):
        presentation.render(session, config)
        st.stop()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from lanes.lane import LaneTurn
from lanes.session import Session
from present.lanes import LANE_LEGEND, comparison_figure, cumulative_figure, lane_figure
from storage.store import INTERRUPTED
from ui import anatomy_view, navigation, persistence
from ui.app_state import AppConfig
from ui.safe import html_text, md, plain

KEY = navigation.MODES["presentation"][1]
CHART_HEIGHT = 560
LANE_CHART_HEIGHT = 400
LANES_PER_ROW = 3


def sidebar(session: Session) -> bool:
    """The presentation toggle and a line on saving; True when presentation mode is on."""
    with st.sidebar:
        st.divider()
        st.toggle(
            "Presentation mode",
            key=KEY,
            help="One turn at a time, big charts, payloads hidden. ◀ / ▶ or the arrow keys.",
        )
        ok, line = persistence.status(session)
        (st.caption if ok else st.warning)(line)
    return bool(st.session_state.get(KEY))


def turn_key(session: Session) -> str:
    return f"present-turn-{session.id}"


def upto(records: Mapping[str, Sequence[LaneTurn]], turn: int) -> dict[str, list[LaneTurn]]:
    """Each lane's records up to and including `turn`."""
    return {name: [r for r in recs if r.turn <= turn] for name, recs in records.items()}


def _step(key: str, delta: int, last: int) -> None:
    st.session_state[key] = min(last, max(1, int(st.session_state.get(key, 1)) + delta))


def _leave() -> None:
    st.session_state[KEY] = False


# the audience sees the conversation, not the settings: the sidebar is hidden meanwhile
_HIDE_SIDEBAR = "<style>section[data-testid='stSidebar']{display:none}</style>"


def render(session: Session, config: AppConfig | None = None) -> None:
    """The presentation view of `session` at the turn chosen with ◀ / ▶."""
    last = session.turn
    st.markdown(_HIDE_SIDEBAR, unsafe_allow_html=True)
    head, leave = st.columns([5, 1], vertical_alignment="center")
    head.title(plain(session.name) if session.name else "Memory Lab")
    leave.button("Exit presentation", on_click=_leave, width="stretch", shortcut="Esc")
    if config is not None:
        st.caption(md("{} memory strategies · {}", len(session.lanes), config.provider_caption()))
    if session.pending_lanes():
        st.warning("A turn is still running: leave presentation mode to let it finish.")
    if last == 0:
        st.info(
            "Nothing to present yet: send a message (leave presentation mode), or open a saved "
            "session from the Sessions page and press Present."
        )
        return
    key = turn_key(session)
    st.session_state.setdefault(key, 1)
    turn = min(last, max(1, int(st.session_state[key])))
    st.session_state[key] = turn

    left, middle, right = st.columns([1, 3, 1], vertical_alignment="center")
    left.button(
        "◀ Previous",
        key=f"present-prev-{session.id}",
        on_click=_step,
        args=(key, -1, last),
        disabled=turn <= 1,
        width="stretch",
        shortcut="Left",
    )
    middle.markdown(
        f"<div style='text-align:center;font-size:1.6rem;font-weight:600'>"
        f"Turn {turn} of {last}</div>",
        unsafe_allow_html=True,
    )
    right.button(
        "Next ▶",
        key=f"present-next-{session.id}",
        on_click=_step,
        args=(key, 1, last),
        disabled=turn >= last,
        width="stretch",
        shortcut="Right",
    )
    st.markdown(f"### You · {turn}")
    st.markdown(
        "<div style='font-size:1.45rem;line-height:1.45;border-left:5px solid #94a3b8;"
        f"padding:4px 16px;margin-bottom:12px'>{html_text(session.user_turns[turn - 1])}</div>",
        unsafe_allow_html=True,
    )

    records = upto(session.records(), turn)
    titles = {name: lane.title for name, lane in session.lanes.items()}
    columns = st.columns(len(session.lanes), gap="small")
    for column, name in zip(columns, session.lanes, strict=True):
        with column:
            _lane_reply(titles[name], records[name], turn)

    st.plotly_chart(
        comparison_figure(records, titles, height=CHART_HEIGHT),
        width="stretch",
        key=f"present-comparison-{session.id}-{turn}",
        config={"displayModeBar": False},
    )
    st.plotly_chart(
        cumulative_figure(records, titles, height=CHART_HEIGHT - 80),
        width="stretch",
        key=f"present-cumulative-{session.id}-{turn}",
        config={"displayModeBar": False},
    )
    anatomy_view.section(session, records=records, turn=turn, key="present-anatomy", grid=False)
    names = list(session.lanes)
    for start in range(0, len(names), LANES_PER_ROW):
        row = st.columns(LANES_PER_ROW, gap="medium")
        for column, name in zip(row, names[start : start + LANES_PER_ROW], strict=False):
            with column:
                st.markdown(md("**{}**", titles[name]))
                st.plotly_chart(
                    lane_figure(name, records[name], height=LANE_CHART_HEIGHT),
                    width="stretch",
                    key=f"present-lane-{session.id}-{name}-{turn}",
                    config={"displayModeBar": False},
                )
    st.caption(LANE_LEGEND)


def _lane_reply(title: str, records: Sequence[LaneTurn], turn: int) -> None:
    st.markdown(
        "<div style='font-size:1.3rem;font-weight:700;white-space:nowrap;overflow:hidden;"
        f"text-overflow:ellipsis'>{html_text(title)}</div>",
        unsafe_allow_html=True,
    )
    record = records[-1] if records and records[-1].turn == turn else None
    box = st.container(height=260, border=True)
    if record is None:
        box.caption("no answer recorded for this turn")
        return
    if record.ok:
        box.markdown(plain(record.reply) or "…")
    elif record.error_kind == INTERRUPTED:
        box.warning("Interrupted: this lane never answered this turn.")
    else:
        box.error(md("{}: {}", record.status, record.error_kind))
    previous = next((r.counted for r in reversed(records[:-1]) if r.counted), None)
    delta = record.counted - previous if previous is not None and record.counted else None
    st.metric(
        "prompt tokens sent",
        f"{record.counted:,}" if record.counted else "–",
        delta=f"{delta:+,}" if delta is not None else None,
        delta_color="inverse",
    )
