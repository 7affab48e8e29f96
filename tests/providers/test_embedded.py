"""The embedded SmolLM2 model, for real: one llama.cpp server for the whole session."""

from __future__ import annotations

import json
import threading
import urllib.request
import uuid
from pathlib import Path

import pytest

from lanes.session import UpkeepLimits
from memory.maintenance import FACT_UPDATE_SCHEMA, extraction_request, parse_fact_update
from memory.tokens import TokenCounter
from memory.types import Turn
from providers import ContextLengthExceeded, ProviderSettings, as_model_fn, embedded, preset, stream
from providers.families.embedded import COMPACT_MEMBERS, compact_grammar
from scenarios.fincoach import DEMO_TURNS
from tests.providers.conftest import make_request

pytestmark = pytest.mark.embedded

RECORDED = Path(__file__).resolve().parents[2] / "scenarios" / "fincoach_recorded.json"

# With the fact right there in the payload, the model names it (at temperature 0 this
# exact request gives the same answer every time).
CHIRU = make_request(
    ("user", "My name is Chiru. I earn 5000 dollars a month."),
    ("assistant", "Nice to meet you, Chiru."),
    ("user", "What is my name?"),
    system="You are FinCoach, a helpful finance assistant.",
)


def settings(**overrides):
    return preset("embedded").settings(**{"max_tokens": 32, **overrides})


def test_starts_once_and_listens_on_loopback(embedded_server):
    assert embedded_server.base_url.startswith("http://127.0.0.1:")
    assert embedded.start() is embedded_server
    assert embedded.is_running() and embedded.info() is embedded_server
    assert embedded_server.slots >= 8
    assert embedded.openai_base_url() == embedded_server.base_url + "/v1"


def test_concurrent_starts_share_one_server(embedded_server):
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(embedded.start())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(info is embedded_server for info in seen)


def test_context_window_reported_is_the_servers(embedded_server):
    with urllib.request.urlopen(embedded_server.base_url + "/props", timeout=10) as resp:
        props = json.loads(resp.read())
    per_request = props["default_generation_settings"]["n_ctx"]
    assert per_request == embedded_server.context_window == embedded.context_window()
    assert settings().context_window == per_request
    assert per_request >= 2048  # room for the FinCoach full buffer at turn 5 (~1,500 tokens)
    assert props["total_slots"] == embedded_server.slots


def test_answers_from_its_context_streaming_with_usage(embedded_server):
    deltas: list[str] = []
    reply = stream(CHIRU, settings(), on_delta=deltas.append)
    assert reply.ok, reply.error
    assert "Chiru" in reply.text
    assert len(deltas) >= 3 and "".join(deltas) == reply.text
    assert reply.usage is not None and reply.usage.input and reply.usage.input > 20
    assert reply.usage.output and 0 < reply.usage.output <= 32
    assert reply.ttft_s is not None and reply.ttft_s <= reply.latency_s
    assert reply.model == embedded.MODEL_NAME
    assert reply.body["messages"][0] == {"role": "system", "content": CHIRU.system}
    assert reply.url == embedded_server.openai_base_url


def test_deterministic_at_temperature_zero(embedded_server):
    first = stream(CHIRU, settings(max_tokens=16))
    second = stream(CHIRU, settings(max_tokens=16))
    assert first.ok and second.ok
    assert first.text == second.text


def test_anthropic_sdk_against_the_messages_endpoint(embedded_server):
    anth = ProviderSettings(
        "anthropic", embedded.MODEL_NAME, base_url=embedded_server.base_url, max_tokens=32
    )
    deltas: list[str] = []
    reply = stream(CHIRU, anth, on_delta=deltas.append)
    assert reply.ok, reply.error
    assert "Chiru" in reply.text and len(deltas) >= 3
    assert reply.usage is not None and reply.usage.input and reply.usage.output
    assert reply.finish_reason in ("end_turn", "max_tokens")
    assert reply.body["system"] == CHIRU.system and reply.body["temperature"] == 0.0


