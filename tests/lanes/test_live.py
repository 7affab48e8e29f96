"""A lane's run in the session's own thread (Session.start_lane) and its live buffer: readers
attach, leave and attach again while the run goes on; one lane stopped mid-stream leaves the
others answering. The fake sender below lets each piece out only when the test says so."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

import pytest

from lanes.lane import CANCELLED, OK
from lanes.live import LiveRun, LiveView
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from providers.fake import FakeTransport, _split

WAIT_S = 10.0  # a bound for a hung run, never a timing claim


@dataclass(frozen=True)
class Settings:
    model: str = "gpt-4o"
    max_tokens: int = 200
    tag: str = ""  # which lane calls with these settings (each lane has its own)

    def with_(self, **changes):
        return replace(self, **changes)

    def lane_model(self):
        return self.model, "fake"


@dataclass
class GatedTransport(FakeTransport):
    """Streams each piece of a lane's reply only after the test lets it out (`let`)."""

    chunks: int = 8
    gates: dict[str, threading.Semaphore] = field(default_factory=dict)
    streamed: dict[str, list[str]] = field(default_factory=dict)

    def let(self, tag: str, pieces: int) -> None:
        for _ in range(pieces):
            self.gates.setdefault(tag, threading.Semaphore(0)).release()

    def stream(self, request, settings, on_delta=None):
        gate = self.gates.setdefault(settings.tag, threading.Semaphore(0))
        seen = self.streamed.setdefault(settings.tag, [])

        def gated(piece: str) -> None:
            assert gate.acquire(timeout=WAIT_S), "the test never let this piece out"
            if on_delta is not None:
                on_delta(piece)  # raises when the lane was stopped: the stream closes
            seen.append(piece)

        return super().stream(request, settings, gated)


def make(transport: GatedTransport, lanes=("full",)) -> Session:
    return Session(
        system_prompt="You are FinCoach.",
        lanes=[
            LaneSpec(n, REGISTRY[n].defaults(), provider=Settings(tag=n), lane_label=n)
            for n in lanes
        ],
        provider=Settings(),
        transport=transport,
    )


def pieces(text: str, n: int) -> str:
    return "".join(_split(text, 8)[:n])


def wait_for_text(live: LiveRun, text: str) -> LiveView:
    view = live.view()
    while view.text != text and not view.done:
        view = live.wait(view.version, timeout=WAIT_S)
    return view


def test_attaching_twice_gives_the_same_run_and_a_second_reader_picks_up_where_it_got_to():
    transport = GatedTransport()
    session = make(transport)
    turn = session.begin_turn("Hi! I'm Chiru.")
    reply = "Reply to: Hi! I'm Chiru."
    first = session.start_lane("full", turn)
    assert session.start_lane("full", turn) is first  # one run per lane and turn
    assert session.in_flight() == {"full"}
    transport.let("full", 3)
    assert wait_for_text(first, pieces(reply, 3)).text == pieces(reply, 3)
    # the first reader leaves here (a page rerun cut it off); the run goes on without it
    transport.let("full", 2)
    assert wait_for_text(first, pieces(reply, 5)).done is False
    second = session.start_lane("full", turn)
    assert second is first
    view = second.view()
    assert view.text == pieces(reply, 5) and not view.done  # the text so far, still running
    assert session.in_flight() == {"full"} and session.pending_lanes() == ["full"]
    transport.let("full", 3)
    record = second.result(WAIT_S)
    assert record.status == OK and record.reply == reply
    assert second.view().text == reply and second.view().reply == reply
    assert session.lanes["full"].turns[-1] == record
    assert len(transport.calls) == 1  # attaching never sends the turn again
    assert session.in_flight() == set() and session.pending_lanes() == []
    assert session.start_lane("full", turn) is first  # done: still that run, not a new one


def test_stopping_one_lane_mid_stream_leaves_the_other_streaming_and_recording():
    transport = GatedTransport()
    session = make(transport, lanes=("full", "window"))
    turn = session.begin_turn("Hi! I'm Chiru.")
    reply = "Reply to: Hi! I'm Chiru."
    runs = {name: session.start_lane(name, turn) for name in session.lanes}
    transport.let("full", 2)
    transport.let("window", 2)
    wait_for_text(runs["window"], pieces(reply, 2))
    wait_for_text(runs["full"], pieces(reply, 2))
    assert session.in_flight() == {"full", "window"}
    session.cancel("window")  # the lane's Stop button, mid-stream
    transport.let("window", 6)
    stopped = runs["window"].result(WAIT_S)
    assert stopped.status == CANCELLED and stopped.reply == ""
    assert transport.streamed["window"] == _split(reply, 8)[:2]  # closed at the next piece
    assert session.in_flight() == {"full"}  # the other lane is still answering
    assert not runs["full"].done
    transport.let("full", 6)
    answered = runs["full"].result(WAIT_S)
    assert answered.status == OK and answered.reply == reply
    assert len(session.lanes["window"].strategy.history) == 0  # nothing of it in memory
    assert len(session.lanes["full"].strategy.history) == 1
    assert session.pending_lanes() == [] and session.finish_turn_once(turn)
    # what the stopped lane had streamed stays on screen, in no record and no memory
    assert session.partial_reply("window", turn) == pieces(reply, 2)
    assert session.partial_reply("window", turn + 1) == ""  # not that turn's run
    assert session.partial_reply("full", turn) == reply


def test_a_run_that_raised_hands_its_error_to_the_reader_and_the_next_attach_runs_again():
    transport = GatedTransport()
    session = make(transport)
    turn = session.begin_turn("Hi! I'm Chiru.")
    original = session.run_lane
    tries = []

    def flaky(name, turn, on_delta=None, *, on_reply=None):
        tries.append(name)
        if len(tries) == 1:
            raise RuntimeError("boom")
        return original(name, turn, on_delta, on_reply=on_reply)

    session.run_lane = flaky
    failed = session.start_lane("full", turn)
    with pytest.raises(RuntimeError, match="boom"):
        failed.result(WAIT_S)
    assert failed.failed and session.in_flight() == set()
    assert session.pending_lanes() == ["full"]  # nothing recorded: the watch may restart it
    again = session.start_lane("full", turn)
    assert again is not failed
    transport.let("full", 8)
    assert again.result(WAIT_S).status == OK and tries == ["full", "full"]


def test_a_reader_waits_for_a_change_or_its_timeout_and_result_says_when_it_is_not_done():
    live = LiveRun("full", 1)
    assert live.wait(0, timeout=0.01).version == 0  # nothing new: back after the timeout
    with pytest.raises(TimeoutError):
        live.result(timeout=0.01)
    woken: list[LiveView] = []
    reader = threading.Thread(target=lambda: woken.append(live.wait(0, timeout=WAIT_S)))
    reader.start()
    live.add("Hel")
    reader.join(WAIT_S)
    assert woken and woken[0].text == "Hel" and woken[0].version == 1
    live.replied("Hello")
    live.finish(None, ValueError("lost"))
    view = live.wait(0, timeout=WAIT_S)
    assert view.done and view.reply == "Hello" and view.record is None
    with pytest.raises(ValueError, match="lost"):
        live.result()
