"""`memory-lab check-strategy`: the lab's contract suite run on one strategy (a file's, a
framework lane, a built-in); each broken contract is printed with a minimal failing
conversation. `--strategy-file` itself, taken by every command, is in cli/inputs.py.

May touch: stdout, the `--json` file; loads the strategy file it is given.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.outputs import STDOUT, check_outputs, write_output
from cli.parsing import EXIT_FAILED, EXIT_OK, HelpFormatter, UsageError, comma_list

CHECK_EXAMPLES = """examples:
  memory-lab check-strategy my_memory.py:SlidingWindowMemory
  memory-lab check-strategy langgraph_trim --param max_tokens=200 --json
"""


def add_arguments(c: argparse.ArgumentParser) -> None:
    """`check-strategy`'s arguments."""
    c.description = (
        "Hypothesis generates conversations and looks, for each contract, for one that breaks "
        "it (system prompt first and unchanged, new message last, roles alternate from a user "
        "message, the declared budget kept, a raise changes nothing); each broken contract is "
        "printed with a minimal failing conversation. A strategy that breaks a contract still "
        "runs as a lane, marked with what it breaks."
    )
    c.epilog = (
        CHECK_EXAMPLES + "\nexit codes:\n  0    every contract held\n  1    a contract is broken\n"
        "  2    bad usage: the strategy or file cannot be loaded"
    )
    c.formatter_class = HelpFormatter
    c.add_argument(
        "strategy", metavar="PATH.py:NAME|NAME", help="a strategy file or a registered name"
    )
    c.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", type=comma_list,
                   help="a parameter of a registered strategy, repeatable")  # fmt: skip
    c.add_argument(
        "--examples", type=int, default=100, help="conversations tried per contract (100)"
    )
    c.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="print (or write to FILE) the result as JSON")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from memory.lane_spec import parse_spec
    from memory.registry import REGISTRY
    from plugins import contracts
    from plugins.loading import StrategyLoadError, load_file

    check_outputs(args)
    target: str = args.strategy
    source = target if ".py:" in target else None
    if source:
        try:
            name = load_file(target, check=False)
        except (StrategyLoadError, ValueError) as exc:
            raise UsageError(f"{target}: {exc}") from None
    else:
        name = target
    if name not in REGISTRY:
        raise UsageError(f"unknown strategy {name!r}; choose one of: {', '.join(REGISTRY)}")
    spec = REGISTRY[name]
    params: dict[str, Any] = {**spec.defaults()}
    if args.param:
        try:
            params.update(parse_spec(f"{name}:{','.join(args.param)}").params)
        except ValueError as exc:
            raise UsageError(f"--param: {exc}") from None
    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    try:
        broken = contracts.broken_contracts(spec.cls, params=params, examples=args.examples)
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"check-strategy needs {exc.name}: pip install 'memory-lab[frameworks]'"
        ) from None
    if args.json:
        text = contracts.as_json(name, broken, source=source)
        if args.json == STDOUT:
            print(text)
        else:
            write_output(args.json, text + "\n", "--json")
    else:
        print(contracts.report(name, broken, source=source))
    return EXIT_FAILED if broken else EXIT_OK
