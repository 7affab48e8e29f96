"""`--composition FILE.json` on simulate, survival, tune and sweep plan, and compositions saved
in the app's database reaching the CLI by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.compose import Block, Composition
from storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
MINE = Composition(
    "mine",
    (Block("pinned", first=1), Block("retrieved", top_k=2, budget=300), Block("recent", count=2)),
    title="Mine",
)


def run(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_LAB_DB_URL": f"sqlite:///{db}"}
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "mine.json"
    good.write_text(MINE.to_json(), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": 1, "name": "bad", "blocks": [{"kind": "recent", "count": -1}]}',
        encoding="utf-8",
    )
    return {"good": good, "bad": bad, "db": tmp_path / "app.sqlite3"}


def test_simulate_runs_a_composition_file_next_to_the_strategies(files):
    done = run(
        "simulate", "--composition", str(files["good"]), "--strategy", "window",
        "--turns", "4", "--json", db=files["db"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data["rows"]) == {"window (k=3)", "mine (recent_k=2)"}


def test_tune_and_survival_take_a_composition_alone(files):
    done = run(
        "tune", "--composition", str(files["good"]), "--probe-turns", "2,6", "--json",
        db=files["db"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert {t["strategy"] for t in data["trials"]} == {"mine"}
    assert data["winner"]["meets_target"]
    done = run(
        "survival", "--payload-only", "--composition", str(files["good"]),
        "--probe-turns", "2,6", "--json", "--quiet", db=files["db"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {r["strategy_name"] for r in json.loads(done.stdout)["rows"]} == {"mine"}


def test_a_bad_composition_file_is_exit_2_naming_the_file_and_the_field(files):
    done = run("simulate", "--composition", str(files["bad"]), db=files["db"])
    assert done.returncode == 2
    assert f"--composition {files['bad']}: composition blocks[0]" in done.stderr
    assert "count cannot be below 0, got -1" in done.stderr
    done = run("tune", "--composition", str(files["db"].parent / "missing.json"), db=files["db"])
    assert done.returncode == 2 and "cannot read --composition" in done.stderr


def test_a_composition_saved_in_the_app_database_is_a_strategy_by_name(files):
    Store(f"sqlite:///{files['db']}").compositions.save(MINE)
    done = run("simulate", "--strategy", "mine", "--turns", "3", "--json", db=files["db"])
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)["rows"]) == {"mine (recent_k=2)"}
    done = run("sweep", "plan", "--strategy", "mine", "--probe-turns", "2", db=files["db"])
    assert done.returncode == 0, done.stderr
    assert "probes" in done.stdout + done.stderr


def test_sweep_start_saves_the_file_composition_for_a_later_collect(files):
    import argparse

    from cli.compositions import prepare
    from memory.registry import REGISTRY, unregister_composition

    url = f"sqlite:///{files['db']}"
    args = argparse.Namespace(
        composition=[str(files["good"])], db=url, strategy=None, sweep_command="start"
    )
    try:
        prepare(args)
        assert args.strategy == ["mine"] and REGISTRY["mine"].composition == MINE
    finally:
        unregister_composition("mine")
    assert Store(url).compositions.list() == [MINE]
