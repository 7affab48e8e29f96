"""`python -m cli sweep`: plan, confirm, start, status, collect, failed, resubmit against the
fake batch endpoint (real SDKs), with the store in a temporary SQLite file."""

from __future__ import annotations

import io
import json

import pytest

from cli.main import main
from storage.store import SweepStore

GRID = ["--probe-turns", "2,6", "--strategy", "full", "--strategy", "window:k=2"]


@pytest.fixture
def env(fb, tmp_path, monkeypatch):
    server = fb
    monkeypatch.setenv("SWEEP_CLI_KEY", "cli-test-key-0123456789")
    db = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    endpoint = ["--provider", "anthropic", "--model", "claude-haiku-4-5", "--base-url",
                server.url, "--key-env", "SWEEP_CLI_KEY"]  # fmt: skip
    return server, db, endpoint


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_prints_the_estimate_and_submits_nothing(env, capsys):
    server, db, endpoint = env
    code, out, _ = run(capsys, "sweep", "--db", db, "plan", *endpoint, *GRID)
    assert code == 0
    assert "batch requests" in out and "Upkeep:" in out and "at batch prices" in out
    assert not server.batches and SweepStore(db).list_sweeps() == []


def test_start_asks_first_and_a_no_sends_nothing(env, capsys, monkeypatch):
    server, db, endpoint = env
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, out, _ = run(capsys, "sweep", "--db", db, "start", *endpoint, *GRID)
    assert code == 0 and "Nothing submitted" in out and not server.batches


def test_start_collect_failed_resubmit(env, capsys, monkeypatch, tmp_path):
    server, db, endpoint = env
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    server.polls_before_done = 1
    code, out, _ = run(capsys, "sweep", "--db", db, "start", *endpoint, *GRID, "--name", "t")
    assert code == 0 and len(server.batches) == 1
    sweep_id = out.split("sweep ", 1)[1].split(":")[0]

    code, out, _ = run(capsys, "sweep", "--db", db, "status")
    assert sweep_id in out and "[submitted]" in out
    code, out, _ = run(capsys, "sweep", "--db", db, "collect", sweep_id, "--base-url", server.url)
    assert code == 0 and "not finished yet" in out

    batch = next(iter(server.batches.values()))
    victim = batch.lines[0]["custom_id"]
    batch.outcome[victim] = "errored"  # the provider fails one line of this batch
    out_json = tmp_path / "result.json"
    code, out, _ = run(capsys, "sweep", "--db", db, "collect", sweep_id, "--base-url", server.url, "--wait",
                       "--interval", "0", "--json", str(out_json))  # fmt: skip
    assert code == 1 and "1 request(s) failed" in out
    assert "full" in out  # the survival table is printed
    assert any(r["error"] for r in json.loads(out_json.read_text())["rows"])

    code, out, _ = run(capsys, "sweep", "--db", db, "failed", sweep_id)
    assert victim in out and "errored" in out and "BadRequest" in out
    code, out, _ = run(capsys, "sweep", "--db", db, "resubmit", sweep_id, "--base-url", server.url)
    assert code == 0 and "(1 requests)" in out
    assert [ln["custom_id"] for ln in list(server.batches.values())[-1].lines] == [victim]
    code, out, _ = run(capsys, "sweep", "--db", db, "collect", sweep_id, "--base-url", server.url, "--wait",
                       "--interval", "0", "--json", str(out_json))  # fmt: skip
    assert code == 0 and not any(r["error"] for r in json.loads(out_json.read_text())["rows"])
    code, out, _ = run(capsys, "sweep", "--db", db, "status", sweep_id)
    assert "[collected]" in out and "collected" in out


def test_bad_input_exits_2_with_the_reason(env, capsys):
    _, db, endpoint = env
    code, _, err = run(capsys, "sweep", "--db", db, "plan", *endpoint, "--probe-turns", "x")
    assert code == 2 and "whole numbers" in err
    code, _, err = run(capsys, "sweep", "--db", db, "plan", "--provider", "embedded")
    assert code == 2 and "no batch API" in err
    code, _, err = run(capsys, "sweep", "--db", db, "collect", "nope")
    assert code == 2 and "no sweep 'nope'" in err
    code, _, err = run(capsys, "sweep", "--db", db, "plan", "--provider", "nowhere")
    assert code == 2 and "unknown preset" in err


