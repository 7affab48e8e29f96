"""`memory-lab tune`: the frontier on stdout (or JSON), every trial in CSV, bad usage exit 2."""

from __future__ import annotations

import csv
import json

import pytest

from tests.cli.test_cli import cli


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
        (["--max-trials", "0"], "expected 1 or more, got 0"),
        (["--time-limit", "-1"], "the time limit must be above 0 s"),
    ],
)
def test_tune_bad_usage_exits_2_with_a_message(args, message):
    done = cli("tune", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def write_chat(tmp_path, questions=None):
    from tests.engines.test_tune_evaluators import facts_json, transcript_text

    chat = tmp_path / "chat.txt"
    chat.write_text(transcript_text(), encoding="utf-8")
    facts = tmp_path / "facts.json"
    facts.write_text(facts_json(), encoding="utf-8")
    asked = tmp_path / "questions.json"
    asked.write_text(
        questions
        or json.dumps(
            [
                {"id": "rent", "question": "How much is my rent now?", "evidence": [12]},
                {
                    "id": "fund",
                    "question": "How big is my fund?",
                    "evidence": [5],
                    "after_turn": 20,
                },
            ]
        ),  # fmt: skip
        encoding="utf-8",
    )
    return str(chat), str(facts), str(asked)


def test_tune_on_a_transcript_with_facts_at_its_turns(tmp_path):
    chat, facts, _ = write_chat(tmp_path)
    done = cli("tune", "--transcript", chat, "--facts", facts, "--strategy", "window", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    # probed once after the last turn (31): the fund said at turn 5 needs the last 26 turns
    assert data["winner"]["params"] == {"k": 26} and data["winner"]["probes"] == 2
    assert "on chat.txt (30 turns)" in data["conversation"]


def test_tune_on_a_transcript_with_questions_counts_evidence(tmp_path):
    chat, _, questions = write_chat(tmp_path)
    done = cli("tune", "--transcript", chat, "--questions", questions, "--strategy", "window",
               "--target", "100%")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "window (k=19)" in done.stdout and "tokens/req" in done.stdout
    assert "every one of the evidence turns in the payload" in done.stderr


def test_tune_on_the_long_memory_benchmark_by_seed(tmp_path):
    out = tmp_path / "trials.csv"
    done = cli("tune", "--longmem", "2", "--strategy", "token_window", "--csv", str(out), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["target"]["share"] == 0.9 and data["kept_counts"] == "evidence turns"
    assert data["winner"]["share"] >= 0.9 and "seed 2 (" in data["conversation"]
    assert len(list(csv.DictReader(out.open()))) == data["tried"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--questions", "Q"], "--questions goes with --transcript"),
        (["--transcript", "T"], "--transcript needs what to keep"),
        (["--longmem", "0", "--facts", "F"], "--longmem brings its own conversation"),
        (["--longmem", "0", "--probe-turns", "9"], "--probe-turns is for facts"),
        (["--transcript", "T", "--facts", "F", "--plant-turn", "2"], "--plant-turn is for the"),
    ],
)
def test_tune_conversation_flags_that_do_not_go_together_exit_2(args, message):
    done = cli("tune", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_tune_bad_transcript_inputs_name_the_flag_and_the_problem(tmp_path):
    chat, facts, _ = write_chat(tmp_path, questions='[{"question": "Q?", "evidence": [99]}]')
    questions = str(tmp_path / "questions.json")
    done = cli("tune", "--transcript", chat, "--questions", questions)
    assert done.returncode == 2
    assert f"--questions {questions}: questions[0].evidence[0] is turn 99" in done.stderr
    bad_facts = tmp_path / "late.json"
    bad_facts.write_text(
        json.dumps([{"key": "rent", "turn": 44, "probe": "Rent?", "answer": "₹25,000"}]),
        encoding="utf-8",
    )
    done = cli("tune", "--transcript", chat, "--facts", str(bad_facts))
    assert done.returncode == 2
    assert "fact 'rent' is stated at turn 44, but chat.txt has 30 turns" in done.stderr
    done = cli("tune", "--transcript", chat, "--facts", facts, "--probe-turns", "40")
    assert done.returncode == 2 and "--probe-turns 40: probe turn N=40 needs" in done.stderr


def test_the_cli_page_quotes_the_real_tune_help():
    import os
    import subprocess
    import sys

    from tests.cli.test_docs import ROOT, quoted_block

    shown = quoted_block("cli.md", "memory-lab-tune-help")
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "cli", "tune", "--help"], cwd=ROOT,
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert done.returncode == 0 and done.stdout.rstrip("\n") == shown


def test_tune_on_a_long_memory_conversation_file_and_a_broken_one(tmp_path):
    from scenarios.longmem_world import generate

    conv = tmp_path / "world.json"
    conv.write_text(generate(7, sessions=6).to_json(), encoding="utf-8")
    done = cli(
        "tune", "--longmem", str(conv), "--strategy", "token_window", "--target", "0.5", "--json"
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["winner"]["share"] >= 0.5 and "on world.json (" in data["conversation"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"sessions": []}', encoding="utf-8")
    done = cli("tune", "--longmem", str(broken))
    assert done.returncode == 2
    assert f"--longmem {broken}: 'sessions' must be a non-empty list" in done.stderr
