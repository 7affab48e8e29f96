"""The main page's demo controls through AppTest: reply length, empty page, recorded demo,
stop; and the redraw pacing of streamed replies."""

from __future__ import annotations

import json
import threading
import time

from engines import transcripts
from lanes.live import LiveRun
from memory.maintenance import EXTRACTION_SYSTEM
from scenarios import fincoach
from tests.ui.conftest import run_app
from ui.demo_controls import RECORDED_DEMO, Paced, await_first_pieces, load_recorded
from ui.safe import plain


def test_paced_draws_the_first_piece_at_once_then_at_most_every_interval():
    now = [0.0]
    paced = Paced(every=0.25, clock=lambda: now[0])
    draws = []
    for i in range(100):  # 100 pieces over 1 s
        now[0] = i * 0.01
        if paced.add(f"{i} "):
            draws.append(now[0])
    assert draws[0] == 0.0  # the first token goes on screen immediately
    assert len(draws) == 4  # 0, 0.25, 0.5, 0.75: not 100 redraws
    assert all(b - a >= 0.25 for a, b in zip(draws, draws[1:], strict=False))
    assert paced.text == "".join(f"{i} " for i in range(100))  # nothing lost between draws


def test_the_turn_is_drawn_once_every_lane_has_its_first_piece():
    quick, slow, failed = LiveRun("a", 1), LiveRun("b", 1), LiveRun("c", 1)
    failed.finish(None, RuntimeError("no key"))  # a run that ended streams nothing: no wait
    quick.add("Hello")
    threading.Timer(0.3, slow.add, ("Hi",)).start()
    began = time.monotonic()
    await_first_pieces([quick, slow, failed], bound=30.0)
    waited = time.monotonic() - began
    assert slow.view().text == "Hi"  # returned after the slow lane's first piece...
    assert waited < 20.0  # ...not at the bound


def test_a_lane_that_never_streams_holds_the_turn_s_first_draw_no_longer_than_the_bound():
    silent = LiveRun("a", 1)
    began = time.monotonic()
    await_first_pieces([silent], bound=0.3)
    assert 0.3 <= time.monotonic() - began < 20.0
    assert silent.view().text == "" and not silent.done


def test_the_page_starting_a_turn_waits_for_every_lane_s_first_piece(fake_transport, monkeypatch):
    from ui import demo_controls

    waited_for: list[list[str]] = []
    original = demo_controls.await_first_pieces
    monkeypatch.setattr(
        demo_controls,
        "await_first_pieces",
        lambda runs: waited_for.append([r.name for r in runs]) or original(runs),
    )
    at = run_app()
    at.chat_input[0].set_value("Hi! I'm Chiru.").run()
    assert waited_for == [list(at.session_state["session"].lanes)]


def test_the_empty_page_has_no_charts_and_replies_default_to_80_tokens(fake_transport):
    at = run_app()
    assert at.get("plotly_chart") == []  # no empty axes before the first turn
    [box] = [n for n in at.number_input if n.label == "Max reply tokens"]
    assert box.value == 80
    at.chat_input[0].set_value("Hi! I'm Chiru.").run()
    session = at.session_state["session"]
    assert session.provider.max_tokens == 80
    assert session.upkeep is not None and session.upkeep.summary < 200
    assert len(at.get("plotly_chart")) >= len(session.lanes)


def test_the_recorded_demo_plays_instantly_with_its_payloads_and_charts(fake_transport):
    at = run_app()
    [button] = [b for b in at.button if "Recorded demo" in b.label]
    button.click().run()
    assert not at.exception, at.exception
    session = at.session_state["session"]
    assert session.user_turns == list(fincoach.DEMO_TURNS)
    assert fake_transport.calls == []  # nothing was sent: these are the recorded replies
    assert any("**Recorded**" in i.value for i in at.info)
    saved = transcripts.parse(RECORDED_DEMO.read_bytes()).saved
    assert saved is not None
    for name, lane in session.lanes.items():
        assert [r.reply for r in lane.turns] == [r.reply for r in saved.records[name]]
        assert all(r.ok and r.model == "smollm2-135m-instruct" for r in lane.turns)
    shown = [json.loads(c.value) for c in at.code if c.value.lstrip().startswith('{\n  "model"')]
    bodies = [b for b in shown if b["messages"][0]["content"].startswith(fincoach.SYSTEM_PROMPT)]
    upkeep = [b for b in shown if b not in bodies]
    assert len(bodies) == len(session.lanes)
    assert all(b["messages"][-1]["content"] == fincoach.DEMO_TURNS[-1] for b in bodies)
    assert all(b["max_tokens"] == 80 for b in bodies)
    assert upkeep and all(b["max_tokens"] < 200 for b in upkeep)  # capped upkeep calls
    assert len(at.get("plotly_chart")) >= len(session.lanes) + 2  # lanes + comparison charts
    # going on from the recording is a live turn
    at.chat_input[0].set_value("And next month?").run()
    assert len(fake_transport.calls) == len(session.lanes)
    assert any("later turns are live" in c.value for c in at.caption)


