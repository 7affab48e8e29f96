"""The real openai and anthropic SDKs against a local fake endpoint: bodies, streams, faults."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from memory.maintenance import FACT_UPDATE_SCHEMA, extraction_request
from memory.tokens import TokenCounter
from memory.types import Turn
from providers import (
    AuthError,
    BadRequest,
    ContextLengthExceeded,
    ModelNotFound,
    ProviderSettings,
    QuotaExceeded,
    RateLimited,
    ServerError,
    StreamInterrupted,
    Timeout,
    Unavailable,
    as_model_fn,
    build_body,
    stream,
)
from providers.clients import get_client
from providers.families.embedded import compact_grammar
from tests.providers.conftest import FAMILIES, REQUEST, TEST_KEY, settings_for
from tests.providers.fake_server import CANNED, CONTEXT_PROMPT, CONTEXT_WINDOW, SLOW_S


def only_body(fake):
    assert len(fake.requests) == 1, [r.path for r in fake.requests]
    return fake.requests[0]


@pytest.mark.parametrize("family", FAMILIES)
def test_streams_text_and_sends_exactly_the_reported_body(fake, family):
    settings = settings_for(fake, family, "ok")
    deltas: list[str] = []
    reply = stream(REQUEST, settings, on_delta=deltas.append)

    assert reply.error is None and reply.complete and reply.ok
    assert reply.text == "".join(CANNED)
    assert deltas == list(CANNED)
    received = only_body(fake)
    assert received.json == reply.body  # what the UI shows is what reached the server
    assert reply.body == build_body(REQUEST, settings)
    assert TEST_KEY not in received.raw.decode()
    assert reply.ttft_s is not None and 0 <= reply.ttft_s <= reply.latency_s
    assert reply.attempts == 1 and reply.model == "ok" and reply.url == settings.base_url


def test_openai_wire_shape(fake):
    settings = settings_for(fake, "openai", "ok", temperature=0.0, max_tokens=77)
    reply = stream(REQUEST, settings)
    received = only_body(fake)
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {TEST_KEY}"
    # the builder's body (its fields: tests/providers/test_bodies_settings.py), all of it sent
    assert received.json == build_body(REQUEST, settings)
    assert received.json["temperature"] == 0.0 and received.json["max_tokens"] == 77
    assert received.json["stream_options"] == {"include_usage": True}
    assert reply.usage is not None
    assert (reply.usage.input, reply.usage.output) == (42, len(CANNED))
    assert reply.usage.details["cached_tokens"] == 10
    assert reply.usage.details["reasoning_tokens"] == 3
    assert reply.finish_reason == "stop"


def test_anthropic_wire_shape(fake):
    settings = settings_for(fake, "anthropic", "ok", temperature=0.0, max_tokens=77)
    reply = stream(REQUEST, settings)
    received = only_body(fake)
    assert received.path == "/v1/messages"
    assert TEST_KEY in (
        received.headers.get("authorization", "") + received.headers.get("x-api-key", "")
    )
    assert received.json == build_body(REQUEST, settings)
    assert received.json["system"] == "You are FinCoach." and received.json["max_tokens"] == 77
    # not a parameter of anthropic SDK 2.x: it travels in extra_body, still on the wire
    assert received.json["temperature"] == 0.0
    assert reply.usage is not None
    # input counts the whole prompt: uncached 32 + 10 read from the cache
    assert (reply.usage.input, reply.usage.output) == (42, len(CANNED))
    assert reply.usage.details["cached_tokens"] == 10
    assert reply.usage.details["uncached_input_tokens"] == 32
    assert reply.finish_reason == "end_turn"


def test_no_temperature_is_sent_when_unset(fake):
    reply = stream(REQUEST, settings_for(fake, "openai", "ok", temperature=None))
    assert "temperature" not in only_body(fake).json
    assert reply.ok


@pytest.mark.parametrize("family", FAMILIES)
def test_wrong_key_is_an_auth_error_naming_the_variable(fake, family):
    settings = settings_for(fake, family, "fault-401", key_env="FAKE_PROVIDER_KEY")
    reply = stream(REQUEST, settings)
    assert isinstance(reply.error, AuthError)
    assert "set FAKE_PROVIDER_KEY" in str(reply.error)
    assert reply.error.status == 401 and reply.error.env_var == "FAKE_PROVIDER_KEY"
    assert not reply.complete and reply.text == ""
    assert only_body(fake).json == reply.body  # it was sent once, not retried


@pytest.mark.parametrize("family", FAMILIES)
def test_unknown_model(fake, family):
    reply = stream(REQUEST, settings_for(fake, family, "fault-404"))
    assert isinstance(reply.error, ModelNotFound)
    assert "'fault-404' was not found at " + fake.url in str(reply.error)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_rate_limit_is_retried_then_succeeds(fake, family):
    settings = settings_for(fake, family, "fault-429x2", max_retries=3, retry_backoff=0.01)
    reply = stream(REQUEST, settings)
    assert reply.ok, reply.error
    assert reply.text == "".join(CANNED)
    assert reply.attempts == 3
    assert [r.json for r in fake.requests] == [reply.body] * 3


@pytest.mark.parametrize("family", FAMILIES)
def test_rate_limit_surfaces_after_the_retries(fake, family):
    settings = settings_for(fake, family, "fault-429-always", max_retries=2, retry_backoff=0.01)
    reply = stream(REQUEST, settings)
    assert isinstance(reply.error, RateLimited)
    assert "rate-limiting" in str(reply.error)
    assert reply.attempts == 3 and len(fake.requests) == 3


def test_used_up_quota_is_not_retried(fake):
    reply = stream(REQUEST, settings_for(fake, "openai", "fault-quota", max_retries=3))
    assert isinstance(reply.error, QuotaExceeded)
    assert "billing" in str(reply.error)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_server_error(fake, family):
    reply = stream(REQUEST, settings_for(fake, family, "fault-500"))
    assert isinstance(reply.error, ServerError)
    assert "HTTP 500" in str(reply.error) and reply.error.status == 500
    assert len(fake.requests) == 1  # a plain 500 is not retried


@pytest.mark.parametrize("family", FAMILIES)
def test_timeout(fake, family):
    started = time.perf_counter()
    reply = stream(REQUEST, settings_for(fake, family, "fault-timeout", timeout=0.3))
    assert isinstance(reply.error, Timeout)
    assert "within 0.3 s" in str(reply.error)
    assert time.perf_counter() - started < SLOW_S
    assert len(fake.requests) == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_stall_mid_stream_keeps_the_partial_text(fake, family):
    deltas: list[str] = []
    reply = stream(REQUEST, settings_for(fake, family, "fault-stall", timeout=0.4), deltas.append)
    assert isinstance(reply.error, Timeout)
    assert "mid-reply" in str(reply.error)
    assert reply.text == "".join(CANNED[:2]) == "".join(deltas)
    assert not reply.complete
    assert len(fake.requests) == 1  # text had been streamed: never resent


@pytest.mark.parametrize("family", FAMILIES)
def test_stream_cut_halfway_keeps_the_partial_text(fake, family):
    deltas: list[str] = []
    reply = stream(REQUEST, settings_for(fake, family, "fault-cut"), deltas.append)
    assert isinstance(reply.error, StreamInterrupted)
    assert "partial text is kept" in str(reply.error)
    assert reply.text == "".join(CANNED[:2]) == "".join(deltas)
    assert not reply.complete and not reply.ok
    assert only_body(fake).json == reply.body


@pytest.mark.parametrize("family", FAMILIES)
def test_stream_ending_without_finish_is_incomplete(fake, family):
    reply = stream(REQUEST, settings_for(fake, family, "fault-early-end"))
    assert isinstance(reply.error, StreamInterrupted)
    assert reply.text == "".join(CANNED[:2])
    assert not reply.complete


def test_error_event_inside_an_anthropic_stream_is_retried(fake):
    reply = stream(REQUEST, settings_for(fake, "anthropic", "fault-overloaded", max_retries=1))
    assert isinstance(reply.error, ServerError)
    assert "overloaded" in str(reply.error)
    assert reply.attempts == 2 and len(fake.requests) == 2


@pytest.mark.parametrize("family", FAMILIES)
def test_context_length_exceeded_with_counts(fake, family):
    reply = stream(REQUEST, settings_for(fake, family, "fault-context"))
    error = reply.error
    assert isinstance(error, ContextLengthExceeded)
    assert (error.prompt_tokens, error.context_window) == (CONTEXT_PROMPT, CONTEXT_WINDOW)
    assert f"{CONTEXT_PROMPT:,} prompt tokens vs a context window of {CONTEXT_WINDOW:,}" in str(
        error
    )
    assert "memory strategy" in str(error)


@pytest.mark.parametrize("family", FAMILIES)
def test_connection_refused_is_unavailable_naming_the_url(family):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if family == "openai" else "")
    kind = "anthropic" if family == "anthropic" else "openai_compatible"
    settings = ProviderSettings(kind, "m", base_url=url, api_key=TEST_KEY, timeout=2.0)
    reply = stream(REQUEST, settings)
    assert isinstance(reply.error, Unavailable)
    assert url in str(reply.error) and reply.error.url == url
    assert reply.body == build_body(REQUEST, settings) and reply.attempts == 1


def test_missing_key_is_reported_before_sending(fake, monkeypatch):
    monkeypatch.delenv("FAKE_PROVIDER_KEY", raising=False)
    settings = settings_for(fake, "openai", "ok", api_key=None, key_env="FAKE_PROVIDER_KEY")
    reply = stream(REQUEST, settings)
    assert isinstance(reply.error, AuthError)
    assert "set FAKE_PROVIDER_KEY" in str(reply.error)
    assert reply.attempts == 0 and fake.requests == []


def test_key_from_the_environment_is_used(fake, monkeypatch):
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "env-key-9876543210")
    settings = settings_for(fake, "openai", "ok", api_key=None, key_env="FAKE_PROVIDER_KEY")
    assert stream(REQUEST, settings).ok
    assert only_body(fake).headers["authorization"] == "Bearer env-key-9876543210"


def test_model_fn_returns_a_completion_and_raises_provider_errors(fake):
    settings = settings_for(fake, "openai", "ok", max_tokens=50)
    fn = as_model_fn(settings, model="cheap-model", max_tokens=120)
    with pytest.raises(ModelNotFound):
        as_model_fn(settings, model="fault-404")(REQUEST)
    fake.reset()
    completion = fn(REQUEST)
    assert completion.text == "".join(CANNED)
    assert completion.model == "cheap-model"
    assert completion.usage is not None and completion.usage.input == 42
    received = only_body(fake).json
    assert completion.body == received
    assert received["model"] == "cheap-model" and received["max_tokens"] == 120


@pytest.mark.parametrize("family", FAMILIES)
def test_bad_request_quotes_the_servers_reason(fake, family):
    reply = stream(REQUEST, settings_for(fake, family, "fault-400"))
    assert isinstance(reply.error, BadRequest)
    assert "rejected the request (HTTP 400): Invalid value for 'max_tokens'" in str(reply.error)


def test_wrong_base_path_points_at_the_url(fake):
    settings = ProviderSettings(
        "openai_compatible", "ok", base_url=fake.url + "/nowhere", api_key="k"
    )
    reply = stream(REQUEST, settings)
    assert isinstance(reply.error, ModelNotFound)
    assert "/nowhere" in str(reply.error) and "/v1" in str(reply.error)


def test_parallel_lanes_share_one_client(fake):
    settings = [settings_for(fake, "openai", "ok", max_tokens=10 + i) for i in range(8)]
    replies = [None] * 8
    clients = [None] * 8

    def lane(i: int) -> None:
        clients[i] = get_client(settings[i], settings[i].base_url, TEST_KEY)
        replies[i] = stream(REQUEST, settings[i])

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and r.ok for r in replies)
    assert len({id(c) for c in clients}) == 1
    assert sorted(r.json["max_tokens"] for r in fake.requests) == [10 + i for i in range(8)]


class StopRun(Exception):
    """Stands in for a UI framework stopping a script mid-stream."""


def test_a_callbacks_own_exception_propagates(fake):
    def on_delta(text: str) -> None:
        raise StopRun

    with pytest.raises(StopRun):
        stream(REQUEST, settings_for(fake, "openai", "ok"), on_delta)
    assert len(fake.requests) == 1


EXTRACTION = extraction_request(
    TokenCounter("o200k_base"), {"name": "Chiru"}, Turn(2, "I spend ₹60,000.", "Noted.")
)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (
            "embedded",
            None,
        ),  # held to a grammar instead (providers.families.embedded.compact_grammar)
        ("openai", {"type": "json_object"}),
        ("openai_compatible", None),  # an unknown server may reject the field: not sent
        ("anthropic", None),  # the Messages API has no such field
    ],
)
def test_the_extraction_reply_format_on_the_wire(fake, kind, expected):
    base = fake.url if kind == "anthropic" else fake.url + "/v1"
    settings = ProviderSettings(kind, "ok", base_url=base, api_key=TEST_KEY, timeout=5.0)
    reply = stream(EXTRACTION, settings)
    assert reply.ok, reply.error_message
    received = only_body(fake)
    assert received.json == reply.body  # the payload the UI shows is what went out
    assert received.json.get("response_format") == expected
    assert ("frequency_penalty" in received.json) == (kind == "embedded")
    assert received.json.get("grammar") == (
        compact_grammar(FACT_UPDATE_SCHEMA) if kind == "embedded" else None
    )
