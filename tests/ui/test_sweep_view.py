"""The Sweeps page's tables as data (ui/sweep_view.py)."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

from ui.sweep_view import failed_rows, sweep_rows


def test_saved_sweeps_and_failed_requests_as_table_rows():
    sweep = SimpleNamespace(
        id="abcdef0123456789", name="grid <b>", created_at=datetime(2026, 12, 7, 9, 5),
        kind="survival", provider="openai", model="gpt-4o-mini", status="running",
        succeeded=3, requests=10, failed=1,
    )  # fmt: skip
    assert sweep_rows([sweep]) == [
        {
            "sweep": "abcdef01",
            "name": "grid <b>",
            "started": "2026-12-07 09:05",
            "grid": "survival",
            "model": "openai · gpt-4o-mini",
            "status": "running",
            "back": "3/10",
            "failed": 1,
        }  # fmt: skip
    ]
    request = SimpleNamespace(custom_id="r-1", state="errored", attempts=2, error=None)
    assert failed_rows([request]) == [
        {"request": "r-1", "state": "errored", "attempts": 2, "error": ""}
    ]
