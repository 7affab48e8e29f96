"""`memory-lab transcript` and `memory-lab replay` on real fixture files, in process."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"
EXPORT = str(FIXTURES / "chatgpt_export.json")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_list_prints_the_pick_list_and_json(capsys):
    code, out, _ = run(capsys, "transcript", EXPORT, "--list")
    assert code == 0
    assert "3 conversation(s)" in out and "Trip to Goa" in out and "c3-edit" in out
    code, out, _ = run(capsys, "transcript", EXPORT, "--list", "--json")
    data = json.loads(out)
    assert data["count"] == 3
    assert [c["title"] for c in data["conversations"]] == [
        "Budget plan",
        "Trip to Goa",
        "Edited prompt",
    ]
    code, out, _ = run(capsys, "transcript", EXPORT, "--list", "--search", "GOA", "--json")
    assert [c["id"] for c in json.loads(out)["conversations"]] == ["c2-goa"]


def test_a_many_conversation_file_needs_a_pick(capsys):
    code, _, err = run(capsys, "transcript", EXPORT)
    assert code == 2 and "several conversations" in err
    code, out, _ = run(capsys, "transcript", EXPORT, "--conversation", "c2-goa", "--json")
    data = json.loads(out)
    assert code == 0 and data["title"] == "Trip to Goa"
    assert data["turns"][0]["user"] == "Plan a four-day trip to Goa in December."
    code, out, _ = run(capsys, "transcript", EXPORT, "--conversation", "1")
    assert "Budget plan" in out and "[image: file-service://file-abc, 800x600]" in out
    assert "2 tool nodes" in out
    code, _, err = run(capsys, "transcript", EXPORT, "--conversation", "9")
    assert code == 2 and "no conversation 9" in err


def test_bad_files_exit_2_naming_the_place(capsys, tmp_path):
    bad = tmp_path / "runs.jsonl"
    lines = (FIXTURES / "openai_chat.jsonl").read_text().splitlines()
    bad.write_text(lines[0] + "\n" + lines[1][:30] + "\n" + lines[3] + "\n")
    code, _, err = run(capsys, "transcript", str(bad), "--list")
    assert code == 2 and "line 2" in err and "--skip-bad-lines" in err
    code, out, _ = run(capsys, "transcript", str(bad), "--list", "--skip-bad-lines", "--json")
    assert code == 0 and json.loads(out)["count"] == 2
    code, _, err = run(capsys, "transcript", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err


def test_replay_prints_every_request_per_strategy(capsys):
    code, out, _ = run(capsys, "replay", str(FIXTURES / "langsmith_runs.json"), "--conversation", "1",
                       "--strategy", "full", "--strategy", "window:k=1", "--json")  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["strategies"] == ["full", "window (k=1)"]
    assert [t["user"] for t in data["turns"]] == ["I'm Ravi.", "I earn ₹90,000 a month."]
    second = data["turns"][1]["requests"]["full"]
    assert second["messages"] == [
        {"role": "user", "content": "I'm Ravi."},
        {"role": "assistant", "content": "Hi Ravi!"},
        {"role": "user", "content": "I earn ₹90,000 a month."},
    ]
    assert second["system"] == "You are FinCoach." and second["kept_turns"] == [1]
    assert data["turns"][1]["reported"] == {"input": 41, "output": 9}
    assert data["totals"]["full"]["prompt_tokens"] == sum(
        t["requests"]["full"]["prompt_tokens"] for t in data["turns"]
    )
    code, out, _ = run(capsys, "replay", str(FIXTURES / "langchain_messages.json"), "--turn", "2")
    assert code == 0 and "== full, turn 2" in out and "[user] Thanks!" in out


def test_replay_text_table_shows_system_messages_tokens_kept_dropped_summarised_retrieved(
    capsys, tmp_path
):
    """The issue's list for the text table: system text (its tokens), messages, token counts,
    and what was kept, dropped, summarised and retrieved; window k=1 drops turn 1 by turn 3."""
    chat = tmp_path / "chat.txt"
    chat.write_text("System: You are FinCoach.\nUser: I'm Ravi.\nAssistant: Hi Ravi!\n"
                    "User: I earn 90,000.\nAssistant: Noted.\nUser: And rent?\n")  # fmt: skip
    code, out, _ = run(capsys, "replay", str(chat), "--strategy", "window:k=1")
    assert code == 0
    assert re.search(r"System prompt: \d+ tokens", out)
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("turn"))
    header = re.split(r"\s{2,}", lines[at].strip())
    assert header == ["turn", "prompt", "sent so far", "msgs", "kept", "dropped", "summarised",
                      "retrieved", "upkeep"]  # fmt: skip
    last = dict(zip(header, re.split(r"\s{2,}", lines[-1].strip()), strict=True))
    assert last["turn"] == "3" and last["kept"] == "2" and last["dropped"] == "1", last
