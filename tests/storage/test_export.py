"""Exports: the self-contained HTML report, Markdown summary, per-turn CSV, session JSON."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from engines.survival import SurvivalConfig, run_survival
from engines.transcripts import parse
from present import export
from present.lanes import charted, cumulative
from storage.store import FORMAT_VERSION, SavedSession, Store
from tests.storage.store_support import make_session


@pytest.fixture(scope="module")
def saved() -> SavedSession:
    session = make_session()
    session.run_turn("Hi! I'm Chiru. <script>alert('x')</script>")
    session.run_turn("My monthly take-home salary is ₹1,20,000.")
    session.run_turn("What is my name?")
    survival = run_survival(SurvivalConfig(probe_turns=(2, 4)).validate()).as_dict()
    return SavedSession.from_session(session, survival=survival)


def test_the_html_report_is_self_contained_and_has_every_part(saved):
    page = export.to_html(saved)
    assert page.startswith("<!DOCTYPE html>")
    assert "<script src" not in page and "cdn.plot.ly/plotly" not in page
    assert len(page) > 3_000_000  # Plotly's JavaScript is inline
    ids = re.findall(r'<div id="(fig-[a-z0-9-]+)"', page)
    assert ids == [
        "fig-comparison",
        "fig-cumulative",
        "fig-anatomy-turn",
        "fig-anatomy-grid",
        *[f"fig-lane-{i}" for i in range(6)],
        "fig-survival-0",
    ]
    for title in saved.titles().values():
        assert f"{title}</td>" in page  # the tokens and cost table
    assert "$0.0" in page  # gpt-4o-mini has a catalog price
    assert "Tokens and cost per strategy" in page and "Settings" in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page  # user text escaped
    assert "<script>alert('x')</script>" not in page
    assert '"messages"' not in page  # payloads are optional
    with_payloads = export.to_html(saved, payloads=True)
    assert "Payload · " in with_payloads and "&quot;messages&quot;" in with_payloads


def test_csv_has_one_row_per_lane_per_turn_with_the_charted_figures(saved):
    rows = list(csv.DictReader(io.StringIO(export.to_csv(saved))))
    assert len(rows) == 3 * 6
    assert list(rows[0]) == list(export.CSV_COLUMNS)
    for name in saved.strategies:
        mine = [r for r in rows if r["lane"] == name]
        records = saved.records[name]
        assert [int(r["prompt_counted"]) for r in mine] == [r.counted for r in records]
        assert [int(r["tokens_so_far"]) for r in mine] == cumulative(charted(records))
        assert all(float(r["cost_usd"]) > 0 for r in mine)


def test_markdown_summary(saved):
    text = export.to_markdown(saved)
    assert text.startswith("# Hi! I'm Chiru.")
    assert "| Strategy | Turns ok |" in text
    for title in saved.titles().values():
        assert f"| {title} | 3/3 |" in text
    assert "## Fact survival" in text and "in payload" in text
    assert "3. What is my name?" in text


def test_the_json_export_is_re_importable_by_the_store_and_the_importer(saved, tmp_path):
    text = export.to_json(saved)
    data = json.loads(text)
    assert data["memory_lab_session"] == FORMAT_VERSION and data["survival"]["rows"]
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    back = store.load(store.import_json(text))
    assert back.records == saved.records and back.survival == saved.survival
    assert parse(text).saved.records == saved.records
