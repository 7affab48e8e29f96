"""Every test gets its own session store: nothing is written under data/."""

from __future__ import annotations

import pytest
from hypothesis import settings

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
