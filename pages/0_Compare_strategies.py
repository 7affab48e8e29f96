"""Compare strategies — the main page: one conversation fanned out to memory strategies.

Each strategy is a lane drawn as a column: its streamed reply, the exact request body it
sent, and a live chart of prompt tokens per turn. Lanes run as parallel fragments; the last
lane to finish a turn reruns the app so the comparison charts below catch up.
"""

from __future__ import annotations

import streamlit as st

from lanes.session import Session
from memory.strategies.base import MAX_MESSAGE_CHARS
from present.lanes import comparison_figure, cumulative_figure
from scenarios import fincoach
from ui import anatomy_view, demo_controls, lane_view, navigation, presentation
from ui.app_state import AppConfig
from ui.persistence import endpoint_notice, lane_choices, new_session
from ui.safe import md, plain
from ui.sidebar import render_sidebar

navigation.page_config("Memory Lab", "🧠")
QUIET_PAGE_CSS = "[data-testid='stStatusWidget'] { display: none; }"

st.session_state.setdefault("config", AppConfig.default())
st.session_state.setdefault("session", None)
st.session_state.setdefault("demo_queue", [])
st.session_state.setdefault("notice", None)

config: AppConfig = st.session_state.config
applied = render_sidebar(config)
if applied is not None:
    st.session_state.config = config = applied
    st.session_state.session = None
    st.session_state.demo_queue = []
    st.rerun()  # redraw the sidebar from the applied settings (an emptied "Add a lane" box)

if st.session_state.session is None:
    try:
        st.session_state.session = new_session(config)
    except Exception as exc:  # settings a person can fix: show them, keep the page alive
        st.error(md("Could not start the lanes: {}", exc))
        st.stop()
session: Session = st.session_state.session
if presentation.sidebar(session):  # the toggle; presentation mode replaces the page below
    presentation.render(session, config)
    st.stop()

# ---- header ---------------------------------------------------------------------------
top_left, top_right = st.columns([3, 2], vertical_alignment="bottom")
with top_left:
    st.title("Memory Lab")
    own = len(session.own_providers)
    st.caption(
        f"One conversation, {len(session.lanes)} memory strategies side by side · "
        f"{plain(config.provider_caption())}"
        + (
            f" ({own} lane{'s' * (own > 1)} on {'their' if own > 1 else 'its'} own model)"
            if own
            else ""
        )
    )
# One look at whether lanes are still answering, for every control below: asked again per
# control, a turn that ended mid-draw left Play disabled and no watcher to redraw the page.
busy = bool(session.pending_lanes())
with top_right:
    b1, b2 = st.columns(2)
    if b1.button("▶ Play the FinCoach demo", width="stretch", disabled=busy):
        st.session_state.config = config = config.with_system_prompt(fincoach.SYSTEM_PROMPT)
        st.session_state.session = session = new_session(config)
        st.session_state.demo_queue = list(fincoach.DEMO_TURNS)
        busy = False
    if b2.button("New conversation", width="stretch"):
        st.session_state.session = session = new_session(config)
        st.session_state.demo_queue = []
        busy = False
    demo_controls.recorded_button(config, disabled=busy)
    demo_controls.stop_button(session)
# Notes that come and go sit in containers drawn on every run, so the lanes below keep their
# place in the page: Streamlit matches elements by position, and a lane block that moved
# leaves the previous run's copy on screen, faded, above the live one until the run ends.
with st.container():
    demo_controls.recorded_label(session)
    endpoint_notice(session, config)
    demo_controls.warm_up(session)
    notice = st.session_state.notice
    if notice:
        st.info(notice)
        st.session_state.notice = None


# ---- start the next turn: a typed message, or the demo's next line ----------------------
def start_turn(text: str) -> None:
    """Record the message, start every lane's run in the session's threads, and redraw with
    the input disabled once their first pieces are in (a bounded wait: the model reads the
    lanes' prompts with the cores to itself); the lanes' columns attach to their runs."""
    turn = session.begin_turn(text)
    session.pacing.queue_next(bool(st.session_state.demo_queue))
    demo_controls.await_first_pieces([session.start_lane(name, turn) for name in session.lanes])
    st.rerun()


# While lanes stream, the page script runs for the whole turn: Streamlit's animated "running"
# badge then repaints many times a second, and a chat input pinned to the page's bottom keeps
# a 17 ms timer reading the page's height (forced layouts). Both took the cores from the model,
# whose two threads wait for each other after every layer: the badge is hidden (Stop is on the
# page) and the input sits in the page's flow, under the header.
st.html(f"<style>{QUIET_PAGE_CSS}</style>")
message = st.container().chat_input(
    "Message every lane at once…",
    disabled=busy,
    max_chars=MAX_MESSAGE_CHARS,
)
if message is not None and not busy:
    if message.strip():
        st.session_state.demo_queue = []
        start_turn(message)
    else:
        st.toast("Empty message ignored: type something first.")
