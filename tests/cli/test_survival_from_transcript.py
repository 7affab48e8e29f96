"""`memory-lab survival --from-transcript FILE`: the facts a log states, suggested and probed."""

from __future__ import annotations

import json
from pathlib import Path

from cli.main import main

LOG = str(Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "own_log.json")
EXPORT = str(Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "chatgpt_export.json")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_suggest_facts_prints_turn_kind_answer_and_probe(capsys):
    code, out, _ = run(capsys, "survival", "--from-transcript", LOG, "--suggest-facts")
    assert code == 0
    assert "12 turns · 6 fact(s) the user stated" in out
    rows = [line.split() for line in out.splitlines() if line[:4].strip().isdigit()]
    assert [r[:2] for r in rows] == [["1", "name"], ["2", "amount"], ["4", "amount"],
                                     ["6", "preference"], ["7", "date"], ["9", "number"]]  # fmt: skip
    assert "How much is my rent?" in out and "probe turns (default): 2, 5, 8, 10, 13" in out


def test_suggest_facts_json_is_a_facts_file_that_runs(capsys, tmp_path):
    code, out, _ = run(capsys, "survival", "--from-transcript", LOG, "--suggest-facts", "--json")
    data = json.loads(out)
    assert data["kind"] == "suggested_facts" and data["transcript"]["turns"] == 12
    assert [f["turn"] for f in data["facts"]] == [1, 2, 4, 6, 7, 9]
    kept = {"facts": [f for f in data["facts"] if f["key"] in ("name", "rent")]}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(kept))
    code, out, err = run(capsys, "survival", "--from-transcript", LOG, "--facts", str(facts),
                         "--payload-only", "--strategy", "window:k=3", "--json", "--quiet")  # fmt: skip
    assert code == 0, err
    rows = {(r["fact"], r["probe_turn"]): r["in_payload"] for r in json.loads(out)["rows"]}
    assert rows == {("name", 2): True, ("name", 5): False, ("name", 8): False,
                    ("name", 10): False, ("name", 13): False, ("rent", 5): True,
                    ("rent", 8): False, ("rent", 10): False, ("rent", 13): False}  # fmt: skip


def test_facts_auto_probes_the_log_in_place(capsys):
    code, out, err = run(capsys, "survival", "--from-transcript", LOG, "--facts", "auto",
                         "--payload-only", "--strategy", "full", "--json", "--quiet")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["config"]["filler_in_place"] is True
    assert (
        data["config"]["filler"][0]["user"]
        == "Hi, I'm Meera. I'm planning my finances for next year."
    )
    assert {r["fact"] for r in data["rows"]} == {"name", "monthly_salary", "rent", "prefers",
                                                 "date", "number"}  # fmt: skip
    assert all(r["in_payload"] for r in data["rows"])


def test_wrong_uses_exit_2_with_the_reason(capsys):
    for args, said in [
        (["--facts", "auto"], "add --from-transcript FILE"),
        (["--suggest-facts"], "add --from-transcript FILE"),
        (["--from-transcript", LOG, "--probe-turns", "30"], "has 12 turns"),
        (["--from-transcript", LOG, "--plant-turn", "2"], "drop --plant-turn"),
        (["--from-transcript", EXPORT, "--suggest-facts"], "several conversations"),
    ]:
        code, _, err = run(capsys, "survival", *args, "--payload-only")
        assert code == 2 and said in err, (args, err)
    code, out, _ = run(capsys, "survival", "--from-transcript", EXPORT, "--conversation", "1",
                       "--suggest-facts")  # fmt: skip
    assert code == 0 and "fact(s) the user stated" in out
