"""Long-conversation recall: every strategy, at several settings, on generated conversations.

For each setting, pooled over the conversations' questions: the share of evidence turns sent
verbatim, the share of questions with all their evidence, the share whose expected answer
appears anywhere in the request (summaries and fact blocks count here), mean prompt tokens
and their share of the full buffer, evidence kept per question kind, and time per query.
Summaries and facts come from the rule-based stand-ins (no model).

    .venv/bin/python bench/bench_recall.py                 # 4 generated conversations, sweep
    .venv/bin/python bench/bench_recall.py --seeds 0-7 --quick
    .venv/bin/python bench/bench_recall.py --file my_log.json          # your own (format:
    .venv/bin/python bench/bench_recall.py --transcript chat.json --questions q.json
                                                       # scenarios/longmem.py's docstring)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.recall import RecallRow, Setting, default_settings, full_tokens, run_recall  # noqa: E402
from engines.transcripts import parse as parse_transcript  # noqa: E402
from memory.registry import spec  # noqa: E402
from memory.tokens import TokenCounter  # noqa: E402
from scenarios.longmem import (  # noqa: E402
    KINDS,
    LongConversation,
    from_turns,
    parse_conversation,
    parse_questions,
)
from scenarios.longmem_world import generate  # noqa: E402


def seeds(text: str) -> list[int]:
    if "-" in text:
        first, last = text.split("-", 1)
        return list(range(int(first), int(last) + 1))
    return [int(s) for s in text.split(",")]


def load(args: argparse.Namespace) -> list[LongConversation]:
    if args.file:
        return [parse_conversation(Path(args.file).read_bytes())]
    if args.transcript:
        if not args.questions:
            raise SystemExit("--transcript needs --questions")
        transcript = parse_transcript(Path(args.transcript).read_bytes(), name=args.transcript)
        turns = [(u, r or "") for u, r in transcript.turns]
        questions = parse_questions(Path(args.questions).read_bytes(), len(turns))
        return [from_turns(turns, questions, transcript.system or "")]
    return [generate(s) for s in seeds(args.seeds)]


def print_row(row: RecallRow, kinds: list[str]) -> None:
    answer = "   -" if row.answer_in_payload is None else f"{row.answer_in_payload:4.0%}"
    per_kind = " ".join(f"{row.by_kind.get(k, float('nan')):>9.0%}" for k in kinds)
    print(
        f"{row.label:62s} {row.evidence_kept:5.0%} {row.all_evidence:5.0%} {answer} "
        f"{row.mean_tokens:8,.0f} {row.full_share:6.1%} {per_kind} {row.ms_per_query:7.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="long-conversation recall benchmark")
    parser.add_argument("--seeds", default="0-3", help="generated conversations: 0-3 or 0,5,9")
    parser.add_argument("--file", help="a conversation + questions file (JSON)")
    parser.add_argument("--transcript", help="a transcript in any format the app imports")
    parser.add_argument("--questions", help="the questions file for --transcript")
    parser.add_argument("--quick", action="store_true", help="fewer retrieval/hybrid settings")
    args = parser.parse_args()
    counter = TokenCounter()
    convs = load(args)
    fulls = [full_tokens(c, counter) for c in convs]
    questions = sum(len(c.questions) for c in convs)
    print(
        f"{len(convs)} conversation(s): {sum(len(c.turns) for c in convs):,} turns, "
        f"{sum(len(c.sessions) for c in convs)} sessions, {questions} questions; full buffer "
        f"after the last turn {min(fulls):,}-{max(fulls):,} tokens (o200k_base)"
    )
    kinds = sorted({q.kind for c in convs for q in c.questions}, key=_order)
    print("evidence = share of evidence turns sent verbatim; all = questions with all of them;")
    print("answer = expected answer text anywhere in the request; tokens = mean prompt tokens")
    header = " ".join(f"{k:>9s}" for k in kinds)
    print(
        f"{'strategy (setting)':62s} {'evid':>5s} {'all':>5s} {'answ':>4s} {'tokens':>8s} "
        f"{'%full':>6s} {header} {'ms/query':>7s}"
    )
    settings = default_settings(sweep=not args.quick)
    defaults = spec("retrieval").defaults()
    settings.append(Setting("retrieval", defaults))  # the registry's defaults, as shipped
    rows = run_recall(convs, settings, counter=counter, on_row=lambda r: print_row(r, kinds))
    print(f"(last row 'retrieval': the registry defaults {defaults})")
    best = _best_under(rows, "retrieval", 0.10)
    if best is not None:
        print(
            f"best retrieval setting at <= 10% of full: {best.label}: {best.evidence_kept:.1%} "
            f"of evidence turns at {best.full_share:.1%} of the full buffer"
        )


def _best_under(rows: list[RecallRow], name: str, share: float) -> RecallRow | None:
    fitting = [r for r in rows if r.name == name and r.full_share <= share]
    return max(fitting, key=lambda r: (r.evidence_kept, -r.full_share), default=None)


def _order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


if __name__ == "__main__":
    main()
