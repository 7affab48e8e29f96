"""Engine-test fixtures: the fake batch endpoint (shared by the sweep tests) and a store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage.sweeps import SweepStore
from tests.providers.fake_batch_server import FakeBatchServer


@pytest.fixture(scope="module")
def server() -> Iterator[FakeBatchServer]:
    srv = FakeBatchServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def fb(server: FakeBatchServer) -> Iterator[FakeBatchServer]:
    server.reset()
    yield server
    server.reset()


@pytest.fixture
def store(tmp_path) -> Iterator[SweepStore]:
    s = SweepStore(f"sqlite:///{tmp_path / 'sweeps.sqlite3'}")
    yield s
    s.close()
