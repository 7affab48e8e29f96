"""Lanes keyed by label, each with its own provider, through the store: saved turn by turn,
reopened with identical next requests, exported and imported, and the file shape of format 3
(tests/storage/fixtures/export_v3_lanes.json, written by `write_fixture` below) still reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import providers
from engines.sessions import RunOptions, continue_stored
from lanes.session import Session
from memory.lane_spec import LaneSpec
from present import export
from providers.fake import FakeTransport
from scenarios import fincoach
from storage.store import FORMAT, SavedSession, Store, decode_export
from tests.lanes.test_lane_models import openai, two_models

FIXTURE = Path(__file__).parent / "fixtures" / "export_v3_lanes.json"
SB, SB4 = "summary_buffer", "summary_buffer · gpt-4"
SB3, SB9 = "summary_buffer (budget=370)", "summary_buffer (budget=900) · gpt-4"


def lanes_session() -> Session:
    """The lanes tests' session (one strategy on two models, plus full) with a fixed id."""
    return two_models(session_id="lanes0models")


def next_bodies(session: Session) -> dict[str, object]:
    return {n: r.body for n, r in session.run_turn("What is my name?").items()}


def test_saved_turn_by_turn_then_reopened_sends_identical_payloads(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'lanes.sqlite3'}")
    session = lanes_session()
    store.track(session)
    for text in fincoach.DEMO_TURNS[:3]:
        session.run_turn(text)
    saved = store.load(session.id)
    assert saved.strategies == (SB, SB4, "full")
    assert saved.strategy(SB4) == "summary_buffer"
    assert saved.lane_provider(SB4)["model"] == "gpt-4" and saved.lane_provider(SB) is None
    assert saved.titles()[SB4] == "Summary buffer · gpt-4"
    assert saved.records == session.records()
    reopened = continue_stored(store, session.id, RunOptions(transport=FakeTransport()))
    assert reopened.providers[SB4].model == "gpt-4"
    assert reopened.providers[SB].model == "gpt-4o-mini"
    assert next_bodies(reopened) == next_bodies(session)


def test_json_export_round_trip_keeps_labels_and_lane_providers(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'a.sqlite3'}")
    session = lanes_session()
    store.track(session)
    session.run_turn(fincoach.DEMO_TURNS[0])
    text = export.to_json(store.load(session.id))
    data = json.loads(text)
    assert data[FORMAT] == 3 and list(data["lanes"]) == [SB, SB4, "full"]
    back = decode_export(data)
    assert back.records == session.records() and back.lane_provider(SB4)["model"] == "gpt-4"
    other = Store(f"sqlite:///{tmp_path / 'b.sqlite3'}")
    new_id = other.import_json(text)
    assert other.load(new_id).records == back.records
    rows = export.turn_rows(back)
    assert [r["lane"] for r in rows] == [SB, SB4, "full"]


def test_a_format_3_file_with_one_strategy_on_two_models_opens_and_continues(tmp_path):
    data = json.loads(FIXTURE.read_text())
    assert data[FORMAT] == 3
    saved = decode_export(data)
    assert saved.strategies == (SB3, SB9, "full") and len(saved.user_turns) == 2
    assert saved.params(SB9) == {"budget": 900}
    store = Store(f"sqlite:///{tmp_path / 'c.sqlite3'}")
    new_id = store.import_json(FIXTURE.read_text())
    live = continue_stored(store, new_id, RunOptions(transport=FakeTransport()))
    assert live.providers[SB9].model == "gpt-4" and live.lanes[SB9].strategy_name == SB
    assert all(r.ok for r in live.run_turn("And my salary?").values())


def test_a_label_that_hides_another_strategy_is_refused():
    data = json.loads(FIXTURE.read_text())
    data["lanes"]["window"] = data["lanes"].pop("full")
    from storage.store import SessionFormatError

    with pytest.raises(SessionFormatError, match="starts with its strategy, here 'full'"):
        decode_export(data)


def write_fixture() -> None:  # pragma: no cover - run by hand to rewrite the fixture
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[
            LaneSpec("summary_buffer", {"budget": 370}),
            LaneSpec("summary_buffer", {"budget": 900}, provider=openai("gpt-4")),
            LaneSpec("full"),
        ],
        provider=openai("gpt-4o-mini"),
        transport=FakeTransport(),
        session_id="v3lanes00001",
    )
    for text in fincoach.DEMO_TURNS[:2]:
        session.run_turn(text)
    FIXTURE.write_text(export.to_json(SavedSession.from_session(session)))


def test_each_lane_is_costed_at_its_own_model_price():
    from providers import catalog

    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec("full"), LaneSpec("full", provider=openai("gpt-4o"))],
        provider=openai("gpt-4o-mini"),
        transport=FakeTransport(),
    )
    for text in fincoach.DEMO_TURNS[:2]:
        session.run_turn(text)
    saved = SavedSession.from_session(session)
    mini, big = (catalog.preset("openai").model(m).price for m in ("gpt-4o-mini", "gpt-4o"))
    summaries = {s.lane: s.cost for s in export.lane_summaries(saved, export.price_of(saved))}
    records = session.records()
    assert summaries["full"] == pytest.approx(sum(r.cost(mini) for r in records["full"]))
    assert summaries["full · gpt-4o"] == pytest.approx(
        sum(r.cost(big) for r in records["full · gpt-4o"])
    )
    assert summaries["full · gpt-4o"] > 10 * summaries["full"]  # same tokens, 16x the price
    rows = export.turn_rows(saved, export.price_of(saved))
    by_lane = {(r["lane"], r["turn"]): r["cost_usd"] for r in rows}
    assert by_lane[("full · gpt-4o", 1)] == round(records["full · gpt-4o"][0].cost(big), 8)


def test_a_lane_provider_key_reaches_no_export_and_no_database(tmp_path):
    from tests.storage.store_support import PLANTED

    path = tmp_path / "keys.sqlite3"
    store = Store(f"sqlite:///{path}")
    own = providers.preset("openai").settings("gpt-4o", api_key=PLANTED)
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec("full"), LaneSpec("full", provider=own)],
        provider=openai("gpt-4o-mini"),
        transport=FakeTransport(),
    )
    store.track(session)
    session.run_turn("Hi! I'm Chiru.")
    saved = store.load(session.id)
    assert saved.lane_provider("full · gpt-4o")["key_set"] is True
    for text in (export.to_json(saved), export.to_csv(saved), export.to_html(saved)):
        assert PLANTED not in text
    assert PLANTED.encode() not in path.read_bytes()
    assert PLANTED not in json.dumps(session.snapshot())
