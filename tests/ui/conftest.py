"""AppTest fixtures: the real app script with a fake transport in place of the providers."""

from __future__ import annotations

from pathlib import Path

import pytest

from lanes import session as session_module
from providers.fake import FakeTransport

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_transport(monkeypatch) -> FakeTransport:
    transport = FakeTransport(chunks=3)
    monkeypatch.setattr(session_module, "ProvidersTransport", lambda: transport)
    return transport
