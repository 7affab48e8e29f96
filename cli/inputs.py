"""Files and texts named on the command line, checked before any long run starts: readable
UTF-8 text, transcripts, the system prompt, and the strategy files every command takes
(`--strategy-file`).

May touch: the files named by flags (read only); imports engines/ for transcripts.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from cli.outputs import STDOUT
from cli.parsing import UsageError, conversation_arg
from scenarios import filler as filler_mod
from scenarios.filler import TranscriptError

if TYPE_CHECKING:
    from engines.transcripts import Transcript


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


def load_transcript(path: str, flag: str) -> list[filler_mod.FillerTurn]:
    """A transcript file named by `flag`: read as UTF-8 first, so a bad file is exit 2."""
    text = read_text_arg(path, flag)
    try:
        return filler_mod.parse_transcript(text, name=Path(path).name)
    except TranscriptError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def add_transcript_arguments(
    p: argparse.ArgumentParser,
    *,
    file_help: str,
    json_help: str | None,
    flag: str | None = None,
    picks: bool = True,
) -> None:
    """The arguments every command reading a transcript (or dataset) file shares: the file
    (positional, or `flag` such as ``--from-transcript``), `--conversation N|ID` and
    `--skip-bad-lines` (unless `picks` is False: a dataset is read whole), and `--json`
    (unless `json_help` is None: the command has its own)."""
    if flag is None:
        p.add_argument("file", metavar="FILE", help=file_help)
    else:
        p.add_argument(flag, dest="file", metavar="FILE", help=file_help)
    if picks:
        p.add_argument(
            "--conversation",
            metavar="N|ID",
            help="the conversation to read from a file of many: its number (from 1) or id",
        )
        p.add_argument(
            "--skip-bad-lines",
            action="store_true",
            help="JSON lines: skip lines that are not valid JSON (each is noted) instead of "
            "stopping",
        )
    if json_help is not None:
        p.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE", help=json_help)


def source_path(path: str, flag: str = "") -> Path:
    """A file to read, or UsageError (a directory, no such file)."""
    p = Path(path)
    named = f"{flag} {path}" if flag else path
    if p.is_dir():
        raise UsageError(f"cannot read {named}: it is a directory")
    if not p.is_file():
        raise UsageError(f"cannot read {named}: no such file")
    return p


def read_transcript_arg(args: argparse.Namespace, flag: str = "") -> Transcript:
    """The one conversation `args.file` holds (or `--conversation` picks), as
    engines.transcripts parses it (imported here: the other commands start faster);
    UsageError says why not."""
    from engines import transcripts

    path: str = args.file
    p = source_path(path, flag)
    named = f"{flag} {path}" if flag else path
    try:
        return transcripts.parse(
            p,
            name=p.name,
            conversation=conversation_arg(getattr(args, "conversation", None)),
            keep_bad_lines=bool(getattr(args, "skip_bad_lines", False)),
        )
    except transcripts.TranscriptError as exc:
        raise UsageError(f"{named}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {named}: {exc.strerror or exc}") from None


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


STRATEGY_FILE_FLAG = "--strategy-file"


def take_strategy_files(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the files named by --strategy-file, the other arguments): the flag may stand anywhere,
    before or after the command, as `--strategy-file X` or `--strategy-file=X`."""
    files: list[str] = []
    rest: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        if item == STRATEGY_FILE_FLAG:
            if i + 1 >= len(items):
                raise UsageError(f"{STRATEGY_FILE_FLAG} needs PATH.py:NAME")
            files.append(items[i + 1])
            i += 2
            continue
        if item.startswith(STRATEGY_FILE_FLAG + "="):
            files.append(item.split("=", 1)[1])
        else:
            rest.append(item)
        i += 1
    return files, rest


def load_strategies(files: Sequence[str]) -> None:
    """Register the framework lanes, installed plugins and `files`; a bad file is a usage
    error naming the flag and what is wrong with the file."""
    from plugins.loading import StrategyLoadError, load_all, load_file

    load_all()
    for spec in files:
        try:
            load_file(spec)
        except (StrategyLoadError, ValueError) as exc:
            raise UsageError(f"{STRATEGY_FILE_FLAG} {spec}: {exc}") from None


def with_missing_framework(message: str) -> str:
    """A usage error about an unknown strategy that is a framework lane whose package is
    missing says so, with the command that adds it."""
    from plugins.loading import unavailable

    for name, why in unavailable().items():
        if f"unknown strategy {name!r}" in message:
            return f"{name} is a framework lane that {why}"
    return message
