"""Hosted-provider completeness: OpenAI reasoning bodies, Anthropic prompt-cache breakpoints and
cached-token prices, exact counts from the providers' counting endpoints (real SDKs, fakes)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory.types import Usage
from providers import ProviderSettings, build_body, model_info, stream
from providers.batch import batch_body
from providers.catalog import input_split
from providers.counting import count_exact, supports_counting
from providers.families.openai import OPENAI
from tests.providers.conftest import TEST_KEY, make_request, settings_for
from tests.providers.fake_batch_server import FakeBatchServer, token_count

REQUEST = make_request(("user", "My name is Chiru."), ("assistant", "Hi."), ("user", "Name?"))


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [("o4-mini", True), ("o3", True), ("gpt-5-mini", True), ("gpt-5-chat-latest", False),
     ("gpt-4o-mini", False), ("gpt-4.1", False)],
)  # fmt: skip
def test_openai_reasoning_models_get_max_completion_tokens_and_no_temperature(model, reasoning):
    settings = ProviderSettings("openai", model, temperature=0.0, max_tokens=300)
    body = build_body(REQUEST, settings)
    assert OPENAI.is_reasoning(settings) is reasoning
    if reasoning:
        assert body["max_completion_tokens"] == 300
        assert "temperature" not in body and "max_tokens" not in body
    else:
        assert body["max_tokens"] == 300 and body["temperature"] == 0.0
        assert "max_completion_tokens" not in body
    assert batch_body(REQUEST, settings).items() <= body.items()  # batch lines follow suit
    # the same name on another kind of endpoint is left alone
    other = build_body(REQUEST, ProviderSettings("openai_compatible", model, base_url="http://x/v1"))  # fmt: skip
    assert "max_tokens" in other


def test_reasoning_body_reaches_the_wire_through_the_sdk(fake):
    settings = settings_for(fake, "openai", "o4-mini").with_(kind="openai", max_tokens=64)
    reply = stream(REQUEST, settings)
    assert reply.ok, reply.error
    sent = fake.requests[0].json
    assert sent["max_completion_tokens"] == 64 and "temperature" not in sent
    assert "max_tokens" not in sent and sent == reply.body


def test_anthropic_prompt_cache_marks_breakpoints_and_usage_splits_cached_input(fake):
    settings = settings_for(fake, "anthropic", "ok", prompt_cache=True, temperature=None)
    body = build_body(REQUEST, settings)
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][0] == {
        "type": "text", "text": "Name?", "cache_control": {"type": "ephemeral"}}  # fmt: skip
    assert body["messages"][:-1] == build_body(REQUEST, settings.with_(prompt_cache=None))["messages"][:-1]  # fmt: skip
    reply = stream(REQUEST, settings)
    assert reply.ok and fake.requests[0].json == reply.body
    assert input_split(reply.usage) == (32, 10, 0)  # the fake reads 10 of 42 from the cache
    # off (the default) the body is the plain one
    assert isinstance(build_body(REQUEST, settings.with_(prompt_cache=None))["system"], str)


def test_cached_tokens_are_priced_at_the_cache_prices():
    info = model_info(ProviderSettings("anthropic", "claude-haiku-4-5"))
    assert info is not None and info.cached_input_per_m == 0.10
    plain = info.cost(Usage(1_000_000, 0))
    cached = info.cost(Usage(1_000_000, 0, {"cached_tokens": 800_000}))
    written = info.cost(Usage(1_000_000, 0, {"cache_write_tokens": 1_000_000}))
    assert plain == pytest.approx(1.00)
    assert cached == pytest.approx(0.2 * 1.00 + 0.8 * 0.10)
    assert written == pytest.approx(1.25)


@pytest.fixture(scope="module")
def counter_server() -> Iterator[FakeBatchServer]:
    server = FakeBatchServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_exact_counts_come_from_the_providers_endpoint_when_a_key_is_set(counter_server, kind, monkeypatch):  # fmt: skip
    base = counter_server.url + ("/v1" if kind == "openai" else "")
    settings = ProviderSettings(kind, "m", base_url=base, api_key=TEST_KEY, temperature=None)
    found = count_exact(REQUEST, settings)
    assert found is not None and found.label == "exact"
    body = build_body(REQUEST, settings)
    # OpenAI: the system prompt travels as the first input item; Anthropic: apart
    expected = token_count({"messages": body["messages"], "system": body.get("system", "")})
    assert found.tokens == expected
    path = counter_server.requests[-1].path
    assert path == ("/v1/responses/input_tokens" if kind == "openai" else "/v1/messages/count_tokens")  # fmt: skip
    # no key: no exact count (and no call)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    n = len(counter_server.requests)
    assert count_exact(REQUEST, ProviderSettings(kind, "m", temperature=None)) is None
    assert len(counter_server.requests) == n
    assert not supports_counting(ProviderSettings("openai_compatible", "m", base_url="http://x/v1"))
