"""`memory-lab survival`: plant facts at turn 1, probe them at turns N, per strategy.

    memory-lab survival --payload-only --probe-turns 2,5,10,20,50
    memory-lab survival --provider openai --model gpt-4o-mini --strategy full --strategy hybrid
    memory-lab survival --from-transcript chat.json --suggest-facts
    memory-lab survival --from-transcript chat.json --facts auto --payload-only

Also the home of the grid arguments (`add_grid_arguments`, `survival_config`) that `tune`
shares, and of the text table `sweep collect` prints. May touch: the files its flags name,
stdout and stderr; the model it is pointed at (through lanes.binding).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cli.compositions import add_composition_argument
from cli.compositions import prepare as prepare_compositions
from cli.inputs import (
    add_transcript_arguments,
    load_transcript,
    read_text_arg,
    read_transcript_arg,
    system_prompt_arg,
)
from cli.outputs import STDOUT, Interrupts, check_outputs, print_json, report, write_json
from cli.parsing import (
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    HelpFormatter,
    UsageError,
    base_url,
    empty_means,
    positive,
    preset_name,
    strategies,
)
from cli.progress import ProgressBar
from engines.survival import (
    DEFAULT_PROBE_TURNS,
    DEFAULT_STRATEGIES,
    Progress,
    Suggestion,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    conversation_config,
    default_probe_turns,
    estimate,
    parse_facts_json,
    parse_turns,
    plan_sentence,
    run_survival,
    suggest_facts,
)
from lanes.binding import bind
from lanes.lane import Sender
from memory.errors import MemoryLabError
from memory.maintenance import Upkeep
from memory.registry import REGISTRY
from memory.types import ModelFn
from present.survival import text_table as survival_text_table
from providers import preset
from scenarios.transcripts import Transcript

FROM = "--from-transcript"
AUTO = "auto"

EXAMPLES = """examples:
  memory-lab survival --payload-only --probe-turns 2,5,10,20,50
  memory-lab survival --payload-only --json --quiet | jq '.rows | length'
  memory-lab survival --provider openai --model gpt-4o-mini --strategy full --strategy hybrid
  memory-lab survival --estimate-only --strategy entity
  memory-lab survival --from-transcript conversations.json --conversation 2 --suggest-facts
  memory-lab survival --from-transcript chat.json --facts auto --payload-only
  memory-lab survival --from-transcript chat.json --suggest-facts --json facts.json
  memory-lab survival --from-transcript chat.json --facts facts.json --probe-turns 6,12

"""


def add_grid_arguments(s: argparse.ArgumentParser, *, strategy_help: str) -> None:
    """The arguments that say what a survival grid states and probes (survival, tune)."""
    s.add_argument(
        "--probe-turns", default="2,5,10,20,50", help="turns N to probe at (2,5,10,20,50)"
    )
    s.add_argument(
        "--strategy",
        action="append",
        metavar="NAME[:k=v,...]",
        help=strategy_help,
    )
    s.add_argument(
        "--facts",
        metavar="FILE.json",
        help="facts to state (default: FinCoach's four); the format is in "
        "engines/survival/facts.py: key, text, probe, answer, turn, speaker, updates",
    )
    s.add_argument("--plant-turn", type=int, help="plant every fact at this turn (default 1)")
    empty_means(s.add_argument("--system", metavar="TEXT",
                               help="the system prompt (default: FinCoach's; \"\" for none)"), "none")  # fmt: skip
    s.add_argument("--system-file", metavar="FILE", help="read the system prompt from a file")
    s.add_argument(
        "--filler",
        default="builtin",
        help="'builtin' (the bank) or a transcript file (.txt/.json/.csv)",
    )
    s.add_argument("--filler-seed", type=int, default=0, help="shuffle of the built-in bank")
    add_composition_argument(s)


def survival_config(args: argparse.Namespace) -> SurvivalConfig:
    """The grid the grid arguments describe (UsageError if unusable)."""
    if getattr(args, "file", None):
        return _from_transcript(args, read_transcript_arg(args, FROM))
    if args.facts == AUTO:
        raise UsageError("--facts auto proposes the facts a log states: add --from-transcript FILE")
    if args.probe_turns is None:
        args.probe_turns = ",".join(map(str, DEFAULT_PROBE_TURNS))
    try:
        facts = SurvivalConfig().facts
        if args.facts:
            try:
                facts = parse_facts_json(read_text_arg(args.facts, "--facts"))
            except SurvivalConfigError as exc:
                raise UsageError(f"--facts {args.facts}: {exc}") from None
        if args.plant_turn is not None:
            if args.plant_turn < 1:
                raise UsageError("--plant-turn counts from 1")
            facts = tuple(replace(f, plant_turn=args.plant_turn) for f in facts)
        system_prompt = system_prompt_arg(args, SurvivalConfig().system_prompt)
        filler = None
        if args.filler and args.filler != "builtin":
            filler = tuple(load_transcript(args.filler, "--filler"))
        replies = "fixed" if args.fixed_replies else args.replies
        config = SurvivalConfig(
            facts=facts,
            probe_turns=parse_turns(args.probe_turns),
            strategies=strategies(args.strategy, DEFAULT_STRATEGIES),
            filler=filler,
            filler_seed=args.filler_seed,
            replies=replies,
            system_prompt=system_prompt,
        )
        config.validate()
    except (SurvivalConfigError, MemoryLabError) as exc:
        raise UsageError(str(exc)) from None
    if args.payload_only and replies == "generated":
        raise UsageError(
            "--payload-only has no model to generate replies: drop --replies generated"
        )
    return config


def _from_transcript(args: argparse.Namespace, t: Transcript) -> SurvivalConfig:
    """A run on the user's own conversation: the facts it states (`--facts auto`, the
    default here) or a facts file's, at their turns, probed at later turns of it."""
    if args.filler and args.filler != "builtin":
        raise UsageError(f"{FROM} is the conversation: drop --filler")
    if args.plant_turn is not None:
        raise UsageError(f"with {FROM} each fact is stated at its own turn: drop --plant-turn")
    try:
        if args.facts and args.facts != AUTO:
            facts = parse_facts_json(read_text_arg(args.facts, "--facts"))
        else:
            facts = tuple(s.fact for s in suggest_facts(t))
            if not facts:
                raise UsageError(
                    f"{FROM} {args.file}: no name, amount, date, number or preference found in "
                    "the user's turns: write a facts file (--facts FILE)"
                )
        replies = "fixed" if args.fixed_replies else args.replies
        config = conversation_config(
            t,
            facts,
            probe_turns=parse_turns(args.probe_turns) if args.probe_turns else None,
            strategies=strategies(args.strategy, DEFAULT_STRATEGIES),
            system_prompt=system_prompt_arg(args, None),
            replies=replies,
        )
    except (SurvivalConfigError, MemoryLabError) as exc:
        raise UsageError(f"{FROM} {args.file}: {exc}") from None
    if args.payload_only and replies == "generated":
        raise UsageError(
            "--payload-only has no model to generate replies: drop --replies generated"
        )
    return config


