"""What every command shares: exit codes, the argument types and parsers, file arguments
checked up front, and the one way results leave the process.

Results go to stdout; progress, plans and notes go to stderr. Files named on the command line
are checked before any long run starts (readable UTF-8 in, writable out, no two outputs on one
path). Every result file is written by `write_output` (masked, then written whole to a
temporary file and renamed over the target), and every printed result by `print_json` or the
masked streams `cli.main` installs, so no secret the run knew reaches a file or a terminal.

May touch: the files named by flags, stdout and stderr; imports engines/ and memory/ for the
argument parsers shared by several commands.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

from memory.choices import StrategyChoice, parse_choice
from memory.errors import MemoryLabError
from providers.catalog import PRESETS
from providers.redaction import mask
from providers.settings import check_base_url
from scenarios import filler as filler_mod
from scenarios.filler import TranscriptError

if TYPE_CHECKING:
    from engines.transcripts import Transcript

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
OUTPUT_FLAGS = ("csv", "json")  # the result-file flags a command may have (`--csv`, `--json`)


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


MAX_NUMBER = 2**53  # no count, seed or time limit of this CLI is larger


class Parser(argparse.ArgumentParser):
    """argparse with this command's exit code for bad usage (2) and a one-line reason, and
    one rule for every option's value, whoever adds the option: not empty or blank (unless
    the option says what empty means, `empty_means`), and a number finite, 0 or more and at
    most MAX_NUMBER. argparse names the option in the message."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        for action in self._actions:
            _check_values(action)
        return super().parse_known_args(args, namespace)


def empty_means(action: argparse.Action, meaning: str) -> argparse.Action:
    """Let `action`'s option take an empty value, which means `meaning` (its help says so)."""
    action.empty_means = meaning  # type: ignore[attr-defined]
    return action


def _check_values(action: argparse.Action) -> None:
    """Wrap `action`'s type in the Parser's value rule (once)."""
    if not action.option_strings or action.nargs == 0 or getattr(action, "values_checked", False):
        return
    convert = action.type

    def parse(text: str) -> Any:
        if not text.strip() and text != action.default and not getattr(action, "empty_means", 0):
            raise argparse.ArgumentTypeError(f"a value is needed, got {text!r}")
        value = convert(text) if callable(convert) else text
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not (math.isfinite(value) and 0 <= value <= MAX_NUMBER)
        ):
            raise argparse.ArgumentTypeError(
                f"expected a number from 0 to {MAX_NUMBER}, got {text!r}"
            )
        return value

    parse.__name__ = getattr(convert, "__name__", "str")  # argparse's "invalid int value"
    action.type = parse
    action.values_checked = True  # type: ignore[attr-defined]


class Subcommands(Protocol):
    """What `ArgumentParser.add_subparsers()` returns, as the commands use it."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


class UsageError(Exception):
    """Arguments that cannot run; reported with exit code 2."""


# --- argument types ----------------------------------------------------------------------


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected {low} or more, got {value}")
        return value

    return parse


positive = at_least(1)


def base_url(text: str) -> str:
    """An argparse type: a base URL as every entry accepts it (http(s) with a host)."""
    try:
        check_base_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def preset_name(text: str) -> str:
    """An argparse type: a provider preset of the catalog."""
    if text not in PRESETS:
        raise argparse.ArgumentTypeError(
            f"unknown provider {text!r}; choose one of {', '.join(PRESETS)}"
        )
    return text


def variable_name(text: str) -> str:
    """An argparse type: the name of an environment variable (letters, digits, _)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an environment variable's name")
    return text


def host_address(text: str) -> str:
    """An argparse type: an address to listen on (a host name, an IPv4 or IPv6 address)."""
    if not re.fullmatch(r"[A-Za-z0-9.\-]+|\[?[0-9A-Fa-f:.]+\]?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a host name or an IP address")
    return text


def comma_list(text: str) -> str:
    """An argparse type: comma-separated names, none of them empty ("a,b", not "a,,b")."""
    if any(not part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty item: give names separated by commas"
        )
    return text


non_negative = at_least(0)


