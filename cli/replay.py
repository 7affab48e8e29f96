"""`memory-lab replay TRANSCRIPT --strategy S ...`: every request each strategy would send at
every turn of a conversation (system text, messages, token counts, and what was kept,
dropped, summarised and retrieved), with the transcript's own replies. Payload only, with the
rule-based stand-ins for summaries and facts, unless `--provider` names a model for upkeep.

May touch: the transcript file (read only), the `--json` file, stdout and stderr; with
`--provider`, that provider's API for upkeep calls only.
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.inputs import add_transcript_arguments, read_transcript_arg
from cli.outputs import STDOUT, check_outputs, write_json
from cli.parsing import (
    EXIT_CODES_HELP,
    EXIT_OK,
    HelpFormatter,
    UsageError,
    base_url,
    empty_means,
    preset_name,
    strategies,
)
from engines import transcripts
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from memory.types import Request
from memorylab.api import Replay, replay

EXAMPLES = """examples:
  memory-lab replay chat.json --strategy full --strategy window:k=3
  memory-lab replay conversations.json --conversation 2 --strategy summary_buffer --json
  memory-lab replay chat.json --strategy hybrid --turn 12          # turn 12's requests in full
  memory-lab replay chat.json --strategy summary --provider openai --model gpt-4o-mini

"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Replay a transcript through strategies and print what each would send at every turn. "
        "Replies are the transcript's own (a missing one is a filler of --reply-tokens). "
        "No model is called unless --provider is given, and then only for upkeep "
        "(summaries, fact extraction)."
    )
    p.epilog = EXAMPLES + EXIT_CODES_HELP
    p.formatter_class = HelpFormatter
    add_transcript_arguments(
        p,
        file_help="a transcript file (any imported format)",
        json_help="print (or write to FILE) every request as JSON",
    )
    p.add_argument("--strategy", action="append", metavar="NAME[:k=v,...]",
                   help=f"a strategy, repeatable (default: full). Names: {', '.join(REGISTRY)}")  # fmt: skip
    empty_means(p.add_argument("--system", metavar="TEXT", help="the system prompt (default: the "
                               "transcript's, else FinCoach's; \"\" for none)"), "none")  # fmt: skip
    p.add_argument("--reply-tokens", type=int, default=80,
                   help="length of the filler for a turn with no recorded reply (80)")  # fmt: skip
    p.add_argument("--turn", type=int, metavar="N", help="print turn N's requests in full")
    p.add_argument(
        "--provider",
        type=preset_name,
        help="a provider for upkeep calls (default: rule-based stand-ins)",
    )
    p.add_argument("--model", help="with --provider: the model")
    p.add_argument(
        "--base-url", type=base_url, help="with --provider: an OpenAI-compatible endpoint"
    )


def request_data(request: Request) -> dict[str, Any]:
    acc = request.account
    return {
        "system": request.system,
        "messages": [m.as_dict() for m in request.messages],
        "prompt_tokens": request.tokens.content,
        "kept_turns": list(acc.kept_turns) if acc else [],
        "dropped_turns": list(acc.dropped_turns) if acc else [],
        "summarised_turns": list(acc.summarised_turns) if acc else [],
        "retrieved_turns": list(acc.retrieved_turns) if acc else [],
        "summary": acc.summary if acc else None,
        "facts": dict(acc.facts) if acc and acc.facts is not None else None,
    }


