"""Long-conversation recall: the retrieval ranking on two generated worlds, and every strategy.

The default run prints, side by side in one run, the plain BM25 ranking ("bm25") and the
default one ("bridged", memory/ranking.py) on the first generated world
(scenarios/longmem_world.py) and the harder one (scenarios/longmem_hard.py: questions worded
away from their evidence): per question kind, the share of evidence turns sent, the share of
questions with all their evidence and prompt tokens as a share of the full buffer's; then
each scoring term alone and left out (points of evidence kept, ms per query).

`--strategies` runs the sweep of every strategy instead. For each setting, pooled over the conversations' questions: the share of evidence turns sent
verbatim, the share of questions with all their evidence, the share whose expected answer
appears anywhere in the request (summaries and fact blocks count here), mean prompt tokens
and their share of the full buffer, evidence kept per question kind, and time per query.
Summaries and facts come from the rule-based stand-ins (no model).

    .venv/bin/python bench/bench_recall.py                 # rankings x worlds, 4 seeds each
    .venv/bin/python bench/bench_recall.py --strategies    # every strategy, old world, sweep
    .venv/bin/python bench/bench_recall.py --strategies --seeds 0-7 --quick
    .venv/bin/python bench/bench_recall.py --file my_log.json          # your own (format:
    .venv/bin/python bench/bench_recall.py --transcript chat.json --questions q.json
                                                       # scenarios/longmem.py's docstring)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from memory.lane_spec import LaneSpec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory.dense import available as dense_available  # noqa: E402
from memory.ranking import DEFAULT_RANKING, RANKINGS, register_ranking  # noqa: E402

# the candidates at the weights measured: each alone on plain BM25, and each added to or left
# out of the default (registered before the registry reads the ranking names)
CANDIDATES: dict[str, dict[str, float]] = {
    "entities": {"entities": 0.5},
    "expand": {"expand": 6, "expand_from": 3, "expand_weight": 0.3},
    "sessions": {"sessions": 0.3},
    "time": {"time": 1.0},
}
if dense_available():  # only where the wordllama wheel is installed
    CANDIDATES["dense"] = {"dense": 1.0}
TERMS = tuple(CANDIDATES)
_DEFAULT = RANKINGS[DEFAULT_RANKING]
_PLAIN = RANKINGS["bm25"]


def _in_default(term: str) -> bool:
    return getattr(_DEFAULT, term) != getattr(_PLAIN, term)


for _term, _values in CANDIDATES.items():
    register_ranking(f"bm25+{_term}", replace(_PLAIN, **_values))
    if _in_default(_term):  # left out
        _off = {k: getattr(_PLAIN, k) for k in _values}
        register_ranking(f"{DEFAULT_RANKING}-{_term}", replace(_DEFAULT, **_off))
    else:  # added
        register_ranking(f"{DEFAULT_RANKING}+{_term}", replace(_DEFAULT, **_values))

from engines.recall import (  # noqa: E402
    QuestionResult,
    RecallRow,
    default_settings,
    full_tokens,
    run_recall,
    run_setting,
)
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
from scenarios.longmem_hard import generate as generate_hard  # noqa: E402
from scenarios.longmem_world import generate  # noqa: E402

SHARES = (0.05, 0.10)  # the retrieved block's budget, as a share of the full buffer


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
    parser.add_argument("--strategies", action="store_true", help="every strategy (old world)")
    parser.add_argument("--no-terms", action="store_true", help="skip the per-term table")
    args = parser.parse_args()
    if not (args.strategies or args.file or args.transcript):
        compare(seeds(args.seeds), terms=not args.no_terms)
        return
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
    settings.append(LaneSpec("retrieval", defaults))  # the registry's defaults, as shipped
    rows = run_recall(convs, settings, counter=counter, on_row=lambda r: print_row(r, kinds))
    print(f"(last row 'retrieval': the registry defaults {defaults})")
    best = _best_under(rows, "retrieval", 0.10)
    if best is not None:
        print(
            f"best retrieval setting at <= 10% of full: {best.label}: {best.evidence_kept:.1%} "
            f"of evidence turns at {best.full_share:.1%} of the full buffer"
        )


def _run(
    convs: list[LongConversation], ranking: str, share: float, counter: TokenCounter
) -> tuple[list[QuestionResult], float]:
    """Every question of `convs` through retrieval (2 recent turns, its default top_k and
    neighbours) with `ranking`, the retrieved block in `share` of full; and the seconds."""
    out: list[QuestionResult] = []
    started = time.perf_counter()
    for conv in convs:
        setting = LaneSpec(
            "retrieval", {"k": 2, "ranking": ranking}, shares={"recall_budget": share}
        )
        out += run_setting(conv, setting.resolve(full_tokens(conv, counter)), counter=counter)
    return out, time.perf_counter() - started


def _figures(results: list[QuestionResult]) -> tuple[float, float, float]:
    """(evidence kept, questions with all evidence, prompt tokens / full's) of `results`."""
    kept = sum(len(r.found) for r in results) / sum(len(r.evidence) for r in results)
    whole = sum(len(r.found) == len(r.evidence) for r in results) / len(results)
    share = statistics.fmean(r.prompt_tokens for r in results) / statistics.fmean(
        r.full_tokens for r in results
    )
    return kept, whole, share


def compare(seed_list: list[int], *, terms: bool = True) -> None:
    """The rankings x worlds table, per question kind; then each term's points and ms."""
    counter = TokenCounter()
    worlds = {
        "old": [generate(s) for s in seed_list],
        "hard": [generate_hard(s) for s in seed_list],
    }
    for name, convs in worlds.items():
        print(
            f"world {name}: {len(convs)} conversations (seeds {seed_list[0]}-{seed_list[-1]}), "
            f"{sum(len(c.turns) for c in convs):,} turns, "
            f"{sum(len(c.questions) for c in convs)} questions"
        )
    print("retrieval, 2 recent turns, retrieved block in 5% / 10% of the full buffer's tokens;")
    print("evid = evidence turns sent, all = questions with all of them, %full = prompt tokens")
    print(
        f"{'world':5s} {'ranking':8s} {'budget':>6s} {'kind':11s} {'n':>4s} {'evid':>5s} "
        f"{'all':>5s} {'%full':>6s}"
    )
    ranked = {}
    for name, convs in worlds.items():
        for ranking in ("bm25", DEFAULT_RANKING):
            for share in SHARES:
                results, seconds = _run(convs, ranking, share, counter)
                ranked[name, ranking, share] = results
                kinds = sorted({r.kind for r in results}, key=_order)
                for kind in ("all", *kinds):
                    rows = results if kind == "all" else [r for r in results if r.kind == kind]
                    kept, whole, part = _figures(rows)
                    print(
                        f"{name:5s} {ranking:8s} {share:6.0%} {kind:11s} {len(rows):4d} "
                        f"{kept:5.0%} {whole:5.0%} {part:6.1%}"
                    )
                ms = 1000 * statistics.fmean(r.seconds for r in results)
                print(
                    f"{'':5s} {ranking:8s} {share:6.0%} replay: {seconds / len(worlds[name]):.2f} "
                    f"s per conversation with its questions, {ms:.2f} ms per query",
                    flush=True,
                )
    if terms:
        term_table(worlds, counter)


def term_table(worlds: dict[str, list[LongConversation]], counter: TokenCounter) -> None:
    """Each scoring term alone on bm25, and added to or left out of the default: evidence
    kept, points against bm25 / the default, and ms per query (all measured in this run)."""
    print("\nscoring terms: evidence kept, points vs bm25 (x+term) or vs the default, ms/query")
    names = ["bm25", *(f"bm25+{t}" for t in TERMS), DEFAULT_RANKING]
    names += [f"{DEFAULT_RANKING}{'-' if _in_default(t) else '+'}{t}" for t in TERMS]
    columns = [(w, p) for w in worlds for p in SHARES]
    print(f"{'ranking':18s} " + " ".join(f"{f'{w} {p:.0%}':>20s}" for w, p in columns))
    base: dict[tuple[str, str, float], float] = {}
    for ranking in names:
        cells = []
        for world, share in columns:
            results, _ = _run(worlds[world], ranking, share, counter)
            kept = _figures(results)[0]
            ms = 1000 * statistics.fmean(r.seconds for r in results)
            base[ranking, world, share] = kept
            ref = "bm25" if ranking.startswith("bm25+") else None
            if ranking.startswith((f"{DEFAULT_RANKING}-", f"{DEFAULT_RANKING}+")):
                ref = DEFAULT_RANKING
            if ranking == DEFAULT_RANKING:
                ref = "bm25"
            delta = "" if ref is None else f"{100 * (kept - base[ref, world, share]):+5.1f}"
            cells.append(f"{kept:5.1%} {delta:>5s} {ms:4.1f}ms")
        print(f"{ranking:18s} " + " ".join(f"{c:>20s}" for c in cells), flush=True)


def _best_under(rows: list[RecallRow], name: str, share: float) -> RecallRow | None:
    fitting = [r for r in rows if r.name == name and r.full_share <= share]
    return max(fitting, key=lambda r: (r.evidence_kept, -r.full_share), default=None)


def _order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


if __name__ == "__main__":
    main()
