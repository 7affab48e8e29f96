"""`memory-lab tune`: the cheapest memory setting that still keeps your facts (payload only).

    memory-lab tune                                          # FinCoach's facts, N = 2..50
    memory-lab tune --facts facts.json --probe-turns 50 --target 1.0 --csv frontier.csv
    memory-lab tune --transcript chat.txt --facts chat-facts.json --probe-turns 20,41
    memory-lab tune --longmem 0 --target 0.9                 # the long-memory benchmark
    memory-lab tune --transcript log.json --questions questions.json --target 90%

The search is engines/tune's: a bisection on each strategy's size parameters, then a seeded
search of its other parameters; no model is called (summaries and extraction by the
survival lab's rule-based stand-ins). The frontier goes to stdout; progress to stderr.
May touch: the files its flags name, stdout and stderr; no model, no network.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from cli.compositions import prepare as prepare_compositions
from cli.inputs import read_text_arg, system_prompt_arg
from cli.outputs import STDOUT, Interrupts, check_outputs, report
from cli.parsing import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    HelpFormatter,
    UsageError,
    positive,
    seconds,
    strategies,
)
from cli.progress import ProgressBar
from cli.survival import add_grid_arguments, survival_config
from engines.survival import parse_turns
from engines.tune import (
    COST_PER_TURN,
    DEFAULT_STRATEGIES,
    Evaluator,
    FactsEvaluator,
    QuestionsEvaluator,
    Target,
    TranscriptFactsEvaluator,
    TuneResult,
    tune,
)
from scenarios.longmem import LongMemFormatError
from scenarios.transcripts import TranscriptError

EXAMPLES = """
examples:
  memory-lab tune                                   # FinCoach's four facts at N = 2, 5, 10, 20, 50
  memory-lab tune --probe-turns 50 --target 0.75    # three facts of four at turn 50 is enough
  memory-lab tune --facts facts.json --system-file prompt.txt --csv trials.csv --json
  memory-lab tune --transcript chat.txt --facts chat-facts.json   # facts at the chat's turns
  memory-lab tune --longmem 0 --target 0.9 --strategy retrieval   # 90% of the evidence turns
  memory-lab tune --transcript log.json --questions questions.json --json result.json
