"""What every subcommand shares: exit codes, usage errors, and file arguments checked up front.

Results go to stdout; progress, plans and notes go to stderr. Files named on the command line
are checked before any long run starts (readable UTF-8 in, writable out), so a typo costs
seconds, not the run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

EXIT_OK = 0  # done
EXIT_FAILED = 1  # the run failed (e.g. the model could not start)
EXIT_USAGE = 2  # bad arguments or unusable files: the message says what to change
EXIT_INTERRUPTED = 130  # Ctrl-C: what was done so far is still printed and written

EXIT_CODES_HELP = """exit codes:
  0    done
  1    the run failed (the message says why, e.g. the model could not start)
  2    bad usage: a wrong argument, or a file that cannot be read or written
  130  interrupted with Ctrl-C: the results so far are still printed and written"""

STDOUT = "-"  # `--json` with no file: the JSON goes to stdout instead of the text tables


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Wraps prose to the terminal; keeps indented lines (examples, exit codes) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines: list[str] = []
        for line in text.splitlines():
            if line and not line[0].isspace() and len(line) > width:
                lines.extend(textwrap.wrap(line, width, initial_indent=indent,
                                           subsequent_indent=indent))  # fmt: skip
            else:
                lines.append(indent + line)
        return "\n".join(lines)


class UsageError(Exception):
    """Arguments that cannot run; reported with exit code 2."""


def read_text_arg(path: str, flag: str) -> str:
    """The text of a file named by `flag`, as UTF-8; UsageError says exactly what is wrong."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"cannot read {flag} {path}: it is a directory") from None
    except OSError as exc:
        raise UsageError(f"cannot read {flag} {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise UsageError(
            f"{flag} {path} is not UTF-8 text (byte 0x{bad} at offset {exc.start}): "
            "save it as UTF-8 and try again"
        ) from None


def check_writable(path: str | None, flag: str) -> None:
    """Fail now, not after the run, if `path` cannot be written (a new file is removed again)."""
    if not path or path == STDOUT:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"cannot write {flag} {path}: it is a directory")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"cannot write {flag} {path}: {folder} is a file, not a directory")
    existed = target.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None
    if not existed:
        os.unlink(target)


Default = TypeVar("Default", str, None)


def system_prompt_arg(args: argparse.Namespace, default: Default) -> str | Default:
    """The system prompt `--system TEXT` or `--system-file FILE` gives (one of them), else `default`."""
    if args.system is not None and args.system_file:
        raise UsageError("give --system or --system-file, not both")
    if args.system is not None:
        return str(args.system)
    if args.system_file:
        return read_text_arg(args.system_file, "--system-file")
    return default


def check_outputs(args: argparse.Namespace) -> None:
    """`--csv FILE` and `--json FILE` checked writable before the run starts."""
    check_writable(args.csv, "--csv")
    check_writable(args.json, "--json")


def report(
    args: argparse.Namespace, result: Any, data: Callable[[], Any], show: Callable[[], None]
) -> None:
    """`--json` alone: `data()` as JSON on stdout, else `show()` prints the text; then the
    result's CSV and JSON go to the `--csv` and `--json` files named."""
    if args.json == STDOUT:
        print_json(data())
    else:
        show()
    write_output(args.csv, result.to_csv())
    write_output(args.json, result.to_json())


def write_output(path: str | None, text: str) -> None:
    """Write `text` to `path` (nothing when no path, or `-`, which means stdout elsewhere)."""
    if not path or path == STDOUT:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    sys.stderr.write(f"wrote {path}\n")


def print_json(data: Any) -> None:
    """Machine-readable results on stdout: one JSON document, nothing else."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
