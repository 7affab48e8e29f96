"""Compare LLM memory strategies from the terminal: the `memory-lab` command.

    memory-lab simulate                                   # seed 000's growth table
    memory-lab survival --payload-only --json > grid.json
    memory-lab app                                        # the browser app

The command table, `COMMANDS`, is the only list of commands: each is one module `cli/NAME.py`
(a `-` in the name is `_` in the module's) with `add_arguments(parser)` and `run(args) -> int`;
adding a command is that module and one line here. Only the module of the command being run is imported. `main` is the one choke
point every command's output passes: stdout and stderr masked (no secret the run knew is
printed), every failure mapped to the exit codes of `cli/parsing.py`.

May touch: stdout and stderr; imports the command modules of this package.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

from cli.inputs import load_strategies, take_strategy_files, with_missing_framework
from cli.outputs import masked_output
from cli.parsing import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    HelpFormatter,
    Parser,
    UsageError,
)
from providers.redaction import mask, mask_logs

__all__ = [
    "COMMANDS",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
]

# name -> the one line `memory-lab --help` shows. The module is `cli/<name>.py`.
COMMANDS: dict[str, str] = {
    "simulate": "model-free token growth per strategy (seed 000's table by default)",
    "survival": "plant facts at turn 1, probe at turn N, per strategy",
    "app": "start the app in the browser (Streamlit, local only)",
    "sweep": "survival and recall grids through batch APIs (half price, resumable)",
    "tune": "find the cheapest strategy setting that keeps your facts (no model)",
    "transcript": "show a transcript file as the lab reads it (--list: its conversations)",
    "replay": "every request each strategy would send at every turn of a transcript",
    "check-strategy": "run the lab's strategy contracts on a strategy (yours, a framework's)",
    "recall": "LoCoMo, LongMemEval or your own long conversation: evidence kept per strategy",
}


@dataclass(frozen=True)
class Command:
    """One command module: what it adds to its parser and what runs it."""

    name: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def module_name(command: str) -> str:
    """The module of a command: its name, with `-` as `_` (`check-strategy`: check_strategy)."""
    return command.replace("-", "_")


def load_command(name: str) -> Command:
    """The module `cli/<name>.py` of a command in `COMMANDS`, checked to have both parts."""
    module: ModuleType = importlib.import_module(f"cli.{module_name(name)}")
    add, run = getattr(module, "add_arguments", None), getattr(module, "run", None)
    if not callable(add) or not callable(run):
        raise TypeError(f"cli/{name}.py needs add_arguments(parser) and run(args) -> int")
    return Command(name, add, run)


MAIN_EXAMPLES = """examples:
  memory-lab simulate                                  # seed 000's table: 5,611 tokens, 6.55x
  memory-lab simulate --turns 200 --strategy full --strategy window:k=3 --csv growth.csv
  memory-lab survival --payload-only                   # no model: in-payload verdicts only
  memory-lab survival --payload-only --json > grid.json
  memory-lab survival --probe-turns 2,5,10 --strategy full --strategy window:k=3
  memory-lab tune --composition mine.json              # a composition exported from the app
  memory-lab app                                       # the app on http://127.0.0.1:8501
  memory-lab simulate --strategy-file mine.py:MyMemory --strategy my_memory
  memory-lab check-strategy mine.py:MyMemory           # the lab's contracts on your class

Each command has its own --help. Results go to stdout; progress and notes to stderr.

"""


def build_parser(argv: Sequence[str] | None = None, *, load: Sequence[str] = ()) -> Parser:
    """The `memory-lab` parser. Every command is listed; the arguments are added for the
    command `argv` names (the first word that is not an option) and for those in `load`."""
    words = [w for w in (sys.argv[1:] if argv is None else argv) if not w.startswith("-")]
    chosen = {*load, *words[:1]}
    parser = Parser(
        prog="memory-lab",
        description=(__doc__ or "").split("\n\n")[0],
        epilog=MAIN_EXAMPLES + EXIT_CODES_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=Parser, metavar="COMMAND"
    )
    for name, help_line in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_line)
        if name in chosen:
            command = load_command(name)
            command.add_arguments(command_parser)
            command_parser.set_defaults(run=command.run)
        command_parser.set_defaults(parser=command_parser)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memory-lab")
    except PackageNotFoundError:
        return "(not installed: run from a checkout)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see EXIT_CODES_HELP)."""
    mask_logs()  # a log line any library writes is masked like the command's own output
    with masked_output():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    try:  # --strategy-file, anywhere on the line: loaded before the parser lists the names
        files, rest = take_strategy_files(sys.argv[1:] if argv is None else argv)
        load_strategies(files)
    except UsageError as exc:
        sys.stderr.write(f"error: {mask(str(exc))}\n")
        return EXIT_USAGE
    argv = rest
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        run: Callable[[argparse.Namespace], int] = args.run
        return int(run(args))
    except UsageError as exc:
        getattr(args, "parser", parser).print_usage(sys.stderr)
        sys.stderr.write(f"error: {mask(with_missing_framework(str(exc)))}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `memory-lab ... | head`: the reader left; not an error
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a failed run is exit 1 with a one-line reason
        sys.stderr.write(f"error: {type(exc).__name__}: {mask(str(exc))}\n")
        if os.environ.get("MEMORY_LAB_DEBUG"):
            raise
        return EXIT_FAILED


def console() -> None:
    """The `memory-lab` console script."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