def suggestions_data(t: Transcript, found: Sequence[Suggestion]) -> dict[str, Any]:
    """`survival --from-transcript FILE --suggest-facts --json`: also a facts file."""
    facts = [s.fact for s in found]
    return {
        "kind": "suggested_facts",
        "transcript": {"format": t.format, "id": t.id, "title": t.title, "turns": len(t.turns)},
        "probe_turns": list(default_probe_turns(len(t.turns), facts)),
        "facts": [s.to_dict() for s in found],
    }


def print_suggestions(path: str, t: Transcript, found: Sequence[Suggestion]) -> None:
    print(f"{Path(path).name}: {len(t.turns)} turns · {len(found)} fact(s) the user stated "
          "(rule-based matcher, no model)")  # fmt: skip
    rows = [
        [str(s.fact.plant_turn), s.kind, s.fact.key, "; ".join(s.fact.answers), s.fact.probe]
        for s in found
    ]
    if not rows:
        print("(none)")
    header = ["turn", "kind", "key", "answer", "probe"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for j, r in enumerate([header, *rows] if rows else []):
        cells = [r[0].rjust(widths[0])] + [
            c.ljust(w) for c, w in zip(r[1:], widths[1:], strict=True)
        ]
        print("  ".join(cells).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))
    if found:
        turns = default_probe_turns(len(t.turns), [s.fact for s in found])
        print(f"\nprobe turns (default): {', '.join(map(str, turns))}")
        print(f"run them: memory-lab survival {FROM} {path} --facts auto --payload-only")
        print(f"edit them: add --json facts.json, then {FROM} {path} --facts facts.json")


def survival_table(result: SurvivalResult) -> str:
    """Both verdict grids (strategies x N), the legend and the prompt tokens spent, as text."""
    return survival_text_table(result)


