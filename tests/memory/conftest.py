"""Fakes for the memory core: model functions that answer without a model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter
from memory.types import Completion, ModelFn, Request


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return TokenCounter("o200k_base")


class FakeSummariser:
    """Keeps the user lines it is shown: a lossless-enough fake with a bounded length."""

    def __init__(self, text: str | None = None) -> None:
        self.text = text
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Completion:
        self.requests.append(request)
        if self.text is not None:
            return Completion(self.text)
        content = request.messages[-1].content
        previous = re.search(r"Current summary:\nSummary: (.*)", content)
        users = re.findall(r"^User: (.*)$", content, re.M)
        kept = ([previous.group(1)] if previous else []) + users
        return Completion(("Summary: " + " | ".join(kept))[-400:])


class FakeExtractor:
    """Pulls 'my X is Y' facts out of the latest user line, as JSON."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def __call__(self, request: Request) -> Completion:
        self.requests.append(request)
        user = re.findall(r"^User: (.*)$", request.messages[-1].content, re.M)[-1]
        found = dict(re.findall(r"my (\w+) is (\w+)", user, re.I))
        forget = re.findall(r"forget my (\w+)", user, re.I)
        return Completion(json.dumps({"set": found, "delete": forget}))


def with_fakes(
    name: str,
    system: str,
    counter: TokenCounter,
    *,
    summarize: ModelFn | None = None,
    extract: ModelFn | None = None,
    **params: object,
) -> Strategy:
    """A new strategy with a fresh FakeSummariser and FakeExtractor unless others are given."""
    fakes = Upkeep(summarize or FakeSummariser(), extract or FakeExtractor())
    return LaneSpec(name, params).create(system, counter=counter, upkeep=fakes)


@pytest.fixture
def summariser() -> FakeSummariser:
    return FakeSummariser()


@pytest.fixture
def extractor() -> FakeExtractor:
    return FakeExtractor()


@pytest.fixture
def sample_registered(request: pytest.FixtureRequest) -> Iterator[None]:
    """Registers the sample composition named by the test's `name` parameter while it runs
    (a built-in's name registers nothing): tests/memory/compositions.py."""
    from tests.memory.compositions import registered

    with registered(request.node.callspec.params["name"]):
        yield
