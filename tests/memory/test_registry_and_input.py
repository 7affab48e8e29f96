from __future__ import annotations

import pytest

from memory.errors import (
    DuplicateStrategy,
    InvalidMessage,
    InvalidParameter,
    UnknownStrategy,
)
from memory.registry import DEFAULT_LANES, REGISTRY, create, register
from memory.strategies.full import FullBuffer
from memory.types import Message
from tests.memory.conftest import with_fakes


def test_all_eight_strategies_are_registered():
    assert list(REGISTRY) == [
        "full",
        "window",
        "token_window",
        "summary",
        "summary_buffer",
        "entity",
        "hybrid",
        "retrieval",
    ]
    assert set(DEFAULT_LANES) <= set(REGISTRY) and len(DEFAULT_LANES) == 6
    for spec in REGISTRY.values():
        assert spec.title and spec.description


def test_duplicate_names_are_refused():
    with pytest.raises(DuplicateStrategy, match="full"):
        register(FullBuffer)


def test_unknown_strategy_names_the_known_ones(counter):
    with pytest.raises(UnknownStrategy) as info:
        create("fulll", "sys", counter=counter)
    assert "'fulll'" in str(info.value) and "window" in str(info.value)


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("window", {"k": -1}, "at least 0"),
        ("window", {"k": 2.5}, "number of turns"),
        ("window", {"window": 3}, "no parameter window"),
        ("token_window", {"budget": 100}, "system prompt"),
        ("token_window", {"budget": 0}, "at least 1"),
        ("summary_buffer", {"trigger": 1.5}, "at most 1.0"),
        ("summary", {"summary_placement": "footer"}, "one of"),
        ("retrieval", {"k": 0, "top_k": 0}, "no history"),
    ],
)
def test_invalid_parameters_are_specific(counter, name, params, match):
    system = "x " * 150  # 150 tokens
    with pytest.raises(InvalidParameter, match=match):
        with_fakes(name, system, counter, **params)


def test_strategies_that_need_a_model_say_so(counter):
    with pytest.raises(InvalidParameter, match="summariser"):
        create("summary_buffer", "sys", counter=counter)
    with pytest.raises(InvalidParameter, match="extractor"):
        create("entity", "sys", counter=counter)


@pytest.mark.parametrize("bad", ["", "   ", "\n\t", None, 42, ["hi"]])
def test_empty_or_non_text_messages_are_refused(counter, bad):
    s = create("full", "sys", counter=counter)
    with pytest.raises(InvalidMessage):
        s.prepare(bad)
    assert len(s.history) == 0


def test_unknown_roles_are_refused():
    with pytest.raises(InvalidMessage, match="unknown role 'system'"):
        Message("system", "hi")
    with pytest.raises(InvalidMessage, match="must be a string"):
        Message("user", 3)


def test_a_message_longer_than_the_limit_is_refused_with_its_length(counter):
    from memory.strategies.base import MAX_MESSAGE_CHARS

    s = create("full", "sys", counter=counter)
    s.prepare("x" * MAX_MESSAGE_CHARS)  # the limit itself is sendable
    with pytest.raises(InvalidMessage, match=r"1,000,000 characters long; at most 100,000"):
        s.prepare("x" * 1_000_000)
    assert len(s.history) == 0
