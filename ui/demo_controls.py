"""The main page's controls for showing the lanes to a room: Stop (every lane or one), the
recorded FinCoach demo, a streamed reply box that redraws at a steady pace, the bounded
waits before a turn is begun (warm-ups settling) and drawn (every lane's first piece), and a
small note while the embedded model warms up (reads the lanes' prompts before the first turn).

Self-contained: app.py calls these in a few lines, so the page's layout stays its own.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from engines import transcripts
from lanes.lane import CANCELLED, LaneTurn
from lanes.live import LiveRun, LiveView
from lanes.session import Session
from lanes.warmup import Warmup
from ui.app_state import AppConfig
from ui.safe import md, plain

RECORDED_DEMO = Path(__file__).resolve().parent.parent / "scenarios" / "fincoach_recorded.json"
# per lane: six lanes redrawing each token would compete with generation. 0.5 s, not 0.25:
# with identical requests sent once the model writes one reply where it wrote six, and
# drawing took a bigger share of the 2 cores (bench_demo `calm` against `new`, one run:
# demo 46.0 s against 48.7 s, worst first token 1.3 s against 1.6 s)
REDRAW_EVERY_S = 0.5
# with nothing new (a lane's upkeep running), one redraw a second: the st call at which a page
# rerun (a Stop click) stops a lane's reader; more often only takes the model's CPU
IDLE_REDRAW_S = 1.0
# the demo's next turn waits at most this long for the model's background reading to settle
# (lanes/transport.py Pacing): an after-upkeep warm-up reads a lane's conversation (300-900
# tokens after the demo's third turn, several seconds on 2 busy cores). A turn begun before
# it ends has its first tokens wait behind it, and the room waits as long either way; a
# warm-up that hangs delays each demo turn by this bound at most
WARM_SETTLE_S = 10.0
# the page run that begins a turn waits at most this long for every lane's first streamed
# piece before it redraws: drawn at once, the page's Python and the browser take the 2 cores
# while the model reads the lanes' new prompts, and llama.cpp's threads, which meet at a
# barrier after every layer, then read tens of tokens a second instead of over a hundred
FIRST_PIECE_WAIT_S = 1.5
REPLY_HEIGHT = 230
log = logging.getLogger(__name__)


class Paced:
    """Collects streamed text and says when it is worth drawing: the first piece at once (the
    first token on screen), then at most once every `every` seconds."""

    def __init__(
        self, every: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.every = REDRAW_EVERY_S if every is None else every
        self.clock = clock
        self.text = ""
        self.draws = 0
        self._last: float | None = None

    def add(self, delta: str) -> bool:
        """Add a piece; True when the caller should redraw now."""
        self.text += delta
        now = self.clock()
        if self._last is not None and now - self._last < self.every:
            return False
        self._last = now
        self.draws += 1
        return True

    def wait_s(self) -> float:
        """Seconds until the next redraw is due (0: now)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.every - self.clock())


def follow(live: LiveRun, box: DeltaGenerator) -> LaneTurn:
    """Draw a running lane's turn from its live buffer (lanes/live.py) in a fixed-height box
    until the run is done, and return its record. The first piece goes on screen at once,
    then at most one redraw every REDRAW_EVERY_S, and one every IDLE_REDRAW_S while nothing
    comes (an st call is where a full page rerun stops this reader: the run goes on in the
    session's thread, and the next page run's fragment attaches to it where its text has got
    to). `box`: the lane's reply box (REPLY_HEIGHT high), drawn in place."""
    slot = box.empty()
    paced = Paced()
    view = live.view()
    slot.markdown(_live_text(view))
    while not view.done:
        live.wait(view.version, timeout=IDLE_REDRAW_S)  # something new, or a quiet second
        time.sleep(paced.wait_s())
        view = live.view()
        paced.add(view.text[len(paced.text) :])
        slot.markdown(_live_text(view))
    return live.result()


def await_first_pieces(runs: Sequence[LiveRun], bound: float | None = None) -> None:
    """Return once every run has streamed a piece or ended, or after `bound` seconds
    (FIRST_PIECE_WAIT_S) in all: the page then draws the turn with its first words in."""
    deadline = time.monotonic() + (FIRST_PIECE_WAIT_S if bound is None else bound)
    for live in runs:
        view = live.view()
        while not (view.text or view.done):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            view = live.wait(view.version, timeout=left)


def _live_text(view: LiveView) -> str:
    """The reply box's text: the reply so far with a cursor, the whole reply while the lane's
    upkeep runs, or the reply as it ended."""
    if view.done:
        return plain(view.reply or view.text) or "…"
    if view.reply is not None:
        return plain(view.reply) + "\n\n:gray[*upkeep (summary / facts) running…*]"
    return plain(view.text) + " ▌" if view.text else "…"


def settle(session: Session) -> None:
    """Before the demo's next turn: let the model's background reading end, for at most
    WARM_SETTLE_S; pacing that fails never stops the demo (the turn only starts slower)."""
    try:
        session.pacing.settle(WARM_SETTLE_S)
    except Exception as exc:
        log.warning("pacing before the next turn failed: %s", exc)


