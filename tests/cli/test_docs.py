"""The docs cannot rot: docs/library.md's example runs as a doctest, and the figures, texts and
help output quoted in docs/ are compared with what the code has and prints."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

from scenarios import fincoach

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def quoted_block(page: str, marker: str) -> str:
    """The fenced block right after `<!-- marker -->` on a docs page."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = re.search(rf"<!-- {marker} -->\n```\w*\n(.*?)\n```", text, re.S)
    assert found, f"{page} has no block marked {marker}"
    return found.group(1)


def test_the_library_example_runs_and_prints_what_the_page_says():
    result = doctest.testfile(
        str(DOCS / "library.md"),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=True,
    )
    assert result.attempted >= 20, "the worked example lost its code"
    assert result.failed == 0, f"{result.failed} example(s) in docs/library.md failed"


def test_seed_page_quotes_the_fincoach_texts_exactly():
    assert quoted_block("seed-figures.md", "fincoach-system-prompt") == fincoach.SYSTEM_PROMPT
    turns = quoted_block("seed-figures.md", "fincoach-simulated-turns").split("\n")
    assert tuple(turns) == fincoach.SIMULATED_TURNS


def test_seed_page_table_is_what_memory_lab_simulate_prints():
    table = quoted_block("seed-figures.md", "seed-growth-table")
    done = subprocess.run(
        [sys.executable, "-m", "cli", "simulate"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert table in done.stdout
    rows = [line.split("|") for line in table.splitlines() if line.count("|") == 4][1:]
    prompts = [int(cells[3]) for cells in rows]
    assert tuple(prompts) == fincoach.SEED_PROMPTS
    assert f"{fincoach.SEED_TOTAL:,}" in table.splitlines()[-3]
    assert f"{fincoach.SEED_GROWTH:.2f}x" in table
    assert f"System prompt: {fincoach.SEED_SYSTEM_TOKENS} tokens" in table


def test_seed_004_defaults_quoted_on_the_page_are_the_registry_defaults():
    from engines.survival import DEFAULT_PROBE_TURNS
    from memory.registry import REGISTRY

    text = (DOCS / "seed-figures.md").read_text(encoding="utf-8")
    for name in ("summary_buffer", "hybrid"):
        defaults = REGISTRY[name].defaults()
        assert defaults["trigger"] == 0.8 and defaults["fold_to"] == 0.5
    assert "default **0.8** of the budget" in text and "(default **0.5**)" in text
    assert "N = " + ", ".join(map(str, DEFAULT_PROBE_TURNS)) in text


def test_cli_page_shows_the_real_command_list():
    shown = quoted_block("cli.md", "memory-lab-help")
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "cli", "--help"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0
    assert done.stdout.rstrip("\n") == shown
