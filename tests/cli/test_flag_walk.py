"""The CLI's exit contract for every flag (issue 36 class 5): a bad value for any option of
any command is exit 2, with a message that names the flag.

The walk is built from the parser itself (`command_paths`), so a flag added later is walked
without editing this file: every option that takes a value gets an empty and a blank value;
one with a number type gets malformed, negative, non-finite and huge numbers; one with
choices gets a value outside them; the few kinds a type cannot tell (lists, providers, URLs,
input files) get theirs from the tables below. Each case runs with the embedded model and
the network shut, so a value wrongly accepted fails fast instead of running the command.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from cli import main as cli_main
from cli.parsing import EXIT_USAGE
from providers import embedded
from tests.cli.test_exit_codes import FIXTURES
from tests.cli.test_secrets_everywhere import command_paths

CLOSED = "http://127.0.0.1:9/v1"  # nothing listens: a request sent by mistake fails at once
SWEEP_PLAN = ["--provider", "anthropic", "--model", "claude-haiku-4-5", "--probe-turns", "2",
              "--strategy", "full"]  # fmt: skip
# the smallest valid command line of each command path (the walked flag replaces its own)
BASE: dict[tuple[str, ...], list[str]] = {
    ("simulate",): ["--turns", "2"],
    ("survival",): ["--payload-only", "--probe-turns", "2", "--strategy", "full", "--quiet"],
    ("app",): ["--print-command"],
    ("sweep", "plan"): SWEEP_PLAN,
    ("sweep", "start"): [*SWEEP_PLAN, "--base-url", CLOSED, "--key-env", "FLAG_WALK_KEY", "--yes"],
    ("sweep", "status"): ["NOSUCHID"],
    ("sweep", "collect"): ["NOSUCHID", "--base-url", CLOSED],
    ("sweep", "failed"): ["NOSUCHID"],
    ("sweep", "resubmit"): ["NOSUCHID", "--base-url", CLOSED],
    ("tune",): ["--probe-turns", "2", "--strategy", "window", "--time-limit", "1", "--quiet"],
    ("transcript",): [str(FIXTURES / "chatgpt_export.json"), "--list"],
    ("replay",): [str(FIXTURES / "langsmith_runs.json"), "--conversation", "1"],
    ("check-strategy",): ["window", "--examples", "2"],
    ("recall",): [str(FIXTURES / "locomo_sample.json"), "--dataset", "locomo"],
}
NUMBERS = ("x", "-1", "nan", "inf", "1e999", "9" * 30)
LISTS = {"--probe-turns", "--strategy", "--models", "--id", "--composition", "--at", "--param"}
NAMES = {"--strategy": "bogus", "--composition": "bogus", "--probe-turns": "bogus"}
MISSING = "no-such-folder/file.txt"  # in the test's own folder (the cases run there)
EXTRA: dict[str, tuple[str, ...]] = {
    "--provider": ("bogus",),
    "--base-url": ("not a url", "ftp://host/v1"),
    "--key-env": ("NO SUCH VARIABLE",),
    "--address": ("not an address!",),
    **{
        flag: (MISSING,)
        for flag in (
            "--user-turns",
            "--facts",
            "--system-file",
            "--filler",
            "--transcript",
            "--questions",
            "--longmem",
            "--from-transcript",
        )
    },  # fmt: skip
}


def value_flags(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.option_strings and action.nargs != 0 and action.dest != "help":
            yield action


def numeric(action: argparse.Action) -> bool:
    """Whether the option takes a number: its type makes one of "7"."""
    try:
        value = action.type("7") if callable(action.type) else None
    except (TypeError, ValueError, argparse.ArgumentTypeError):
        return False
    return isinstance(value, int | float) and not isinstance(value, bool)


def bad_values(action: argparse.Action) -> tuple[str, ...]:
    flag = action.option_strings[-1]
    values: list[str] = []
    if not getattr(action, "empty_means", None):  # the flag says what empty means
        values += ["", "   "]
    if numeric(action):
        values += NUMBERS
    if action.choices:
        values.append("bogus")
    if flag in LISTS:
        values.append(",,,")
    if flag in NAMES:
        values.append(NAMES[flag])
    values += EXTRA.get(flag, ())
    return tuple(dict.fromkeys(values))


def without(argv: list[str], flag: str) -> list[str]:
    """`argv` without `flag` and its value."""
    out, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item == flag:
            skip = True
        else:
            out.append(item)
    return out


def cases() -> Iterator[tuple[tuple[str, ...], str, str]]:
    for path, parser in command_paths():
        for action in value_flags(parser):
            for value in bad_values(action):
                yield path, action.option_strings[-1], value


def argv_for(path: tuple[str, ...], flag: str, value: str, db: str) -> list[str]:
    head = [path[0], "--db", db, *path[1:]] if path[0] == "sweep" else list(path)
    return [*head, *without(BASE[path], flag), flag, value]


def test_every_command_path_has_a_base_line():
    assert {path for path, _ in command_paths()} == set(BASE)


def test_the_walk_covers_every_value_flag():
    walked = {(path, flag) for path, flag, _ in cases()}
    every = {(path, a.option_strings[-1]) for path, p in command_paths() for a in value_flags(p)}
    free = {  # any text will do, empty too
        (path, a.option_strings[-1])
        for path, p in command_paths()
        for a in value_flags(p)
        if getattr(a, "empty_means", None)
    }
    assert walked | free == every and len(every) > 100


@pytest.fixture
def shut(monkeypatch, tmp_path):
    def no_model(*args, **kwargs):
        raise RuntimeError("the flag walk never starts the embedded model")

    monkeypatch.setattr(embedded, "start", no_model)
    monkeypatch.setenv("MEMORY_LAB_DB_URL", f"sqlite:///{tmp_path / 'walk.sqlite3'}")
    monkeypatch.setenv("FLAG_WALK_KEY", "flag-walk-key-123456")
    monkeypatch.chdir(tmp_path)
    return f"sqlite:///{tmp_path / 'sweeps.sqlite3'}"


def test_every_bad_value_of_every_flag_is_exit_2_naming_the_flag(shut, capsys):
    wrong: list[str] = []
    for path, flag, value in cases():
        argv = argv_for(path, flag, value, shut)
        try:
            code = cli_main.main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
        err = capsys.readouterr().err
        if code != EXIT_USAGE or flag not in err:
            last = err.strip().splitlines()[-1:] or [""]
            wrong.append(f"{' '.join(path)} {flag} {value!r}: exit {code}, {last[0][:120]}")
    assert not wrong, f"{len(wrong)} bad values not refused:\n" + "\n".join(wrong)
