"""Shared fixtures for the lab tests."""

from __future__ import annotations

import pytest

from memory.tokens import TokenCounter


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return TokenCounter("o200k_base")