def in_range(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`."""
    floor = at_least(low)

    def parse(text: str) -> int:
        value = floor(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"expected {high} or less, got {value}")
        return value

    return parse


def seconds(text: str) -> float:
    """An argparse type: a time limit, a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"the time limit must be above 0 s, got {text!r}")
    return value


def strategies(
    values: Sequence[str] | None, default: Sequence[StrategyChoice]
) -> tuple[StrategyChoice, ...]:
    """`--strategy` values ('full', 'window:k=3', 'full;window:k=3') as choices, else `default`."""
    if not values:
        return tuple(default)
    out: list[StrategyChoice] = []
    for value in values:
        for part in _split_strategies(value):
            try:
                out.append(parse_choice(part))
            except MemoryLabError as exc:
                raise UsageError(str(exc)) from None
    return tuple(out)


def _split_strategies(value: str) -> list[str]:
    """'full;window:k=3' or 'full' -> parts ('full,window' also works when no params);
    UsageError naming --strategy for an empty part ('full;;window', ',,,')."""
    sep = ";" if ";" in value else "," if ":" not in value and "," in value else None
    parts = value.split(sep) if sep else [value]
    if any(not p.strip() for p in parts):
        raise UsageError(f"--strategy {value!r} has an empty name: give names like full,window")
    return parts


# --- input files -------------------------------------------------------------------------


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


# --- a transcript named on the command line (transcript, replay, recall, survival) --------


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


def conversation_arg(value: str | None) -> int | str | None:
    """`--conversation 3` is the third; anything else is an id."""
    if value is None:
        return None
    return int(value) if value.isdigit() else value


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


def write_json(path: str, data: Any) -> None:
    """`--json`: on stdout, or the whole file written at once."""
    if path == STDOUT:
        print_json(data)
        return
    write_output(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n", "--json")


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


# --- output files ------------------------------------------------------------------------


def check_writable(path: str | None, flag: str) -> None:
    """Fail now, not after the run, if `path` cannot be written (nothing is created)."""
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
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"cannot write {flag} {path}: permission denied")
    if not os.access(folder, os.W_OK | os.X_OK):  # the temporary file is made beside it
        raise UsageError(f"cannot write {flag} {path}: {folder} is not writable")


def check_outputs(args: argparse.Namespace) -> None:
    """Every result-file flag of the command (`--csv FILE`, `--json FILE`) checked writable,
    and no two of them naming the same file, before the run starts."""
    named: dict[Path, str] = {}
    for flag in OUTPUT_FLAGS:
        path = getattr(args, flag, None)
        if not path or path == STDOUT:
            continue
        check_writable(path, f"--{flag}")
        key = Path(path).resolve()
        if key in named:
            raise UsageError(
                f"--{named[key]} and --{flag} both name {path}: one file cannot hold both"
            )
        named[key] = flag


class Writable(Protocol):
    """A result that writes itself as CSV and JSON (simulation, survival, tune)."""

    def to_csv(self) -> str: ...

    def to_json(self) -> str: ...


def report(
    args: argparse.Namespace,
    result: Writable,
    data: Callable[[], object],
    show: Callable[[], None],
) -> None:
    """`--json` alone: `data()` as JSON on stdout, else `show()` prints the text; then the
    result's CSV and JSON go to the `--csv` and `--json` files named."""
    if args.json == STDOUT:
        print_json(data())
    else:
        show()
    if getattr(args, "csv", None):
        write_output(args.csv, result.to_csv(), "--csv")
    write_output(args.json, result.to_json(), "--json")


def write_output(path: str | None, text: str, flag: str) -> None:
    """Write `text`, masked, to `path` whole or not at all (nothing when no path, or `-`,
    which means stdout elsewhere). A failure keeps any earlier file and is a UsageError
    naming the flag."""
    if not path or path == STDOUT:
        return
    try:
        atomic_write(Path(path), mask(text))
    except OSError as exc:
        raise UsageError(
            f"cannot write {flag} {path}: {exc.strerror or exc} (nothing written; an earlier "
            "file there is unchanged)"
        ) from None
    sys.stderr.write(f"wrote {path}\n")


def atomic_write(target: Path, text: str) -> None:
    """`text` as UTF-8 in `target`: written to a temporary file beside it, flushed to disk,
    then renamed over it, so a reader sees the old file or the whole new one, never a part."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if target.exists():
            os.chmod(temp, target.stat().st_mode & 0o777)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


# --- stdout and stderr -------------------------------------------------------------------


def print_json(data: object) -> None:
    """Machine-readable results on stdout: one JSON document, masked, nothing else."""
    sys.stdout.write(mask(json.dumps(data, ensure_ascii=False, indent=2)) + "\n")
    sys.stdout.flush()


class MaskedStream:
    """A text stream that masks every known secret in each piece written to it (`print`
    writes its text in one piece, so a printed secret is never split)."""

    def __init__(self, inner: IO[str]) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(mask(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.inner, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self.inner.fileno()

    def close(self) -> None:
        self.flush()
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@contextmanager
def masked_output() -> Iterator[None]:
    """stdout and stderr masked for the duration of one command."""
    out, err = sys.stdout, sys.stderr
    masked_out, masked_err = MaskedStream(out), MaskedStream(err)
    sys.stdout, sys.stderr = masked_out, masked_err
    try:
        yield
    finally:
        try:
            for stream in (masked_out, masked_err):
                with suppress(BrokenPipeError, ValueError):  # the reader left, or it closed
                    stream.flush()
        finally:
            sys.stdout, sys.stderr = out, err


def text_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for j, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)
            )
        )
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


class Interrupts:
    """Ctrl-C once: finish the calls in flight and keep the rows so far. Twice: stop now."""

    def __init__(self, cancel: threading.Event) -> None:
        self.cancel = cancel
        self.previous: Callable[[int, FrameType | None], Any] | int | None = None
        self.active = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> Interrupts:
        if self.active:
            self.previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt
        self.cancel.set()
        sys.stderr.write("\ninterrupted: finishing the calls in flight, keeping the rows so far\n")

    def __exit__(self, *exc: object) -> None:
        if self.active:
            signal.signal(signal.SIGINT, self.previous)


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