def warm_up(session: Session) -> None:
    """Start warming the model for `session`'s lanes (embedded model only; background) and,
    while it runs before a turn, say so in a small note that goes away when it is done. Not
    while a turn runs: the page run that draws the note lasts the whole turn, so the note
    would outlive the warm-up on screen."""
    warmup = session.pacing.prepare()
    if warmup is not None and not warmup.done.is_set() and not session.pending_lanes():
        _warming_note(warmup)
    else:
        st.empty()  # takes the note's place at once, not when the running turn's redraw ends


@st.fragment(run_every=1.0)
def _warming_note(warmup: Warmup) -> None:
    if not warmup.done.is_set():
        st.caption(
            f"⏳ Warming the model: reading the lanes' prompts ahead ({warmup.stats.calls} "
            "requests of one token), so the first turn starts sooner. Not a turn: nothing is "
            "recorded."
        )


def stop_all(session: Session) -> None:
    """Stop the running turn in every lane, and the rest of a playing demo."""
    session.cancel()
    st.session_state.demo_queue = []


def stop_button(session: Session) -> None:
    """'■ Stop' for the running turn: shown only while lanes are answering."""
    if session.pending_lanes():
        st.button(
            "■ Stop this turn",
            key=f"stop-all-{session.id}-{session.turn}",
            on_click=stop_all,
            args=(session,),
            help="Closes every lane's stream; the turn is marked cancelled and nothing of it "
            "goes into any lane's memory.",
        )


def lanes_with_stop(session: Session) -> list[str]:
    """Lanes that get '■ Stop lane' above their column: those still answering the turn, and
    those the user stopped in it while other lanes still answer. A stopped lane can finish
    before the page run its click started; without its (disabled) button in that run, the
    browser would keep showing the previous run's enabled one until the turn ends."""
    running = session.pending_lanes()
    if not running:
        return []
    return [
        name
        for name in session.lanes
        if name in running or session.is_cancelled(name, session.turn)
    ]


def lane_stop_button(session: Session, name: str) -> None:
    """'■ Stop lane' for one running lane, drawn by the page above the lane's column (not in
    the lane's fragment, whose click would wait for the running script). Its click reruns
    the page at once: that lane's stream closes at its next piece and its turn is marked
    cancelled, kept out of its memory; the other lanes' runs go on in the session's threads
    and their columns attach to them again, so they keep streaming and record the turn.
    Once clicked it stays in its place, disabled, until the turn ends."""
    st.button(
        "■ Stop lane",
        key=f"stop-{session.id}-{name}-{session.turn}",
        on_click=_cancel_lane,
        args=(session, name),
        disabled=session.is_cancelled(name, session.turn),
        help="Stops this lane's reply; the other lanes go on. The turn stays out of this "
        "lane's memory.",
    )


def _cancel_lane(session: Session, name: str) -> None:
    session.cancel(name)


def shown_reply(session: Session, name: str, record: LaneTurn | None, turn: int) -> str:
    """The reply box's text for a lane that is not running `turn`: its reply, or for a
    turn the user stopped what had come before Stop, ended with ■ ('' if nothing had)."""
    if record is None or record.turn != turn:
        return ""
    if record.status != CANCELLED:
        return record.reply
    partial = session.partial_reply(name, turn).rstrip()
    return f"{partial} ■" if partial else ""


def cancelled_line(record: LaneTurn) -> bool:
    """Draw the 'stopped' note for a cancelled turn; True if it was one."""
    if record.status != CANCELLED:
        return False
    st.info("Stopped: this turn is not in this lane's memory.")
    return True


def load_recorded(config: AppConfig, path: Path = RECORDED_DEMO) -> tuple[Session, AppConfig]:
    """The recorded FinCoach demo as a live Session (no model call), with its lanes and
    system prompt; the provider stays the one chosen, so the conversation can go on."""
    from ui import persistence

    transcript = transcripts.parse(path.read_bytes(), name=path.name)
    saved = transcript.saved
    if saved is None:
        raise transcripts.TranscriptError(f"{path.name} is not a Memory Lab session export")
    new_config = persistence.config_for(saved, config)  # on the provider chosen here
    session = persistence.restore(saved, new_config)
    session.name = saved.name
    return session, new_config


def recorded_button(config: AppConfig, *, disabled: bool) -> None:
    """'Recorded demo': the FinCoach demo as the embedded model once answered it, at once."""
    if not st.button(
        "▷ Recorded demo (instant)",
        width="stretch",
        disabled=disabled or not RECORDED_DEMO.is_file(),
        help="The five FinCoach turns with the replies SmolLM2 gave when they were recorded: "
        "real payloads and charts, no waiting. For slow laptops.",
    ):
        return
    try:
        session, new_config = load_recorded(config)
    except (OSError, ValueError) as exc:
        st.error(md("Could not open the recorded demo: {}", exc))
        return
    st.session_state.session = session
    st.session_state.config = new_config
    st.session_state.demo_queue = []
    st.session_state.recorded = (session.id, session.turn)
    st.rerun()


def recorded_label(session: Session) -> None:
    """Say so when the page shows the recorded demo rather than live replies."""
    recorded = st.session_state.get("recorded")
    if not recorded or recorded[0] != session.id:
        return
    if session.turn == recorded[1]:
        st.info(
            "**Recorded** · replies the embedded model gave when this demo was recorded; "
            "nothing was sent now. Type a message to go on live from here."
        )
    else:
        st.caption(f"**Recorded** turns 1–{recorded[1]}; later turns are live.")
