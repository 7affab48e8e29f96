"""Several lanes of one strategy, each on its own (fake) model: keyed by label, calling its
own provider, counting with its own encoding, failing alone."""

from __future__ import annotations

import json

import pytest

import providers
from lanes.lane import ERROR, OK
from lanes.session import Session
from memory.lane_spec import LaneSpec
from providers.fake import FakeProviderError, FakeReply, FakeTransport
from scenarios import fincoach


def openai(model: str, **kw):
    return providers.preset("openai").settings(model, **kw)


class DeadModel(FakeTransport):
    """Fails every call (reply and upkeep) to the model named `dead`, like a dead endpoint."""

    def __init__(self, dead: str) -> None:
        super().__init__()
        self.dead = dead

    def stream(self, request, settings, on_delta=None):
        if settings.model == self.dead:
            body = self.body(request, settings)
            return FakeReply("", None, body, complete=False, error=FakeProviderError("401 bad key"))
        return super().stream(request, settings, on_delta)


def two_models(transport=None, **kw) -> Session:
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[
            LaneSpec("summary_buffer", {"budget": 370}),
            LaneSpec("summary_buffer", {"budget": 370}, provider=openai("gpt-4")),
            LaneSpec("full"),
        ],
        provider=openai("gpt-4o-mini"),
        transport=transport or FakeTransport(),
        **kw,
    )


SB, SB4 = "summary_buffer", "summary_buffer · gpt-4"


def test_one_strategy_on_two_models_runs_side_by_side():
    transport = FakeTransport()
    session = two_models(transport)
    assert list(session.lanes) == [SB, SB4, "full"]
    results = session.run_turn("Hi! I'm Chiru.")
    assert all(r.status == OK for r in results.values())
    assert results[SB].body["model"] == "gpt-4o-mini"
    assert results[SB4].body["model"] == "gpt-4"
    assert results[SB4].lane == SB4 and session.lanes[SB4].title == "Summary buffer · gpt-4"
    # each lane counts with its own model's encoding (o200k_base vs cl100k_base)
    assert session.lanes[SB].counter.encoding_name == "o200k_base"
    assert session.lanes[SB4].counter.encoding_name == "cl100k_base"


def test_a_lane_whose_own_provider_fails_fails_alone_and_the_conversation_goes_on():
    session = two_models(DeadModel("gpt-4"))
    for text in fincoach.DEMO_TURNS[:2]:
        results = session.run_turn(text)
        assert results[SB4].status == ERROR and "401 bad key" in (results[SB4].error or "")
        assert results[SB].status == OK and results["full"].status == OK
    assert session.lanes[SB4].can_retry(session.turn)
    assert [r.turn for r in session.lanes[SB].turns if r.ok] == [1, 2]


def test_a_snapshot_keeps_each_lane_provider_and_restores_the_same_next_requests():
    session = two_models()
    for text in fincoach.DEMO_TURNS[:3]:
        session.run_turn(text)
    data = json.loads(json.dumps(session.snapshot()))
    assert data["lanes"][SB4]["provider"]["model"] == "gpt-4"
    assert "provider" not in data["lanes"][SB]
    assert "api_key" not in json.dumps(data)
    with pytest.raises(ValueError, match=r"lane summary_buffer · gpt-4 ran on its own model"):
        Session.from_snapshot(data, provider=openai("gpt-4o-mini"), transport=FakeTransport())
    restored = Session.from_snapshot(
        data,
        provider=openai("gpt-4o-mini"),
        transport=FakeTransport(),
        lane_providers={SB4: openai("gpt-4")},
    )
    assert restored.records() == session.records()
    a, b = session.run_turn("What is my name?"), restored.run_turn("What is my name?")
    assert {n: r.body for n, r in a.items()} == {n: r.body for n, r in b.items()}


def test_a_label_that_does_not_start_with_its_strategy_is_refused():
    with pytest.raises(ValueError, match="starts with its strategy"):
        Session(
            system_prompt="s",
            lanes=[LaneSpec("full", lane_label="window")],
            provider=openai("gpt-4o-mini"),
            transport=FakeTransport(),
        )
