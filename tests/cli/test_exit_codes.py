"""Files are written whole or not at all, and every unusable input or output is exit 2 with
a message naming the flag (issue 24 class 10). The output walk goes over every command and
sweep step with a file flag (`--csv FILE`, `--json FILE`): a new one must get a case here."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli import main as cli_main
from cli import outputs
from cli.parsing import EXIT_OK, EXIT_USAGE
from tests.cli.cli_support import ROOT
from tests.cli.test_secrets_everywhere import command_paths

FILE_FLAGS = ("--csv", "--json")
FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures"


def file_flags(parser) -> list[str]:
    return [f for a in parser._actions for f in a.option_strings if f in FILE_FLAGS]


def _sweep_id(tmp: Path, fb, capsys) -> tuple[str, str]:
    db = f"sqlite:///{tmp / 'sweeps.sqlite3'}"
    code = cli_main.main(["sweep", "--db", db, "start", "--provider", "anthropic", "--model",
                          "claude-haiku-4-5", "--base-url", fb.url, "--key-env", "EXIT_TEST_KEY",
                          "--probe-turns", "2", "--strategy", "full", "--yes"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0, out
    return db, out.split("sweep ", 1)[1].split(":")[0]


# argv for each command path with file outputs, given (tmp dir, fb, capsys)
CASES: dict[tuple[str, ...], Callable[..., list[str]]] = {
    ("simulate",): lambda tmp, fb, capsys: ["simulate", "--turns", "3"],
    ("survival",): lambda tmp, fb, capsys: [
        "survival",
        "--payload-only",
        "--probe-turns",
        "2",
        "--strategy",
        "full",
        "--quiet",
    ],  # fmt: skip
    ("tune",): lambda tmp, fb, capsys: [
        "tune",
        "--probe-turns",
        "2",
        "--strategy",
        "window",
        "--time-limit",
        "3",
        "--quiet",
    ],  # fmt: skip
    ("transcript",): lambda tmp, fb, capsys: [
        "transcript",
        str(FIXTURES / "chatgpt_export.json"),
        "--list",
    ],  # fmt: skip
    ("replay",): lambda tmp, fb, capsys: [
        "replay",
        str(FIXTURES / "langsmith_runs.json"),
        "--conversation",
        "1",
    ],  # fmt: skip
    ("recall",): lambda tmp, fb, capsys: [
        "recall",
        "--dataset",
        "locomo",
        str(FIXTURES / "locomo_sample.json"),
    ],  # fmt: skip
    ("check-strategy",): lambda tmp, fb, capsys: ["check-strategy", "window", "--examples", "3"],
    ("sweep", "collect"): lambda tmp, fb, capsys: (
        lambda db_id: [
            "sweep",
            "--db",
            db_id[0],
            "collect",
            db_id[1],
            "--base-url",
            fb.url,
            "--wait",
            "--interval",
            "0.01",
        ]  # fmt: skip
    )(_sweep_id(tmp, fb, capsys)),
}


def test_every_command_with_a_file_output_has_a_case():
    with_files = {path for path, parser in command_paths() if file_flags(parser)}
    assert with_files and with_files <= set(CASES), sorted(with_files - set(CASES))


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("EXIT_TEST_KEY", "exit-test-key-0123456789")


def run(capsys, argv: list[str]) -> tuple[int, str]:
    code = cli_main.main(argv)
    _, err = capsys.readouterr()
    return code, err


@pytest.mark.parametrize("path", sorted(CASES))
def test_every_output_flag_is_checked_first_and_written_whole(path, fb, capsys, tmp_path, key,
                                                              monkeypatch):  # fmt: skip
    flags = file_flags(dict(command_paths())[path])
    for n, flag in enumerate(flags):
        tmp = tmp_path / f"{n}"
        tmp.mkdir()
        base = CASES[path](tmp, fb, capsys)
        polls = len(fb.requests)
        # a directory where the file should go: exit 2 naming the flag, nothing polled or run
        code, err = run(capsys, [*base, flag, str(tmp)])
        assert code == EXIT_USAGE and f"cannot write {flag} {tmp}: it is a directory" in err
        assert len(fb.requests) == polls, "the sweep was polled before its outputs were checked"
        # a write that fails (disk full): exit 2, the earlier file kept whole
        target = tmp / f"result{n}"
        target.write_text("the earlier good result\n", encoding="utf-8")

        def full_disk(fd: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        with monkeypatch.context() as m:
            m.setattr(outputs.os, "fsync", full_disk)
            code, err = run(capsys, [*base, flag, str(target)])
        assert code == EXIT_USAGE, err
        assert f"cannot write {flag} {target}: No space left on device" in err
        assert target.read_text(encoding="utf-8") == "the earlier good result\n"
        assert sorted(p.name for p in tmp.iterdir() if p.name.startswith(".")) == []
        # and a good write replaces it whole
        code, err = run(capsys, [*base, flag, str(target)])
        assert code == EXIT_OK, err
        assert target.read_text(encoding="utf-8") != "the earlier good result\n"
    if len(flags) > 1:  # one file named by two flags: refused before the run
        tmp = tmp_path / "same"
        tmp.mkdir()
        same = tmp / "both.out"
        base = CASES[path](tmp, fb, capsys)
        polls = len(fb.requests)
        code, err = run(capsys, [*base, *(x for f in flags for x in (f, str(same)))])
        assert code == EXIT_USAGE and "--csv and --json both name" in err
        assert not same.exists() and len(fb.requests) == polls


def test_a_full_disk_keeps_the_earlier_result_and_exits_2(tmp_path):
    """A real short write (the file-size limit as a full disk): the old code truncated the
    good file and exited 1."""
    out = tmp_path / "growth.json"
    out.write_text('{"good": "earlier result"}\n', encoding="utf-8")

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    done = subprocess.run(
        [sys.executable, "-m", "cli", "simulate", "--turns", "300", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=small_disk,
        env={**os.environ, "MEMORY_LAB_DB_URL": f"sqlite:///{tmp_path / 'none.sqlite3'}"},
    )  # fmt: skip
    assert done.returncode == EXIT_USAGE, done.stderr
    assert f"cannot write --json {out}" in done.stderr
    assert out.read_text(encoding="utf-8") == '{"good": "earlier result"}\n'


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["simulate", "--price", "x=nan/nan"], "--price 'x=nan/nan': prices are finite numbers"),
        (["simulate", "--price", "x=1/inf"], "--price 'x=1/inf': prices are finite numbers"),
        (["app", "--port", "99999", "--print-command"], "argument --port: expected 65535"),
        (["app", "--port", "0", "--print-command"], "argument --port: expected 1 or more"),
    ],
)
def test_unusable_values_are_exit_2_naming_the_flag(argv, message, capsys):
    try:
        code = cli_main.main(argv)
    except SystemExit as exc:  # argparse's own refusals
        code = int(exc.code or 0)
    assert code == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_app_refuses_a_port_variable_out_of_range(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "70000")
    assert cli_main.main(["app", "--print-command"]) == EXIT_USAGE
    assert "PORT='70000' is not a port number" in capsys.readouterr().err


def test_sweep_failed_with_an_unknown_id_is_exit_2(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'sweeps.sqlite3'}"
    assert cli_main.main(["sweep", "--db", db, "failed", "NOSUCHID"]) == EXIT_USAGE
    assert "no sweep 'NOSUCHID'" in capsys.readouterr().err


def test_a_damaged_sweep_database_is_exit_2_naming_db(tmp_path, capsys):
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"this is not a database" * 100)
    code = cli_main.main(["sweep", "--db", f"sqlite:///{damaged}", "status"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert f"cannot open --db sqlite:///{damaged}: file is not a database" in err
    assert "sqlalche.me" not in err and "Background on this error" not in err
