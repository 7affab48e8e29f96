"""Provider-test fixtures: the fake LLM endpoint, requests, and the one embedded server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory.types import Message, Request, TokenCount
from providers import ProviderSettings, clear_clients, embedded
from tests.providers.fake_server import FakeLLMServer

TEST_KEY = "test-key-0123456789"
FAMILIES = ["openai", "anthropic"]  # the two wire formats every SDK test runs against


def make_request(*messages: tuple[str, str], system: str = "You are a terse assistant.") -> Request:
    """A Request from (role, content) pairs (a single user message when none are given)."""
    msgs = tuple(Message(role, content) for role, content in messages) or (Message("user", "Hi"),)
    return Request(system=system, messages=msgs, tokens=TokenCount(0, 0, "o200k_base", True))


# A short FinCoach exchange ending on a question: the request the wire and batch tests send.
REQUEST = make_request(
    ("user", "My name is Chiru."),
    ("assistant", "Hello Chiru."),
    ("user", "What is my name?"),
    system="You are FinCoach.",
)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake(fake_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The session's fake endpoint, with its records cleared for this test."""
    with fake_server.cleared() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_clients() -> Iterator[None]:
    yield
    clear_clients()


def settings_for(
    server: FakeLLMServer, family: str, model: str, **overrides: Any
) -> ProviderSettings:
    """Settings pointing one SDK at the fake endpoint, with fast retries and a short timeout."""
    values: dict[str, Any] = {
        "api_key": TEST_KEY,
        "max_retries": 2,
        "retry_backoff": 0.01,
        "timeout": 5.0,
    }
    values.update(overrides)
    if family == "anthropic":
        return ProviderSettings("anthropic", model, base_url=server.url, **values)
    return ProviderSettings("openai_compatible", model, base_url=server.url + "/v1", **values)


@pytest.fixture(scope="session")
def embedded_server() -> embedded.EmbeddedInfo:
    """The embedded llama.cpp server, started once for the whole test session."""
    return embedded.start()
