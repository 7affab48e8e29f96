"""The survival command with a facts file (assistant-stated and updated facts) and a custom
system prompt; malformed facts files exit 2 naming the field."""

from __future__ import annotations

import json

import pytest

from engines.survival import EXAMPLE_FACTS, facts_json
from tests.cli.cli_support import cli


def test_system_prompt_file_and_example_facts(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text(facts_json(EXAMPLE_FACTS), encoding="utf-8")
    system = tmp_path / "system.txt"
    system.write_text("You are a terse assistant.", encoding="utf-8")
    out = tmp_path / "run.json"
    done = cli(
        "survival", "--payload-only", "--facts", str(facts), "--system-file", str(system),
        "--probe-turns", "3,8,12", "--strategy", "full", "--strategy", "window:k=1",
        "--strategy", "summary", "--json", str(out), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Plan: 2 facts × 3 strategies × 3 probe turns = 18 probes" in done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["config"]["system_prompt"] == "You are a terse assistant."
    rows = {(r["strategy"], r["fact"], r["probe_turn"]): r for r in data["rows"]}
    assert rows[("full", "rent", 12)]["payload_state"] == "both"
    assert rows[("window (k=1)", "rent", 12)]["payload_state"] == "missing"
    assert rows[("full", "emergency_fund", 3)]["found_in"] == ["reply 2"]
    # the stand-ins are named beside the figures
    assert "(upkeep by rule-based stand-ins, not a model)" in done.stdout
    assert "stale = only an old value" in done.stdout


def test_system_prompt_inline_reaches_the_saved_config(tmp_path):
    out = tmp_path / "run.json"
    done = cli("survival", "--payload-only", "--system", "Be brief.", "--probe-turns", "2",
               "--strategy", "full", "--json", str(out), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["config"]["system_prompt"] == "Be brief."


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"key": "r", "text": "t", "probe": "p", "answer": "a", "plant_turn": "one"}]',
         "fact 'r': plant_turn is a whole number of turns (1 or more), got 'one'"),
        ("[" * 50_000 + "]" * 50_000, "nests too deeply"),
        ('[{"key": "r", "text": "t", "probe": "p", "answer": "a", "speaker": "me"}]',
         "'speaker' is \"user\" or \"assistant\""),
    ],
)  # fmt: skip
def test_malformed_facts_file_exits_2_naming_the_field(tmp_path, content, message):
    facts = tmp_path / "facts.json"
    facts.write_text(content, encoding="utf-8")
    done = cli("survival", "--payload-only", "--facts", str(facts))
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_system_and_system_file_together_are_refused(tmp_path):
    done = cli("survival", "--payload-only", "--system", "a", "--system-file", "b")
    assert done.returncode == 2 and "not both" in done.stderr
