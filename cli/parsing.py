"""How every command reads its arguments: the exit codes, the help layout, the `Parser`
whose one value rule wraps every option's type (not empty unless `empty_means`; numbers
finite, 0..2**53), and the argument types shared by several commands.

May touch: nothing outside the parser (reads memory/'s and providers/' names to check
values).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec, parse_spec
from providers.catalog import PRESETS
from providers.settings import check_base_url

if TYPE_CHECKING:
    pass


EXIT_OK = 0  # done


EXIT_FAILED = 1  # the run failed (e.g. the model could not start)


EXIT_USAGE = 2  # bad arguments or unusable files: the message says what to change


EXIT_INTERRUPTED = 130  # Ctrl-C: what was done so far is still printed and written


EXIT_CODES_HELP = """exit codes:
  0    done
  1    the run failed (the message says why, e.g. the model could not start)
  2    bad usage: a wrong argument, or a file that cannot be read or written
  130  interrupted with Ctrl-C: the results so far are still printed and written"""


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


def strategies(values: Sequence[str] | None, default: Sequence[LaneSpec]) -> tuple[LaneSpec, ...]:
    """`--strategy` values ('full', 'window:k=3', 'full;window:k=3') as choices, else `default`."""
    if not values:
        return tuple(default)
    out: list[LaneSpec] = []
    for value in values:
        for part in _split_strategies(value):
            try:
                out.append(parse_spec(part))
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


def conversation_arg(value: str | None) -> int | str | None:
    """`--conversation 3` is the third; anything else is an id."""
    if value is None:
        return None
    return int(value) if value.isdigit() else value