"""
DEFAULT_PROBE_TURNS = "2,5,10,20,50"
DEFAULT_EVIDENCE_TARGET = 0.9


def _target(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a share like 0.9 or 90%, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"the target share must be in (0, 1], got {text!r}")
    return value


def add_arguments(t: argparse.ArgumentParser) -> None:
    """`memory-lab tune`'s arguments (the grid's are `cli.survival.add_grid_arguments`)."""
    t.description = __doc__.split("\n\n")[0]
    t.epilog = EXAMPLES
    t.formatter_class = HelpFormatter
    add_grid_arguments(t, strategy_help="a strategy to search, repeatable (default: six)")
    c = t.add_argument_group(
        "the conversation",
        "Default: the scripted one (--facts stated at their turns, filler between them). With "
        "--transcript and --facts, --probe-turns defaults to once, after the last turn.",
    )
    c.add_argument("--transcript", metavar="FILE",
                   help="your own conversation (any format the app imports), with --facts (each "
                   "fact's turn in it: key, turn, probe, answer; text optional) or --questions")  # fmt: skip
    c.add_argument("--questions", metavar="FILE.json",
                   help="questions with evidence turns for --transcript (the long-memory "
                   "format: question, evidence, after_turn); kept = evidence turns in the payload")  # fmt: skip
    c.add_argument("--longmem", metavar="SEED|FILE",
                   help="the long-memory benchmark: a seed (its generated ~620-turn conversation "
                   "and 33 questions) or a conversation file with its questions")  # fmt: skip
    t.add_argument("--target", type=_target, default=None,
                   help="share that must be in the payload: of facts x probe turns (1.0), or of "
                   f"evidence turns with questions ({DEFAULT_EVIDENCE_TARGET})")  # fmt: skip
    t.add_argument("--at", metavar="N,N",
                   help="judge the target at these probe turns only (questions: the turns they "
                   "are asked after)")  # fmt: skip
    t.add_argument("--seed", type=int, default=0, help="seed of the refinement search (0)")
    t.add_argument("--time-limit", type=seconds, default=60.0, help="seconds at most (60)")
    t.add_argument("--max-trials", type=positive, default=400,
                   help="settings tried at most (400)")  # fmt: skip
    t.add_argument("--csv", metavar="FILE", help="write every setting tried here")
    t.add_argument("--json", nargs="?", const=STDOUT, metavar="FILE",
                   help="write the result to FILE; with no FILE, print it on stdout as JSON")  # fmt: skip
    t.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    t.set_defaults(payload_only=True, replies="fixed",
                   fixed_replies=True, probe_turns=None)  # fmt: skip


def _evaluator(args: argparse.Namespace) -> tuple[Evaluator, list[str]]:
    """(the evaluator the flags describe, the strategy names to search)."""
    names = [c.name for c in strategies(args.strategy, ())] or list(DEFAULT_STRATEGIES)
    if args.questions and not args.transcript:
        raise UsageError("--questions goes with --transcript (the conversation they ask about)")
    if args.longmem and (args.transcript or args.facts):
        raise UsageError("--longmem brings its own conversation and questions: drop "
                         "--transcript/--facts")  # fmt: skip
    if args.transcript and bool(args.facts) == bool(args.questions):
        raise UsageError("--transcript needs what to keep: --facts (facts at its turns) or "
                         "--questions (questions with evidence turns), one of them")  # fmt: skip
    scripted = not (args.transcript or args.longmem)
    if not scripted:
        for flag, used in (("--plant-turn", args.plant_turn is not None),
                           ("--filler", args.filler != "builtin")):  # fmt: skip
            if used:
                raise UsageError(f"{flag} is for the scripted conversation; the transcript or "
                                 "the long-memory benchmark is the whole conversation")  # fmt: skip
    if scripted:
        args.probe_turns = args.probe_turns or DEFAULT_PROBE_TURNS
        return FactsEvaluator.from_config(survival_config(args)), names
    if (args.longmem or args.questions) and args.probe_turns:
        raise UsageError("--probe-turns is for facts; questions are asked at their after_turn")
    try:
        if args.longmem:
            if args.longmem.isdigit():
                return QuestionsEvaluator.from_seed(int(args.longmem)), names
            text = read_text_arg(args.longmem, "--longmem")
            return QuestionsEvaluator.from_conversation_file(
                text, name=Path(args.longmem).name
            ), names
        name = Path(args.transcript).name
        transcript = read_text_arg(args.transcript, "--transcript")
        if args.questions:
            questions = read_text_arg(args.questions, "--questions")
            return QuestionsEvaluator.from_files(transcript, questions, name=name), names
        facts = read_text_arg(args.facts, "--facts")
        probe_turns = parse_turns(args.probe_turns) if args.probe_turns else None
        evaluator = TranscriptFactsEvaluator.from_files(
            transcript, facts, probe_turns, name=name, system_prompt=system_prompt_arg(args, None)
        )
        return evaluator, names
    except ValueError as exc:  # transcript, facts and questions errors say where and what
        raise UsageError(f"{_culprit(args, exc)}: {exc}") from None


def _culprit(args: argparse.Namespace, exc: ValueError) -> str:
    """The flag and file an input error is about."""
    if args.longmem:
        return f"--longmem {args.longmem}"
    if isinstance(exc, TranscriptError):
        return f"--transcript {args.transcript}"
    if isinstance(exc, LongMemFormatError):
        return f"--questions {args.questions}"
    if str(exc).startswith("probe turn"):
        return f"--probe-turns {args.probe_turns}"
    return f"--facts {args.facts}"


def run(args: argparse.Namespace) -> int:
    prepare_compositions(args)
    evaluator, names = _evaluator(args)
    try:
        at = parse_turns(args.at) if args.at else ()
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None
    if set(at) - set(evaluator.judged_turns):
        judged = ",".join(map(str, evaluator.judged_turns))
        raise UsageError(f"--at {args.at}: judge only at turns that are probed ({judged})")
    check_outputs(args)
    share = args.target
    if share is None:
        share = 1.0 if evaluator.what == "facts" else DEFAULT_EVIDENCE_TARGET
    target = Target(share, at)
    sys.stderr.write(
        f"Tuning {', '.join(names)} for: {target.describe(evaluator.what)} ("
        f"{evaluator.describe()}; payload only, seed {args.seed}, at most "
        f"{args.time_limit:g} s)\n"
    )
    cancel = threading.Event()
    with Interrupts(cancel), ProgressBar("settings", "setting", quiet=args.quiet) as bar:
        result = tune(
            evaluator,
            target,
            strategies=names,
            seed=args.seed,
            time_limit_s=args.time_limit,
            max_trials=args.max_trials,
            cancel=cancel,
            on_progress=lambda p: bar.update(p.tried, max(p.planned, p.tried), p.strategy),
        )
    report(args, result, result.as_dict, lambda: print(frontier_table(result)))
    for note in result.notes:
        sys.stderr.write(f"note: {note}\n")
    return EXIT_INTERRUPTED if result.stop_reason == "cancelled" else EXIT_OK


def frontier_table(result: TuneResult) -> str:
    """The summary sentence, then the frontier, cheapest first, the winner marked."""
    unit = "tokens/turn" if result.cost == COST_PER_TURN else "tokens/req"
    width = max([46, *(len(t.label) for t in result.frontier)])
    lines = [result.summary(), "", f"{'frontier':<{width}} {unit:>11} {'kept':>7}"]
    for t in result.frontier:
        mark = "  <- cheapest meeting the target" if t is result.winner else ""
        lines.append(f"{t.label:<{width}} {t.tokens_per_turn:>11,.0f} {t.share:>7.1%}{mark}")
    return "\n".join(lines)
