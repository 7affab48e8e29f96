"""Every test gets its own session store (nothing is written under data/); fixtures several
folders share: the token counter, the fake batch endpoint and compositions registered for one
test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from memory.compose import Composition
    from memory.registry import StrategySpec
    from tests.providers.fake_batch_server import FakeBatchServer

# `--hypothesis-profile long` runs the strategy contract suite (tests/memory/test_contracts.py)
# with many more examples; the default run stays bounded and seeded.
settings.register_profile("long", max_examples=300, deadline=None)


@pytest.fixture(autouse=True)
def _private_session_store(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_LAB_DB_URL", f"sqlite:///{tmp_path / 'sessions.sqlite3'}")


@pytest.fixture(scope="session")
def counter():
    from memory.tokens import TokenCounter

    return TokenCounter("o200k_base")


@pytest.fixture(scope="session")
def batch_server() -> Iterator[FakeBatchServer]:
    """The fake batch endpoint (tests/providers/fake_batch_server.py), one for the session."""
    from tests.providers.fake_batch_server import FakeBatchServer

    with FakeBatchServer() as server:
        yield server


@pytest.fixture
def fb(batch_server: FakeBatchServer) -> Iterator[FakeBatchServer]:
    """The session's fake batch endpoint, with its records and faults cleared for this test."""
    with batch_server.cleared() as server:
        yield server


@pytest.fixture
def register() -> Iterator[Callable[[Composition], StrategySpec]]:
    """`register(composition)` registers it as a strategy (its spec) for this test only; every
    composition registered so is removed after the test, even one the test removed itself."""
    from memory.registry import register_composition, unregister_composition

    names: list[str] = []

    def add(composition: Composition) -> StrategySpec:
        spec = register_composition(composition)
        names.append(composition.name)
        return spec

    yield add
    for name in names:
        unregister_composition(name)


@pytest.fixture(autouse=True)
def _registry_as_it_was() -> Iterator[None]:
    """Strategies a test loads from outside the lab (framework lanes, plugin files) leave the
    process-wide registry with the test: the next test sees only what it registers itself."""
    from memory.registry import REGISTRY
    from plugins import loading

    saved = dict(REGISTRY)
    state = loading.saved_state()
    yield
    REGISTRY.clear()
    REGISTRY.update(saved)
    loading.restore_state(state)
