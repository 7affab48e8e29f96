"""The ledger counts what was spent (issue 24, class 9): an upkeep call that never reached a
provider costs 0 and is drawn as failed; the library's import does its upkeep with the
stand-ins rather than a provider it cannot reach. Real SDK path: the OpenAI family with no
key refuses before sending anything (no network)."""

from __future__ import annotations

import pytest

import providers
from engines import transcripts
from lanes.lane import LaneTurn, MaintenanceRecord
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from providers.catalog import preset
from scenarios.transcripts import Transcript

TURNS = 40


def long_chat() -> Transcript:
    text = "".join(
        f"User: Turn {i}: my budget line {i} is ₹{i * 1000} a month for groceries and rent.\n"
        f"Assistant: Noted line {i}; that is a sensible amount to plan around for now.\n"
        for i in range(1, TURNS + 1)
    )
    return transcripts.parse(text, name="long.txt")


@pytest.fixture
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def imported(provider=None):
    settings = provider or preset("openai").settings("gpt-4o-mini")
    sb = {**REGISTRY["summary_buffer"].defaults(), "budget": 300}
    return transcripts.replay(
        long_chat(),
        [LaneSpec("full", {}), LaneSpec("summary_buffer", sb)],
        provider=settings,
        mode=transcripts.RECORDED,
        system_prompt="You are a helpful assistant.",
    )


def test_an_upkeep_call_that_never_reached_a_provider_costs_nothing(no_key):
    session = imported()
    records = session.records()
    price = preset("openai").model("gpt-4o-mini").price
    calls = [m for r in records["summary_buffer"] for m in r.maintenance]
    assert calls and not any(m.ok for m in calls)  # no key: every summary failed, unsent
    assert all("key" in (m.error or "").lower() for m in calls)
    assert all(m.counted > 0 for m in calls)  # what it would have sent is still known
    assert sum(m.tokens for m in calls) == 0
    full = sum(r.cost(price) for r in records["full"])
    summary = sum(r.cost(price) for r in records["summary_buffer"])
    assert summary < full  # before: upkeep priced at its counted input, ~2x the full buffer


def test_a_saved_record_of_an_unsent_call_reads_as_costing_nothing():
    saved = {"kind": "summary", "ok": False, "error": "no API key", "counted": 30_000,
             "input": 30_000, "output": 0}  # fmt: skip
    call = MaintenanceRecord.from_dict(saved)
    assert (call.input, call.output, call.tokens, call.counted) == (0, 0, 0, 30_000)
    billed = MaintenanceRecord.from_dict({**saved, "billed_input": 900, "input": 900})
    assert billed.input == 900  # a provider that billed a failed call: what it billed
    turn = LaneTurn.from_dict(
        {
            "lane": "summary_buffer",
            "turn": 3,
            "user": "hi",
            "status": "ok",
            "prompt_tokens": 100,
            "maintenance": [saved],
        }  # fmt: skip
    )
    assert turn.maintenance_tokens == 0


def test_the_lane_figures_say_which_upkeep_calls_failed():
    from ui.lane_view import upkeep_cell

    ok = MaintenanceRecord("summary", True, counted=50, input=50, output=20)
    failed = MaintenanceRecord("summary", False, error="no key", counted=900, input=900)
    turn = LaneTurn("summary_buffer", 2, "hi", "ok", maintenance=(ok, failed))
    assert upkeep_cell(turn) == "2 (1 failed) · 70"


def test_the_library_import_uses_the_stand_ins_not_an_unreachable_provider(
    no_key, tmp_path, monkeypatch
):
    import memorylab as ml
    from storage.store import Store

    def no_network(*args, **kwargs):
        raise AssertionError("the import tried to reach a provider")

    monkeypatch.setattr(providers, "stream", no_network)
    chat = tmp_path / "chat.txt"
    text = "".join(f"User: I put aside ₹{i}000 this month.\nAssistant: Good.\n" for i in range(30))
    chat.write_text(text, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 's.db'}"
    budget = {**REGISTRY["summary_buffer"].defaults(), "budget": 200}
    sb = "summary_buffer:" + ",".join(f"{k}={v}" for k, v in budget.items())
    sid = ml.import_transcript(chat, ["full", sb], db_url=db)
    store = Store(db)
    try:
        saved = store.load(sid)
    finally:
        store.close()
    calls = [m for recs in saved.records.values() for r in recs for m in r.maintenance]
    assert calls and all(m.ok for m in calls)  # before: every call failed (no key)
    assert all(m.tokens == 0 for m in calls)  # stand-ins cost nothing
    assert any("said" in (m.reply or "") for m in calls)  # an extractive summary was kept
