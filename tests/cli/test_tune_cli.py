"""`memory-lab tune`: the frontier on stdout (or JSON), every trial in CSV, bad usage exit 2."""

from __future__ import annotations

import csv
import json

import pytest

from tests.cli.cli_support import cli


def test_tune_prints_json_whose_winner_meets_the_target_and_writes_every_trial(tmp_path):
    out = tmp_path / "trials.csv"
    done = cli(
        "tune", "--probe-turns", "6", "--strategy", "window", "--strategy", "token_window",
        "--json", "--csv", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["winner"]["meets_target"] and data["winner"]["share"] == 1.0
    cheaper = [
        t for t in data["trials"] if t["tokens_per_turn"] < data["winner"]["tokens_per_turn"]
    ]
    assert all(not t["meets_target"] for t in cheaper)
    assert "Tuning window, token_window for: every fact in the payload" in done.stderr
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == data["tried"] and {r["strategy"] for r in rows} == {
        "window",
        "token_window",
    }


def test_tune_prints_the_frontier_as_a_table():
    done = cli("tune", "--probe-turns", "6", "--strategy", "window")
    assert done.returncode == 0, done.stderr
    assert "settings tried" in done.stdout and "<- cheapest meeting the target" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "0"], "target share must be in (0, 1]"),
        (["--target", "lots"], "a share like 0.9 or 90%"),
        (["--probe-turns", "6", "--at", "9"], "judge only at turns that are probed"),
        (["--strategy", "nope"], "unknown strategy"),
    ],
)
def test_tune_bad_usage_exits_2_with_a_message(args, message):
    done = cli("tune", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr
