"""Every test gets its own session store (nothing is written under data/); fixtures several
folders share: the token counter and the fake batch endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
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
