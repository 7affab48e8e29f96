"""docs/cli.md documents the --json shapes of transcript, replay, recall and survival
--suggest-facts: each documented block's keys are the keys the real command prints (nested
objects and first list items)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_support import cli
from tests.cli.test_docs import quoted_block

FIX = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"


def keys(doc: object, real: object, where: str = "") -> None:
    if isinstance(doc, dict):
        assert isinstance(real, dict), where
        fixed = {k for k in doc if k not in ("reported",)}  # present only where a trace has it
        assert fixed <= set(real) <= set(doc) | {"reported"}, (
            f"{where}: {sorted(doc)} vs {sorted(real)}"
        )
        for k, v in doc.items():
            if k in real and k not in (
                "skipped",
                "by_category",
                "tokens_by_category",
                "apart",
                "recall_at",
                "requests",
                "totals",
            ):
                keys(v, real[k], f"{where}.{k}")
        for k in ("requests", "totals"):
            if k in doc and isinstance(real.get(k), dict) and real[k]:
                keys(next(iter(doc[k].values())), next(iter(real[k].values())), f"{where}.{k}.*")
    elif isinstance(doc, list) and doc and isinstance(doc[0], dict):
        assert isinstance(real, list) and real, where
        keys(doc[0], real[0], f"{where}[0]")


@pytest.mark.parametrize(
    ("marker", "args"),
    [
        ("transcript-list", ["transcript", str(FIX / "chatgpt_export.json"), "--list", "--json"]),
        (
            "transcript",
            ["transcript", str(FIX / "otel_spans.jsonl"), "--conversation", "conv-1", "--json"],
        ),
        (
            "survival-suggest",
            [
                "survival",
                "--from-transcript",
                str(FIX / "own_log.json"),
                "--suggest-facts",
                "--json",
            ],
        ),
        ("replay", ["replay", str(FIX / "langsmith_runs.json"), "--conversation", "1", "--json"]),
        (
            "recall",
            [
                "recall",
                "--dataset",
                "locomo",
                str(FIX / "locomo_sample.json"),
                "--strategy",
                "window:k=2",
                "--json",
            ],
        ),  # fmt: skip
    ],
)
def test_documented_json_shape_is_the_real_output(marker, args):
    documented = json.loads(quoted_block("cli.md", f"json-shape {marker}"))
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    keys(documented, json.loads(done.stdout), marker)
