"""The command line: tables printed, files written, exit codes and messages for bad arguments."""

from __future__ import annotations

import csv
import json

import pytest

from tests.cli.cli_support import cli


def test_simulate_defaults_print_the_seed_table():
    done = cli("simulate")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "System prompt: 132 tokens on every call" in out
    assert "   1 |         17 |           17 |           149 |         149" in out
    assert "  10 |         14 |          844 |           976 |       5,611" in out
    assert "Growth factor, turn 10 over turn 1: 6.55x" in out
    assert "matches seed 000's table exactly" in out


def test_simulate_writes_csv_and_json(tmp_path):
    csv_path, json_path = tmp_path / "out" / "g.csv", tmp_path / "g.json"
    done = cli(
        "simulate", "--turns", "50", "--strategy", "full", "--strategy", "window:k=3",
        "--price", "test=2/10", "--csv", str(csv_path), "--json", str(json_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert len(rows) == 100 and {r["strategy"] for r in rows} == {"full", "window (k=3)"}
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["config"]["turns"] == 50
    assert "test $" in done.stdout
    assert "--full-table prints every turn" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "--turns", "0"], "expected 1 or more"),
        (["simulate", "--turns", "1001"], "1 to 1000"),
        (["simulate", "--strategy", "windw"], "unknown strategy 'windw'"),
        (["simulate", "--strategy", "window:k=-2"], "at least 0"),
        (["simulate", "--price", "gpt=cheap"], "NAME=IN/OUT"),
        (["simulate", "--price", "nosuchmodel"], "unknown price"),
        (["simulate", "--user-turns", "/no/such/file.txt"], "cannot read"),
        (["simulate", "--reply-tokens", "-5"], "expected 0 or more"),
        (["survival", "--probe-turns", "1,5"], "start at 2"),
        (["survival", "--probe-turns", "2,x"], "whole numbers"),
        (["survival", "--strategy", "nope"], "unknown strategy"),
        (["survival", "--payload-only", "--replies", "generated"], "no model to generate"),
        (["survival", "--facts", "/no/such.json"], "cannot read --facts"),
        (["survival", "--filler", "/no/such.txt"], "cannot read --filler /no/such.txt"),
        (["survival", "--plant-turn", "3", "--probe-turns", "2,5"], "no fact is stated before"),
        (["survival", "--provider", "nosuch", "--probe-turns", "2"], "unknown provider 'nosuch'"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(args, message):
    done = cli(*args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_survival_payload_only_prints_the_grid_and_writes_files(tmp_path):
    csv_path, json_path = tmp_path / "s.csv", tmp_path / "s.json"
    done = cli(
        "survival", "--payload-only", "--probe-turns", "2,5,10",
        "--strategy", "full", "--strategy", "window:k=3", "--quiet",
        "--csv", str(csv_path), "--json", str(json_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Facts in the payload at turn N:" in lines
    assert any(line.split() == ["full", "4/4", "4/4", "4/4"] for line in lines)
    assert any(line.split() == ["window", "(k=3)", "4/4", "0/4", "0/4"] for line in lines)
    assert "recalled by the model" not in done.stdout  # no model, no recall grid
    assert "Prompt tokens sent to reach turn N" in done.stdout
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert len(rows) == 4 * 2 * 3
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["mode"] == "payload-only" and data["cancelled"] is False


def test_survival_custom_facts_and_filler(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text(
        json.dumps(
            [
                {
                    "key": "city",
                    "plant": "I live in Pune.",
                    "probe": "Where do I live?",
                    "answers": ["Pune"],
                }
            ]
        ),
        encoding="utf-8",
    )
    filler = tmp_path / "filler.txt"
    filler.write_text("What should I cook tonight?\nAny tips for sleep?\n", encoding="utf-8")
    done = cli(
        "survival", "--payload-only", "--facts", str(facts), "--filler", str(filler),
        "--probe-turns", "2,3,4", "--strategy", "window:k=2", "--quiet", "--rows",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert any(
        line.split() == ["window", "(k=2)", "1/1", "1/1", "0/1"]
        for line in done.stdout.splitlines()
    )
    assert "[window (k=2) N=4 city] payload=False" in done.stdout


def test_survival_estimate_only():
    done = cli(
        "survival",
        "--estimate-only",
        "--probe-turns",
        "2,5",
        "--strategy",
        "full",
        "--strategy",
        "entity",
    )
    assert done.returncode == 0, done.stderr
    est = json.loads(done.stdout)
    assert est["probe_calls"] == 4 * 2 * 2 and est["reply_calls"] == 0
    assert est["maintenance_calls"] >= 4  # entity extracts after every turn
    assert "Plan: 4 facts × 2 strategies × 2 probe turns = 16 probes" in done.stderr


def test_help_lists_the_commands_examples_and_exit_codes():
    done = cli("--help")
    assert done.returncode == 0
    for command in ("simulate", "survival", "app"):
        assert f"\n    {command} " in done.stdout
    assert "examples:\n  memory-lab simulate" in done.stdout
    assert "exit codes:\n  0    done\n  1    the run failed" in done.stdout
    assert "2    bad usage" in done.stdout and "130  interrupted" in done.stdout
    for command in ("simulate", "survival", "app"):
        sub = cli(command, "--help")
        assert sub.returncode == 0 and "examples:" in sub.stdout, command
