"""The main page's wiring, through Streamlit's AppTest (the browser tests drive it for real)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from streamlit.testing.v1 import AppTest

from memory.maintenance import Upkeep
from memory.registry import DEFAULT_LANES, create
from memory.tokens import TokenCounter
from scenarios import fincoach
from tests.ui.conftest import APP, run_app, shown
from ui import demo_controls


def send(at: AppTest, text: str) -> AppTest:
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def chart_traces(at: AppTest, lane: str, turn: int) -> dict[str, dict]:
    for chart in at.get("plotly_chart"):
        if chart.proto.id.endswith(f"chart-{at.session_state['session'].id}-{lane}-{turn}"):
            return {t["name"]: t for t in json.loads(chart.proto.spec)["data"]}
    raise AssertionError(f"no chart for lane {lane} at turn {turn}")


def payloads(at: AppTest) -> list[dict]:
    return [json.loads(c.value) for c in at.code if c.value.lstrip().startswith("{")]


def test_the_page_starts_with_six_lanes_and_no_error(fake_transport):
    at = run_app()
    titles = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert len(titles) == 6
    assert not at.error


def test_each_lane_shows_the_body_it_sent_matching_the_memory_core(fake_transport):
    at = run_app()
    send(at, "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.")
    send(at, "I have monthly expenses of about ₹60,000.")
    session = at.session_state["session"]
    assert session.turn == 2
    assert len(fake_transport.calls) == 12
    shown = payloads(at)
    lane_bodies = [b for b in shown if "model" in b]
    assert len(lane_bodies) == 6
    counter = TokenCounter.for_model(session.provider.model)
    for name, body in zip(DEFAULT_LANES, lane_bodies, strict=True):
        record = session.lanes[name].turns[-1]
        assert body == record.body
        assert body in fake_transport.calls
        # rebuild the same lane from scratch with the same replies: same request
        strategy = create(
            name,
            fincoach.SYSTEM_PROMPT,
            counter=counter,
            upkeep=Upkeep.using(fake_transport.as_model_fn(None)),
            params=session.lanes[name].params,
        )
        first = session.lanes[name].turns[0]
        strategy.prepare(first.user)
        strategy.commit(first.user, first.reply)
        request = strategy.prepare(record.user)
        expected = [{"role": "system", "content": request.system}] + [
            m.as_dict() for m in request.messages
        ]
        assert body["messages"] == expected


def test_each_lane_chart_has_one_point_per_turn(fake_transport):
    at = run_app()
    for text in ["one", "two", "three"]:
        send(at, text)
    session = at.session_state["session"]
    for name in DEFAULT_LANES:
        traces = chart_traces(at, name, 3)
        counted = traces["prompt (counted)"]
        assert counted["x"] == [1, 2, 3]
        assert counted["y"] == [r.counted for r in session.lanes[name].turns]
        assert traces["prompt (billed)"]["y"] == [r.billed_input for r in session.lanes[name].turns]


def test_a_failing_lane_shows_its_error_and_the_others_finish(fake_transport):
    fake_transport.fail_when = lambda request: request.account.strategy == "window"
    at = run_app()
    send(at, "hello")
    session = at.session_state["session"]
    statuses = {name: lane.turns[-1].status for name, lane in session.lanes.items()}
    assert statuses.pop("window") == "error"
    assert set(statuses.values()) == {"ok"}
    assert any("injected failure" in e.value for e in at.error)
    retry = [b for b in at.button if b.label == "Retry this lane"]
    assert len(retry) == 1
    fake_transport.fail_when = None
    retry[0].click().run()
    assert session.lanes["window"].turns[-1].status == "ok"
    assert not at.error


def test_an_empty_message_is_ignored(fake_transport):
    at = run_app()
    send(at, "   ")
    assert at.session_state["session"].turn == 0
    assert fake_transport.calls == []


def test_a_message_over_a_lane_budget_overflows_only_that_lane(fake_transport):
    at = run_app()
    send(at, "money " * 700)
    session = at.session_state["session"]
    assert session.lanes["token_window"].turns[-1].status == "overflow"
    assert session.lanes["full"].turns[-1].status == "ok"
    assert any("budget allows 600" in w.value for w in at.warning)


def play_demo(at: AppTest) -> AppTest:
    """Press "Play the FinCoach demo" and run the page until its five turns are in."""
    [demo] = [b for b in at.button if "FinCoach demo" in b.label]
    demo.click().run()
    for _ in range(10):
        if at.session_state["session"].turn == 5 and not at.session_state["demo_queue"]:
            break
        at.run()
    return at


def test_the_fincoach_demo_plays_five_turns(fake_transport):
    at = play_demo(run_app())
    session = at.session_state["session"]
    assert session.user_turns == list(fincoach.DEMO_TURNS)
    assert [r.n_messages for r in session.lanes["full"].turns] == [2, 4, 6, 8, 10]
    assert [r.n_messages for r in session.lanes["window"].turns] == [2, 4, 6, 8, 8]


def test_the_demo_lets_warm_ups_settle_before_each_of_its_turns(fake_transport, monkeypatch):
    from lanes import transport
    from lanes.session import Session

    events: list[tuple[str, float]] = []  # ("settle", the bound asked) / ("begin", turn)
    begin = Session.begin_turn
    monkeypatch.setattr(
        type(transport.NO_PACING),
        "settle",
        lambda self, timeout: events.append(("settle", timeout)) or True,
    )
    monkeypatch.setattr(
        Session,
        "begin_turn",
        lambda self, text: events.append(("begin", self.turn + 1)) or begin(self, text),
    )
    at = play_demo(run_app())
    bound = demo_controls.WARM_SETTLE_S
    assert events == [e for turn in range(1, 6) for e in (("settle", bound), ("begin", turn))]
    events.clear()
    send(at, "And now?")  # a typed message: a person, not the demo, is waiting
    assert events == [("begin", 6)] and at.session_state["session"].turn == 6


def test_every_lane_starts_with_the_turn_before_the_page_draws_a_column(
    fake_transport, monkeypatch
):
    """The run that takes the message starts every lane's run; the columns only attach to
    them. Started from each lane's column, a lane's first token waited for the page's next
    run to draw everything above that column (the last column's, all five before it)."""
    from lanes.session import Session
    from ui import lane_view

    events: list[tuple[str, str]] = []
    start, header = Session.start_lane, lane_view.header
    monkeypatch.setattr(
        Session,
        "start_lane",
        lambda self, name, turn: events.append(("start", name)) or start(self, name, turn),
    )
    monkeypatch.setattr(
        lane_view, "header", lambda lane: events.append(("draw", lane.name)) or header(lane)
    )
    at = run_app()
    events.clear()
    send(at, "Hi! I'm Chiru.")
    first_draw = next(i for i, (what, _) in enumerate(events) if what == "draw")
    assert sorted(name for _, name in events[:first_draw]) == sorted(DEFAULT_LANES)
    assert {what for what, _ in events[:first_draw]} == {"start"}
    assert all(r.turns[-1].turn == 1 for r in at.session_state["session"].lanes.values())


def test_the_pages_set_no_session_attribute():
    """The pages ask the session (and its transport stack's pacing) through methods; setting
    an attribute of it from a page is how pacing leaked into the turn contract before."""
    import ast

    pages = [Path(APP), *sorted((Path(APP).parent / "pages").glob("*.py"))]
    found = []
    for path in pages:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                owner = target.value if isinstance(target, ast.Attribute) else None
                if isinstance(owner, ast.Name) and owner.id in {"session", "demo", "live"}:
                    found.append(f"{path.name}:{node.lineno} {ast.unparse(target)}")
    assert found == []


def test_a_missing_key_is_a_clear_error_in_every_lane(monkeypatch):
    """The real providers path (no fake): OpenAI chosen, no key anywhere."""
    from ui.app_state import AppConfig, ProviderChoice

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["config"] = AppConfig.default().replace(
        provider=ProviderChoice(preset="openai", model="gpt-4o-mini")
    )
    at.run()
    send(at, "hello")
    session = at.session_state["session"]
    statuses = {lane.turns[-1].status for lane in session.lanes.values()}
    assert statuses == {"error"}
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 6 and all("set OPENAI_API_KEY" in e for e in errors)
    assert not at.exception


def test_lanes_that_shared_one_call_say_so_in_their_payload(monkeypatch):
    """At turn 1 every default lane builds the same request: with "Send identical requests
    once" (on by default) one call answers all six, and each payload names them."""
    from lanes import session as session_module
    from tests.lanes.test_sharing import Gate, wait_for_members

    gate = Gate(chunks=3)
    monkeypatch.setattr(session_module, "ProvidersTransport", lambda: gate)
    at = run_app()
    session = at.session_state["session"]
    assert session.sharing is not None

    def open_when_gathered() -> None:
        wait_for_members(session.sharing, len(DEFAULT_LANES))
        gate.open.set()

    opener = threading.Thread(target=open_when_gathered)
    opener.start()
    send(at, fincoach.DEMO_TURNS[0])
    opener.join(20)
    assert len(gate.calls) == 1
    notes = [shown(c.value) for c in at.caption if shown(c.value).startswith("One call answered")]
    assert len(notes) == len(DEFAULT_LANES)
    assert all(all(name in note for name in DEFAULT_LANES) for note in notes)
    assert [b for b in payloads(at) if "model" in b] == gate.calls * len(DEFAULT_LANES)


def test_the_chat_box_holds_at_most_one_sendable_message(fake_transport):
    from memory.strategies.base import MAX_MESSAGE_CHARS

    at = run_app()
    assert at.chat_input[0].proto.max_chars == MAX_MESSAGE_CHARS


def test_fact_lanes_show_the_facts_they_hold(fake_transport):
    """The fake's extractor returns nothing: the rules read the name and the salary the turn
    states, and each fact-keeping lane lists them under its figures, saying they were filled."""
    at = run_app()
    send(at, "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.")
    panels = [e for e in at.expander if e.label.startswith("Facts held")]
    assert [e.label for e in panels] == ["Facts held · 2", "Facts held · 2"]  # entity, hybrid
    for panel in panels:
        shown = [m.value for m in panel.markdown]  # the reply repeats the salary: kept once
        assert shown == ["**name**: Chiru", "**monthly\\_salary**: ₹1\\,20\\,000"]
        (note,) = [c.value for c in panel.caption]
        assert note.startswith("Filled in by the rule extractor") and "Chiru" in note


def test_a_turn_that_ends_while_the_page_draws_leaves_no_control_disabled(fake_transport):
    """The page asks once whether lanes are pending and draws every control from that answer.
    Asked again per control, a turn that ended mid-draw left Play disabled with no watcher
    to redraw it (a clean-clone browser run caught Play disabled for good after Stop)."""
    at = send(run_app(), "Hi! I'm Chiru.")
    session = at.session_state["session"]
    answers = iter([list(session.lanes)])  # pending at the first look, done from then on
    session.pending_lanes = lambda: next(answers, [])
    at.run()
    assert not at.exception, at.exception
    play = next(b for b in at.button if b.label == "▶ Play the FinCoach demo")
    assert not play.disabled
    assert not at.chat_input[0].disabled
