"""AppTest fixtures: the real app script with a fake transport in place of the providers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lanes import session as session_module
from lanes import stack
from providers.fake import FakeTransport

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def shown(value: str) -> str:
    """What escaped Markdown (present/safe.py) shows on screen: the text, escapes removed."""
    return re.sub(r"\\(.)", r"\1", value.replace("  \n", "\n"))


def run_app() -> AppTest:
    """The main page, run once; fails the test if the script raised."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def fake_transport(monkeypatch) -> FakeTransport:
    """The fake in place of the providers. It answers at once, so whether two lanes' identical
    requests overlap (and share one call, lanes/sharing.py) is up to thread timing: tests that
    count calls or fail one lane's call see every lane send its own. `shared_transport`
    makes the overlap certain instead."""
    transport = FakeTransport(chunks=3)
    monkeypatch.setattr(session_module, "ProvidersTransport", lambda: transport)
    monkeypatch.setattr(stack, "SharingLayer", lambda inner: inner)  # no sharing layer
    return transport