def replay_data(t: transcripts.Transcript, run: Replay, upkeep: str) -> dict[str, Any]:
    """`memory-lab replay --json`: every turn's request per strategy, and the totals."""
    rows = {(r.strategy, r.turn): r for r in run.rows}
    turns = []
    for step in run.steps:
        turn: dict[str, Any] = {
            "turn": step.turn,
            "user": step.user,
            "reply": step.reply,
            "reply_recorded": t.turns[step.turn - 1][1] is not None,
            "requests": {},
        }
        if t.usage and t.usage[step.turn - 1] is not None:
            u = t.usage[step.turn - 1]
            assert u is not None
            turn["reported"] = {"input": u.input_tokens, "output": u.output_tokens}
        for label in run.labels:
            data = request_data(step.requests[label])
            row = rows[(label, step.turn)]
            data["upkeep_calls"] = row.upkeep_calls
            data["upkeep_tokens"] = row.upkeep_tokens
            turn["requests"][label] = data
        turns.append(turn)
    return {
        "kind": "replay",
        "transcript": {"format": t.format, "id": t.id, "title": t.title, "turns": len(t.turns)},
        "strategies": list(run.labels),
        "upkeep": upkeep,
        "system_tokens": run.system_tokens,
        "turns": turns,
        "totals": {
            label: {
                "prompt_tokens": run.total(label),
                "upkeep_calls": sum(r.upkeep_calls for r in run.rows if r.strategy == label),
                "upkeep_tokens": sum(r.upkeep_tokens for r in run.rows if r.strategy == label),
            }
            for label in run.labels
        },
    }


def _span(turns: tuple[int, ...]) -> str:
    if not turns:
        return "-"
    out, start, prev = [], turns[0], turns[0]
    for n in (*turns[1:], None):
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def print_replay(run: Replay, upkeep: str) -> None:
    print(f"Upkeep: {upkeep}. System prompt: {run.system_tokens} tokens.")
    for label in run.labels:
        print(f"\n== {label} ==")
        header = [
            "turn",
            "prompt",
            "sent so far",
            "msgs",
            "kept",
            "dropped",
            "summarised",
            "retrieved",
            "upkeep",
        ]
        rows = [
            [str(r.turn), str(r.prompt_tokens), f"{r.sent_so_far:,}", str(r.messages),
             _span(r.kept_turns), _span(r.dropped_turns), _span(r.summarised_turns), _span(r.retrieved_turns),
             f"{r.upkeep_calls} ({r.upkeep_tokens} tok)" if r.upkeep_calls else "-"]
            for r in run.rows if r.strategy == label
        ]  # fmt: skip
        widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
        for j, row in enumerate([header, *rows]):
            print("  ".join(c.rjust(w) if i < 4 else c.ljust(w)
                            for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip())  # fmt: skip
            if j == 0:
                print("  ".join("-" * w for w in widths))


def print_turn(run: Replay, n: int) -> None:
    step = run.steps[n - 1]
    for label in run.labels:
        request = step.requests[label]
        print(f"\n== {label}, turn {n}: {request.tokens.content} prompt tokens ==")
        print("[system] " + request.system)
        for m in request.messages:
            print(f"[{m.role}] {m.content}")


def run(args: argparse.Namespace) -> int:
    check_outputs(args)
    t = read_transcript_arg(args)
    picked = strategies(args.strategy, (LaneSpec("full"),))
    if args.turn is not None and not 1 <= args.turn <= len(t.turns):
        raise UsageError(f"--turn {args.turn}: the conversation has turns 1 to {len(t.turns)}")
    if args.reply_tokens < 0:
        raise UsageError("--reply-tokens cannot be negative")
    summarize = extract = None
    upkeep = "rule-based stand-ins (no model)"
    if args.provider:
        from lanes.binding import bind

        try:
            _, model_fn, upkeep = bind(args.provider, model=args.model, base_url=args.base_url,
                                       max_tokens=256)  # fmt: skip
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        summarize = extract = model_fn
    try:
        result = replay(t, picked, system_prompt=args.system, reply_tokens=args.reply_tokens,
                        summarize=summarize, extract=extract)  # fmt: skip
    except MemoryLabError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        write_json(args.json, replay_data(t, result, upkeep))
        if args.json == STDOUT:
            return EXIT_OK
    print_replay(result, upkeep)
    if args.turn is not None:
        print_turn(result, args.turn)
    return EXIT_OK