def test_too_long_a_prompt_is_a_context_error_with_counts(embedded_server):
    window = embedded_server.context_window
    long = make_request(("user", "apple banana cherry " * window))
    reply = stream(long, settings())
    assert isinstance(reply.error, ContextLengthExceeded)
    assert reply.error.context_window == window
    assert reply.error.prompt_tokens is not None and reply.error.prompt_tokens > window


def test_eight_lanes_at_once(embedded_server):
    replies: list = [None] * 8

    def lane(i: int) -> None:
        replies[i] = stream(make_request(("user", f"Say the number {i}.")), settings(max_tokens=6))

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and r.ok for r in replies), [r.error for r in replies if r]


def test_model_fn_for_maintenance_calls(embedded_server):
    fn = as_model_fn(settings(), max_tokens=12)
    completion = fn(CHIRU)
    assert completion.text and completion.usage is not None
    assert completion.body is not None and completion.body["max_tokens"] == 12


def test_prompt_cache_is_asked_for_in_the_body_and_used(embedded_server):
    cold = stream(CHIRU, settings(max_tokens=16))
    warm_settings = settings(max_tokens=16, prompt_cache=True)
    first = stream(CHIRU, warm_settings)
    second = stream(CHIRU, warm_settings)  # served from the slot's cached prefix
    assert cold.ok and first.ok and second.ok
    assert first.body["cache_prompt"] is True and "cache_prompt" not in cold.body
    assert cold.usage.details.get("cached_tokens", 0) == 0
    assert second.usage.details.get("cached_tokens", 0) > 0
    # the replies may differ: a 135M model at temperature 0 is that sensitive to how its
    # prompt was computed (which is why the survival lab leaves the cache off)


def test_a_pinned_request_runs_in_its_slot_and_finds_only_what_that_slot_read(embedded_server):
    """A call's `slot` goes out as llama.cpp's `id_slot`: a prompt another slot holds is read
    in full in the pinned one (unpinned, the server would send it where it is held), which is
    what keeps two lanes with identical prefixes in two slots (lanes/embedded_router.py)."""
    request = make_request(
        ("user", "My name is Chiru."), system=f"You are FinCoach ({uuid.uuid4().hex})."
    )
    base = settings(max_tokens=4, prompt_cache=True)
    mine, other = embedded_server.slots - 1, embedded_server.slots - 2
    first = stream(request, base, slot=mine)
    unpinned = stream(request, base)  # the server's own pick: the slot holding the prompt
    elsewhere = stream(request, base, slot=other)
    again = stream(request, base, slot=mine)
    assert all(r.ok for r in (first, unpinned, elsewhere, again))
    assert first.body["id_slot"] == mine and "id_slot" not in unpinned.body
    cached = [r.usage.details.get("cached_tokens", 0) for r in (first, unpinned, elsewhere, again)]
    half = first.usage.input // 2  # the prompt's start (the chat template) may be cached
    assert cached[0] < half and cached[1] > half and cached[3] > half, cached
    assert cached[2] < half, cached  # pinned elsewhere: read anew, not taken from `mine`


def test_fact_extraction_on_fincoach_turn_1_is_json_that_sets_facts(embedded_server):
    # turn 1 of the demo as the embedded model answered it (the recorded demo's entity lane)
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))["lanes"]["entity"]["turns"][0]
    turn = Turn(1, DEMO_TURNS[0], recorded["reply"])
    request = extraction_request(TokenCounter(), {}, turn)
    reply = stream(request, settings(max_tokens=UpkeepLimits().extraction))
    assert reply.ok, reply.error_message
    assert reply.body["grammar"] == compact_grammar(FACT_UPDATE_SCHEMA)
    # the grammar ends the reply at the closing brace, before the cap, with nothing after it
    assert reply.finish_reason == "stop", reply.text
    assert isinstance(json.loads(reply.text), dict)
    to_set, _ = parse_fact_update(reply.text)
    assert to_set, reply.text
    # compact and bounded: no whitespace between members, at most COMPACT_MEMBERS facts
    assert reply.text == json.dumps(
        json.loads(reply.text), ensure_ascii=False, separators=(",", ":")
    )
    assert len(to_set) <= COMPACT_MEMBERS
