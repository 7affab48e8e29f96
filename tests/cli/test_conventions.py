"""CLI conventions: JSON on stdout with progress only on stderr, a real bar only on a terminal,
files checked before a run, and Ctrl-C keeping the probes done so far."""

from __future__ import annotations

import csv
import fcntl
import json
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from cli.outputs import check_writable
from cli.parsing import UsageError
from tests.cli.cli_support import ROOT, cli

LONG_GRID = ("--probe-turns", "2,100,300,600,1000")  # a few seconds of payload-only work


def on_a_terminal(*args: str, timeout: float = 120) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (100 columns); returns (code, stdout, stderr)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read() if proc.stdout else b""
    code = proc.wait(timeout=timeout)
    os.close(leader)
    return code, out.decode(), seen.decode(errors="replace")


def test_survival_json_is_parseable_and_progress_stays_on_stderr():
    done = cli("survival", "--payload-only", "--json", "--probe-turns", "2,5,10")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # nothing but the JSON document on stdout
    assert data["mode"] == "payload-only" and data["cancelled"] is False
    assert len(data["rows"]) == 4 * 6 * 3  # FinCoach's four facts x six lanes x three N
    full = [r for r in data["rows"] if r["strategy"] == "full"]
    assert full and all(r["in_payload"] for r in full)
    assert "Plan: 4 facts" in done.stderr and "= 72 probes" in done.stderr
    assert "\r" not in done.stderr and "probes:" not in done.stderr  # no bar when piped


def test_simulate_json_on_stdout_has_seed_000s_totals():
    done = cli("simulate", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["matches_seed"] is True and data["system_tokens"] == 132
    assert data["totals"]["full"]["prompt_tokens"] == 5611
    assert round(data["totals"]["full"]["growth"], 2) == 6.55
    assert [r["prompt_tokens"] for r in data["rows"]["full"]][::9] == [149, 976]


def test_a_terminal_gets_a_progress_bar_on_stderr_and_quiet_hides_it():
    code, out, err = on_a_terminal("survival", "--payload-only", "--probe-turns", "2,5,10")
    assert code == 0
    assert "probes: 100%" in err and "72/72" in err
    assert "Facts in the payload at turn N:" in out and "probes:" not in out
    code, out, err = on_a_terminal("survival", "--payload-only", "--probe-turns", "2,5", "--json")
    assert code == 0 and "probes: 100%" in err
    assert len(json.loads(out)["rows"]) == 48  # the bar never reaches stdout
    code, out, err = on_a_terminal(
        "survival", "--payload-only", "--probe-turns", "2,5,10", "--quiet"
    )
    assert code == 0 and "Facts in the payload" in out
    assert "probes:" not in err and "Plan: " in err  # notes stay; the bar goes


@pytest.mark.parametrize(
    ("flag", "command"),
    [
        ("--user-turns", ["simulate"]),
        ("--filler", ["survival", "--payload-only"]),
        ("--facts", ["survival", "--payload-only"]),
    ],
)
def test_a_file_that_is_not_utf8_is_named_with_exit_2(tmp_path, flag, command):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Café olé, tout va bien?\n".encode("latin-1"))
    done = cli(*command, flag, str(bad))
    assert done.returncode == 2, done.stderr
    assert f"{flag} {bad} is not UTF-8 text (byte 0xe9 at offset 3)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("flag", ["--csv", "--json"])
def test_unwritable_outputs_fail_before_the_run(tmp_path, flag):
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x", encoding="utf-8")
    for target, reason in [
        (a_file / "out.csv", f"{a_file} is a file, not a directory"),
        (tmp_path, "a directory"),
    ]:
        done = cli("survival", "--payload-only", *LONG_GRID, flag, str(target))
        assert done.returncode == 2, done.stderr
        assert f"cannot write {flag} {target}: " in done.stderr and reason in done.stderr
        assert "Plan:" not in done.stderr  # refused before planning, let alone running
        sim = cli("simulate", flag, str(target))
        assert sim.returncode == 2 and f"cannot write {flag} {target}" in sim.stderr
    assert a_file.read_text(encoding="utf-8") == "x"


def test_the_early_write_check_leaves_no_file_and_changes_none(tmp_path):
    new, old = tmp_path / "sub" / "rows.csv", tmp_path / "old.csv"
    old.write_text("kept", encoding="utf-8")
    check_writable(str(new), "--csv")
    check_writable(str(old), "--csv")
    assert not new.exists() and old.read_text(encoding="utf-8") == "kept"
    with pytest.raises(UsageError, match="cannot write --json .*: it is a directory"):
        check_writable(str(tmp_path), "--json")


def test_ctrl_c_stops_cleanly_and_keeps_the_probes_done(tmp_path):
    rows_csv = tmp_path / "rows.csv"
    leader, follower = pty.openpty()  # stderr on a terminal: the bar says when probes are done
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "survival", "--payload-only", *LONG_GRID,
         "--csv", str(rows_csv)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=follower, text=True,
    )  # fmt: skip
    os.close(follower)
    seen, sent = "", False
    while True:
        try:
            chunk = os.read(leader, 65536).decode(errors="replace")
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        done = [int(n) for n in re.findall(r"\| *(\d+)/120", seen)]
        if not sent and done and max(done) >= 1:  # some probes are done, most are not
            proc.send_signal(signal.SIGINT)
            sent = True
    out, _ = proc.communicate(timeout=120)
    os.close(leader)
    assert sent, "the run ended before it could be interrupted"
    assert proc.returncode == 130, seen
    assert "interrupted: finishing the calls in flight" in seen
    kept = list(csv.DictReader(rows_csv.open(encoding="utf-8")))
    assert 0 < len(kept) < 4 * 6 * 5
    assert f"cancelled: {len(kept)} of 120 probes done" in seen
    assert "Facts in the payload at turn N:" in out  # what was done is still printed
    assert "Traceback" not in seen


def test_app_command_uses_the_offline_flags_and_finds_the_app():
    done = cli("app", "--port", "8765", "--print-command", "--", "--logger.level", "error")
    assert done.returncode == 0, done.stderr
    argv = done.stdout.split()
    assert argv[1:4] == ["-m", "streamlit", "run"]
    assert Path(argv[4]).name == "app.py" and Path(argv[4]).is_file()
    assert (Path(argv[4]).parent / "pages").is_dir()
    flags = dict(zip(argv[5::2], argv[6::2], strict=False))
    assert flags["--server.address"] == "127.0.0.1" and flags["--server.port"] == "8765"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.headless"] == "true"
    assert argv[-2:] == ["--logger.level", "error"]


def test_app_command_serves_the_app_on_loopback():
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "app", "--port", str(port)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline, health = time.monotonic() + 90, ""
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2) as reply:  # noqa: S310 - loopback
                    health = reply.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        assert health == "ok", proc.stderr.read() if proc.poll() is not None else "no answer"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_simulate_shows_a_bar_per_strategy_on_a_terminal_and_the_same_numbers():
    args = ("simulate", "--turns", "40", "--strategy", "full", "--strategy", "summary_buffer",
            "--strategy", "hybrid", "--json")  # fmt: skip
    code, out, err = on_a_terminal(*args)
    assert code == 0, err
    assert "strategies: 100%" in err and "3/3" in err
    piped = cli(*args)
    assert piped.returncode == 0 and "strategies:" not in piped.stderr
    assert json.loads(out) == json.loads(piped.stdout)  # one at a time == all at once
