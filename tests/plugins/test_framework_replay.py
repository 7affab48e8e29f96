"""`memory-lab replay TRANSCRIPT --strategy L --json` prints every turn's request for every
framework lane L, at settings small enough that each one trims, flushes or summarises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli import main as cli_main
from memory.tokens import TokenCounter
from plugins.frameworks import LANES

pytest.importorskip("langchain_core")  # the framework extra; scripts/setup.sh installs it

COUNTER = TokenCounter("o200k_base")
SMALL = {  # each framework's own option names, at values a 14-turn chat passes
    "langgraph_trim": "max_tokens=300",
    "langchain_summarization": "trigger_tokens=300,keep_messages=4",
    "langmem_summarize": "max_tokens=300,max_tokens_before_summary=200,max_summary_tokens=80",
    "llamaindex_memory": "token_limit=400,token_flush_size=100",
    "sk_truncation": "target_count=4,threshold_count=2",
    "sk_summarization": "target_count=4,threshold_count=2",
    "langchain_window": "k=2",
    "langchain_token_buffer": "max_token_limit=200",
    "langchain_summary_buffer": "max_token_limit=200",
}


def test_small_settings_name_every_framework_lane() -> None:
    assert set(SMALL) == {lane.cls.name for lane in LANES}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_replay_prints_every_turns_request(name: str, tmp_path: Path, capsys) -> None:
    lines = []
    for i in range(1, 15):
        lines.append(f"User: turn {i}: my rent is ₹{20_000 + i:,} and my goal number is {i}.")
        lines.append(f"Assistant: Noted for turn {i}: " + "that is a sensible plan. " * 6)
    chat = tmp_path / "chat.txt"
    chat.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "replay.json"
    code = cli_main.main(["replay", str(chat), "--strategy", f"{name}:{SMALL[name]}",
                          "--json", str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["turns"]) == 14
    earlier_left = False
    for step in data["turns"]:
        (request,) = step["requests"].values()
        assert request["messages"][-1] == {"role": "user", "content": step["user"]}
        assert request["system"].startswith("You are")  # the transcript has none: FinCoach's
        earlier_left |= bool(request["dropped_turns"] or request["summarised_turns"])
    assert earlier_left, f"{name} kept every turn: the settings did not make it trim"


def test_llamaindex_lane_leaves_no_thread_errors_on_stderr() -> None:
    """LlamaIndex keeps its memory in an aiosqlite store; left open beside Semantic Kernel's
    own event loops, each store's worker thread printed 'Event loop is closed' tracebacks."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "cli", "survival", "--payload-only", "--probe-turns", "2,10,50",
         "--strategy", "llamaindex_memory", "--strategy", "langchain_summarization",
         "--strategy", "sk_summarization", "--quiet"],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Event loop is closed" not in done.stderr