def _figures(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _empty(figure: dict) -> bool:
    """A figure drawn as bare axes: no trace holds a value."""
    return not any(
        trace.get(axis) not in (None, [], {}) for trace in figure["data"] for axis in ("x", "y")
    )


def test_the_recorded_demo_shows_what_fills_each_lane_s_request(fake_transport):
    """The recording carries each request's parts, so its anatomy is drawn with a bar per
    lane (recorded before requests carried parts, it drew as empty axes), and its fact
    stores hold the demo's four facts as the user wrote them."""
    at = run_app()
    [button] = [b for b in at.button if "Recorded demo" in b.label]
    button.click().run()
    session = at.session_state["session"]
    figures = _figures(at)
    assert figures and not [f for f in figures if _empty(f)]
    [bars] = [f for f in figures if "What each lane sends" in str(f["layout"].get("title"))]
    lanes = {y for trace in bars["data"] for y in trace.get("y") or ()}
    assert lanes == {plain(lane.title) for lane in session.lanes.values()}
    for name in ("entity", "hybrid"):
        facts = session.lanes[name].turns[-1].account.facts
        assert facts is not None
        assert {"name": "Chiru", "monthly_salary": "₹1,20,000"}.items() <= facts.items()


def test_turns_saved_before_requests_had_parts_get_a_note_not_empty_axes(fake_transport, tmp_path):
    data = json.loads(RECORDED_DEMO.read_text(encoding="utf-8"))
    for lane in data["lanes"].values():
        for turn in lane["turns"]:
            turn["account"].pop("parts", None)
    old = tmp_path / "old_recording.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    at = run_app()
    session, config = load_recorded(at.session_state["config"], old)
    at.session_state["session"], at.session_state["config"] = session, config
    at.run()
    assert not at.exception, at.exception
    assert not [f for f in _figures(at) if _empty(f)]
    assert any("saved before Memory Lab recorded" in c.value for c in at.caption)


def test_a_stopped_turn_is_shown_as_stopped_and_can_be_retried(fake_transport):
    at = run_app()
    session = at.session_state["session"]
    session.cancel()  # nothing running: nothing to stop
    assert session.turn == 0
    # stop every lane of the next turn at its first streamed piece
    original = fake_transport.stream

    def stop_at_first_piece(request, settings, on_delta=None):
        def delta(text):
            session.cancel()
            on_delta(text)

        return original(request, settings, delta)

    fake_transport.stream = stop_at_first_piece
    at.chat_input[0].set_value("Hi! I'm Chiru.").run()
    assert {lane.turns[-1].status for lane in session.lanes.values()} == {"cancelled"}
    assert sum("Stopped" in i.value for i in at.info) == len(session.lanes)
    assert all(len(lane.strategy.history) == 0 for lane in session.lanes.values())
    fake_transport.stream = original
    retry = [b for b in at.button if b.label == "Retry this lane"]
    assert len(retry) == len(session.lanes)
    retry[0].click().run()
    assert sum(lane.turns[-1].ok for lane in session.lanes.values()) == 1


def test_a_lane_stopped_mid_reply_keeps_what_it_had_written_on_screen(fake_transport):
    at = run_app()
    session = at.session_state["session"]
    original = fake_transport.stream

    def stop_full_at_third_piece(request, settings, on_delta=None):
        stopping = request.account is not None and request.account.strategy == "full"
        seen: list[str] = []

        def delta(text):
            if stopping and len(seen) == 2:
                session.cancel("full")  # the lane's Stop, after two pieces were shown
            seen.append(text)
            on_delta(text)

        return original(request, settings, delta if on_delta else None)

    fake_transport.stream = stop_full_at_third_piece
    at.chat_input[0].set_value("Hi! I'm Chiru.").run()
    stopped = session.lanes["full"].turns[-1]
    assert stopped.status == "cancelled" and stopped.reply == ""  # nothing recorded
    assert len(session.lanes["full"].strategy.history) == 0
    partial = session.partial_reply("full", 1)
    assert partial and len(partial) < len(session.lanes["window"].turns[-1].reply)
    shown = [m.value for m in at.markdown if "■" in m.value]
    assert shown == [plain(partial.rstrip()) + " ■"]  # that lane's box, and only it
    assert session.lanes["window"].turns[-1].ok


def test_the_page_warms_the_model_on_load_says_so_and_the_demo_uses_that_warm_up(monkeypatch):
    import threading

    from lanes import session as session_module
    from lanes import warmup
    from tests.lanes.test_warmup import WarmingTransport

    gate = threading.Event()
    transport = WarmingTransport(gate=gate)
    monkeypatch.setattr(session_module, "ProvidersTransport", lambda: transport)
    monkeypatch.setattr(warmup, "_latest", None)
    at = run_app()  # the default provider: the embedded model with its prompt cache
    session = at.session_state["session"]
    warm = session.pacing.warmup
    assert warm is not None and not warm.done.is_set()
    assert any("Warming the model" in c.value for c in at.caption)
    gate.set()
    assert warm.wait(10)
    at.run()
    assert not any("Warming the model" in c.value for c in at.caption)
    warmed = len(transport.warmed)
    assert warmed >= len(session.lanes) and transport.calls == []  # no lane turn was run
    [play] = [b for b in at.button if "FinCoach demo" in b.label]
    play.click().run()
    demo = at.session_state["session"]
    assert demo is not session and demo.pacing.warmup is warm  # joined, not warmed again
    first = [
        w for w in transport.warmed[:warmed] if w[0]["messages"][0]["content"] != EXTRACTION_SYSTEM
    ]
    assert len(first) == len(session.lanes)
    # no turn-1 prefix was read again; later warm-ups (after each lane's upkeep, see
    # lanes/embedded_router.py after_upkeep) hold the conversation so far
    assert all(transport.warmed.count(w) == transport.warmed[:warmed].count(w) for w in first)
    assert len(transport.warmed) > warmed


def test_a_stopped_lane_keeps_its_stop_button_while_other_lanes_answer():
    """The click's page run can find the stopped lane already finished: its button must still
    be drawn (disabled) then, or the browser keeps the previous run's enabled one."""
    import providers
    from lanes.session import Session
    from memory.lane_spec import LaneSpec
    from memory.registry import DEFAULT_LANES, REGISTRY
    from providers.fake import FakeTransport
    from ui.demo_controls import lanes_with_stop

    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in DEFAULT_LANES],
        provider=providers.preset("openai").settings("gpt-4o-mini"),
        transport=FakeTransport(),
    )
    assert lanes_with_stop(session) == []  # no turn yet
    turn = session.begin_turn(fincoach.DEMO_TURNS[0])
    assert lanes_with_stop(session) == list(DEFAULT_LANES)
    stopped, finished, *others = DEFAULT_LANES
    session.cancel(stopped)
    assert session.run_lane(stopped, turn).status == "cancelled"
    assert session.run_lane(finished, turn).ok
    assert lanes_with_stop(session) == [stopped, *others]  # finished: no button; stopped: kept
    for name in others:
        session.run_lane(name, turn)
    assert lanes_with_stop(session) == []  # the turn is over: no Stop buttons at all