def _bind_model(args: argparse.Namespace) -> tuple[Sender, ModelFn, str]:
    """(send, upkeep model function, description) for the chosen provider."""
    try:
        return bind(
            args.provider,
            model=args.model,
            base_url=args.base_url,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _progress(bar: ProgressBar) -> Callable[[Progress], None]:
    """Engine progress -> the bar: probes done, and model calls as the note."""

    def show(p: Progress) -> None:
        note = f"calls {p.done}/{p.total}" if p.total else ""
        bar.update(p.rows, p.rows_total, note)

    return show


def run(args: argparse.Namespace) -> int:
    prepare_compositions(args)
    if args.suggest_facts:
        if not args.file:
            raise UsageError(f"--suggest-facts reads a log: add {FROM} FILE")
        check_outputs(args)
        t = read_transcript_arg(args, FROM)
        found = suggest_facts(t)
        if args.json:
            write_json(args.json, suggestions_data(t, found))
        if args.json != STDOUT:
            print_suggestions(args.file, t, found)
        return EXIT_OK
    config = survival_config(args)
    check_outputs(args)
    with_model = not args.payload_only
    est = estimate(config, with_model=with_model, assumed_reply_tokens=args.max_tokens)
    err = sys.stderr
    plan = "Plan: " + plan_sentence(config, est, with_model=with_model)
    err.write(plan + "\n")
    if args.estimate_only:
        print_json(est.as_dict())
        return EXIT_OK
    send: Sender | None = None
    model_fn: ModelFn | None = None
    description = "payload only (no model)"
    if with_model:
        try:
            send, model_fn, description = _bind_model(args)
        except UsageError:
            raise
        except Exception as exc:  # the model could not start: say so, exit 1
            err.write(f"error: could not start the model ({type(exc).__name__}: {exc})\n")
            return EXIT_FAILED
    err.write(f"Model: {description}\n")
    cancel = threading.Event()
    with Interrupts(cancel), ProgressBar("probes", "probe", quiet=args.quiet) as bar:
        result = run_survival(
            config,
            send=send,
            upkeep=Upkeep.using(model_fn),
            on_progress=_progress(bar) if bar.shown else None,
            cancel=cancel,
            workers=args.workers or (1 if preset(args.provider).family.app_server else None),
            expected_calls=est.calls,
        )
    result.model = result.model or description

    def show() -> None:
        print(survival_table(result))
        for note in result.notes:
            print(f"note: {note}")
        if args.rows:
            print()
            for r in result.rows:
                print(
                    f"[{r.strategy} N={r.probe_turn} {r.fact}] payload={r.in_payload} "
                    f"recalled={r.recalled} {r.flag} | {r.probe} -> {r.reply[:160]!r}"
                )

    report(args, result, result.as_dict, show)
    if result.cancelled:
        err.write(f"cancelled: {len(result.rows)} of {est.rows} probes done\n")
        return EXIT_INTERRUPTED
    return EXIT_OK


def add_arguments(s: argparse.ArgumentParser) -> None:
    """`memory-lab survival`'s arguments."""
    s.description = (
        "Fact survival: is a fact planted early still in the payload, and "
        "recalled, at turn N? Default model: the embedded SmolLM2 (small: in-payload is "
        "the fair test, recall is noisy)."
    )
    s.epilog = EXAMPLES + EXIT_CODES_HELP
    s.formatter_class = HelpFormatter
    add_grid_arguments(
        s,
        strategy_help="a strategy to test, repeatable (default: the six main-page lanes). "
        f"Names: {', '.join(REGISTRY)}",
    )
    s.add_argument("--replies", choices=("fixed", "generated"), default="fixed",
                   help="replies to filler turns: fixed short replies (fast, free) or generated")  # fmt: skip
    s.add_argument("--fixed-replies", action="store_true", help="same as --replies fixed")
    s.add_argument(
        "--payload-only",
        action="store_true",
        help="no model at all: payload verdict only, upkeep by rule-based stand-ins",
    )
    s.add_argument("--provider", default="embedded", type=preset_name, help="embedded (default), openai, anthropic, "
                   "or an OpenAI-compatible preset")  # fmt: skip
    s.add_argument("--model", help="model name (default: the provider's default)")
    s.add_argument("--base-url", type=base_url, help="endpoint URL for OpenAI-compatible servers")
    s.add_argument("--max-tokens", type=positive, default=96, help="reply length cap (96)")
    s.add_argument("--temperature", type=float, default=0.0, help="0 (reproducible) by default")
    s.add_argument(
        "--workers",
        type=positive,
        help="strategies run at once (default: 1 on the embedded model, whose batched replies "
        "can differ run to run; all strategies on other providers)",
    )
    s.add_argument("--csv", metavar="FILE", help="write every probe row here")
    s.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="write config, rows and totals to FILE; with no FILE, print them on "
                   "stdout as JSON instead of the tables")  # fmt: skip
    s.add_argument("--rows", action="store_true", help="also print every probe and reply")
    s.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    s.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    add_transcript_arguments(
        s,
        flag=FROM,
        file_help="probe your own log: the conversation (any format `memory-lab transcript` "
        "reads) is played as it was, and the facts it states are probed at later turns of "
        "it: --facts auto (the default here) proposes them, --facts FILE names them",
        json_help=None,
    )
    s.add_argument(
        "--suggest-facts",
        action="store_true",
        help=f"with {FROM}: print the facts the user stated (turn, kind, answer, probe) and "
        "stop; with --json, as a facts file",
    )
    s.set_defaults(probe_turns=None)  # the default depends on --from-transcript
