"""Engine-test fixtures: a sweep store (the fake batch endpoint `fb` is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storage.store import SweepStore


@pytest.fixture
def store(tmp_path) -> Iterator[SweepStore]:
    s = SweepStore(f"sqlite:///{tmp_path / 'sweeps.sqlite3'}")
    yield s
    s.close()