def test_missing_key_is_a_clear_error_and_nothing_is_saved(env, capsys, monkeypatch):
    _, db, endpoint = env
    monkeypatch.delenv("SWEEP_CLI_KEY")
    code, _, err = run(capsys, "sweep", "--db", db, "start", *endpoint, *GRID, "--yes")
    assert code == 1 and "SWEEP_CLI_KEY" in err
    assert SweepStore(db).list_sweeps() == []


def test_exact_counts_come_from_the_counting_endpoint(env, capsys):
    server, db, endpoint = env
    code, out, _ = run(capsys, "sweep", "--db", db, "plan", *endpoint, *GRID, "--exact-counts")
    assert code == 0 and "exact: anthropic messages.count_tokens" in out
    counted = [r for r in server.requests if r.path == "/v1/messages/count_tokens"]
    assert counted and not server.batches  # counted, nothing submitted
    code, _, err = run(capsys, "sweep", "--db", db, "plan", *endpoint, *GRID, "--exact-counts",
                       "--upkeep", "interactive")  # fmt: skip
    assert code == 2 and "use start" in err


def test_two_models_one_sweep_rows_labelled_by_model(env, capsys, tmp_path):
    server, db, _ = env
    server.polls_before_done = 0
    endpoint = ["--provider", "anthropic", "--model", "claude-haiku-4-5", "--models",
                "claude-sonnet-4-5", "--base-url", server.url, "--key-env", "SWEEP_CLI_KEY"]  # fmt: skip
    code, out, _ = run(capsys, "sweep", "--db", db, "start", *endpoint, *GRID, "--yes")
    assert code == 0 and out.count("requests submitted") == 1
    assert "claude-haiku-4-5" in out and "claude-sonnet-4-5" in out  # an estimate for each
    assert "all 2 models:" in out
    sweep_id = out.split("sweep ", 1)[1].split(":")[0]
    assert len(server.batches) == 1  # one Anthropic batch holds both models
    models = {ln["body"]["model"] for b in server.batches.values() for ln in b.lines}
    assert models == {"claude-haiku-4-5", "claude-sonnet-4-5"}
    out_json = tmp_path / "both.json"
    code, out, _ = run(
        capsys,
        "sweep",
        "--db",
        db,
        "collect",
        sweep_id,
        "--base-url",
        server.url,
        "--json",
        str(out_json),
    )
    assert code == 0
    data = json.loads(out_json.read_text())
    labels = [s["label"] for s in data["config"]["strategies"]]
    assert labels == ["full · claude-haiku-4-5", "window (k=2) · claude-haiku-4-5",
                      "full · claude-sonnet-4-5", "window (k=2) · claude-sonnet-4-5"]  # fmt: skip


def test_recall_sweep_plan_start_collect(env, capsys, tmp_path):
    server, db, endpoint = env
    server.polls_before_done = 0
    recall = ["--recall", "--sessions", "6", "--strategy", "full", "--strategy", "window:k=10"]
    code, out, _ = run(capsys, "sweep", "--db", db, "plan", *endpoint, *recall)
    assert code == 0 and "batch requests" in out and not server.batches
    code, out, _ = run(capsys, "sweep", "--db", db, "start", *endpoint, *recall, "--yes")
    assert code == 0 and len(server.batches) == 1
    sweep_id = out.split("sweep ", 1)[1].split(":")[0]
    code, out, _ = run(capsys, "sweep", "--db", db, "status")
    assert f"{sweep_id}" in out and "recall" in out
    out_csv = tmp_path / "recall.csv"
    code, out, _ = run(
        capsys,
        "sweep",
        "--db",
        db,
        "collect",
        sweep_id,
        "--base-url",
        server.url,
        "--csv",
        str(out_csv),
    )
    assert code == 0 and "answered %" in out and "window (k=10)" in out
    full_line = next(line for line in out.splitlines() if line.startswith("full "))
    assert "100.0" in full_line  # the full buffer keeps every evidence turn
    assert "answered %" in out_csv.read_text().splitlines()[0]
    code, _, err = run(capsys, "sweep", "--db", db, "plan", *endpoint, "--recall",
                       "--conversation", str(tmp_path / "missing.json"))  # fmt: skip
    assert code == 2 and "--conversation" in err