elif st.session_state.demo_queue and not busy:
    demo_controls.settle(session)  # first tokens then wait for nobody
    start_turn(st.session_state.demo_queue.pop(0))
# the demo begins its next turn the moment this one ends: the stack paces for that
session.pacing.queue_next(bool(st.session_state.demo_queue))


@st.fragment(run_every=1.0)
def watch_turn() -> None:
    """Fallback: redraw when every lane is done, or when a pending lane has had no run going
    for a while (the page run that was to start it was cut off): the redraw starts it."""
    stalled = not session.in_flight() and session.idle_for() > 3.0
    if not session.pending_lanes() or stalled:
        st.rerun()


with st.container():  # see the notes above: the lanes' place stays the same
    if busy:  # also when the turn has ended since: the watcher's first look redraws
        watch_turn()
    if session.turn:
        st.markdown(f"**You · turn {session.turn}:** {plain(session.user_turns[-1])}")

# ---- the lanes --------------------------------------------------------------------------
choices = lane_choices(config, session)  # label -> its lane spec: its own price and window


@st.fragment(parallel=True)
def lane_column(name: str) -> None:
    lane = session.lanes[name]
    lane_view.header(lane)
    turn = session.turn
    pending = name in session.pending_lanes()
    latest = lane.turns[-1] if lane.turns else None
    lane_view.conversation(lane, upto=turn if (pending or latest) else turn + 1)
    # the same places in both branches: reply box, status lines, then details (the chart
    # while the lane answers), so a page run that ends a lane's turn replaces, not repeats
    box = st.container(height=demo_controls.REPLY_HEIGHT, border=True)
    status = st.container()
    if pending:  # the run goes on in the session's thread; this draws it, or attaches again
        if lane.turns:  # the chart of the turns answered so far stays in view below the reply
            lane_view.chart(lane, key=f"chart-{session.id}-{name}-{turn - 1}")
        latest = demo_controls.follow(session.start_lane(name, turn), box)
        if session.finish_turn_once(turn):
            st.rerun()  # the last lane to finish redraws the page with everyone's results
        with status:  # other lanes still answer or keep their memory: this turn's figures,
            # payload and chart wait for that page run, drawn once, not while the model works
            if not demo_controls.cancelled_line(latest):
                lane_view.status_line(latest)
            st.caption(lane_view.DETAILS_LATER)
        return
    lane_view.reply_box(demo_controls.shown_reply(session, name, latest, turn), box)
    if latest is None or latest.turn != turn:
        if lane.turns:  # before the first turn: no empty axes
            lane_view.chart(lane, key=f"chart-{session.id}-{name}-{turn}")
        return
    with status:
        if not demo_controls.cancelled_line(latest):
            lane_view.status_line(latest)
        if lane.can_retry(turn) and st.button("Retry this lane", key=f"retry-{name}-{turn}"):
            session.retry(name)
            st.rerun()
    own = choices.get(name)
    lane_view.figures(lane, latest, price=config.lane_price(own), window=config.lane_window(own))
    lane_view.facts_panel(lane, latest)
    lane_view.payload(latest)
    lane_view.chart(lane, key=f"chart-{session.id}-{name}-{turn}")


columns = st.columns(len(session.lanes), gap="small")
stoppable = demo_controls.lanes_with_stop(session)
for column, name in zip(columns, session.lanes, strict=True):
    with column:
        with st.container():  # always drawn: the lane's fragment keeps its place below it
            if name in stoppable:  # drawn by the page, not the fragment: handled at once
                demo_controls.lane_stop_button(session, name)
        lane_column(name)


# ---- below the lanes: the stakeholder picture --------------------------------------------
def stakeholder_view() -> None:
    """All lanes on one chart, their running totals, and a context gauge per lane."""
    records = session.records()
    titles = {name: lane.title for name, lane in session.lanes.items()}
    if any(records.values()):
        left, right = st.columns(2)
        with left:
            st.plotly_chart(comparison_figure(records, titles), width="stretch", key="comparison")
        with right:
            st.plotly_chart(cumulative_figure(records, titles), width="stretch", key="cumulative")
    else:
        st.info(
            "Send a message below, or press **Play the FinCoach demo**: every lane answers the "
            "same message with its own memory, and the charts here compare what each one sent."
        )
    anatomy_view.section(session)
    st.subheader("Context window")
    sample = session.user_turns[-1] if session.user_turns else "What should I do next?"
    gauges = st.columns(len(session.lanes), gap="small")
    for gauge, lane in zip(gauges, session.lanes.values(), strict=True):
        with gauge:
            own = choices.get(lane.name)
            lane_view.gauge(
                lane, window=config.lane_window(own), sample=sample, price=config.lane_price(own)
            )


if session.pending_lanes():
    # drawn once every lane has answered: building figures now would only compete with the
    # lanes' threads for the interpreter
    st.caption("Comparison charts and context gauges update when every lane has answered.")
else:
    stakeholder_view()
