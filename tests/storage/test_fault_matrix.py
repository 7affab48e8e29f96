"""The fault matrix (issue 10): each fault injected into one lane of a six-lane turn, through
the official SDKs against the local fake server; the faulty lane says what is wrong, the other
five complete, the store holds every completed lane turn, and a retry succeeds once the fault
is gone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from providers import clear_clients
from tests.providers.fake_server import FakeLLMServer
from tests.storage.fault_matrix import FAULTS, Fault, run_fault


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer().start()
    yield server
    server.stop()
    clear_clients()


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
def test_one_faulty_lane_never_takes_down_the_others(fault: Fault, server, tmp_path):
    outcome = run_fault(fault, server.url, f"sqlite:///{tmp_path / 'faults.sqlite3'}")
    assert outcome.actionable, f"{fault.name}: the lane showed {outcome.shown!r}"
    assert outcome.others_ok == 5
    assert outcome.stored and outcome.lost == 0
    assert outcome.recovered
