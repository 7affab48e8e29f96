"""The standard long-memory benchmarks (LoCoMo, LongMemEval, the lab's own format) run with no
model: each strategy setting replays every conversation and, when a question is due, the
request it would send is checked. The metrics are the benchmarks' own, beside the lab's:

* evidence recall: the share of evidence turns sent verbatim (LoCoMo's retrieval recall of
  ``dia_id``s, counted on the turns the ids map to), pooled over questions;
* all evidence: the share of questions with every evidence turn in the payload;
* recall@k (LongMemEval's, turn and session level) for strategies that retrieve: the share
  of evidence turns (sessions) among the k best-scored retrieved turns (their sessions);
* answer in payload, mean prompt tokens and their share of the full buffer;
* per category (LoCoMo's names, LongMemEval's question types); adversarial (LoCoMo) and
  abstention (LongMemEval) questions are reported apart and left out of the main figures;
  a question with no evidence is counted, not scored.

The run reuses engines/recall.py's stand-ins and lane specs; it adds no ranking of its own.
Touches no file, except a `Checkpoint`'s own (a streamed run's finished conversations).
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from engines.recall import answer_present, request_text
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import spec
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.tokens import TokenCounter
from memory.types import Request
from scenarios.benchmarks import (
    BenchConversation,
    BenchQuestion,
    Dataset,
    load_path,
    sniff,
    stream_longmemeval,
)

KS = (5, 10)
# what `memory-lab recall` and the Long recall page run on a benchmark file by default
DEFAULT_SETTINGS: tuple[LaneSpec, ...] = (
    LaneSpec("full"),
    LaneSpec("window", {"k": 10}),
    LaneSpec("token_window", shares={"budget": 0.10}),
    LaneSpec("summary_buffer", shares={"budget": 0.10}),
    LaneSpec("hybrid", shares={"budget": 0.10}),
    LaneSpec("retrieval", {"k": 2, "top_k": 10, "recall_budget": 0, "neighbours": 0.0}),
)
_SCORE = re.compile(r"^turn (\d+): retrieved, score (-?[\d.]+)")


@dataclass(frozen=True)
class BenchResult:
    """One question under one setting."""

    question: str
    category: str
    apart: bool
    evidence: tuple[int, ...]
    found: tuple[int, ...]
    answer_in_payload: bool | None
    prompt_tokens: int
    full_tokens: int
    recall_at: Mapping[str, float] = field(default_factory=dict)  # "turn@5", "session@10"


@dataclass(frozen=True)
class BenchRow:
    """One setting over a dataset's questions."""

    label: str
    name: str
    questions: int  # scored: with evidence, not set apart
    evidence_recall: float | None
    all_evidence: float | None
    answer_in_payload: float | None
    mean_tokens: float
    full_share: float
    recall_at: Mapping[str, float | None]
    by_category: Mapping[str, float | None]
    apart: Mapping[str, float | None]  # adversarial / abstention: evidence recall
    no_evidence: int
    tokens_by_category: Mapping[str, float] = field(default_factory=dict)  # mean prompt tokens

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {**data, "recall_at": dict(self.recall_at), "by_category": dict(self.by_category),
                "apart": dict(self.apart),
                "tokens_by_category": dict(self.tokens_by_category)}  # fmt: skip


@dataclass(frozen=True)
class BenchReport:
    """A dataset's rows, and what the loader noted (unresolved ids, joined lines)."""

    dataset: str
    conversations: int
    questions: int
    rows: tuple[BenchRow, ...]
    unresolved: tuple[str, ...]
    notes: tuple[str, ...]
    skipped: tuple[str, ...] = ()  # files of a zip or folder left out, each with its reason

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "benchmark",
            "dataset": self.dataset,
            "conversations": self.conversations,
            "questions": self.questions,
            "rows": [r.as_dict() for r in self.rows],
            "unresolved_evidence": list(self.unresolved),
            "notes": list(self.notes),
            "skipped": list(self.skipped),
        }


def ranked_retrieved(request: Request) -> list[int]:
    """The retrieved turns best first (by the scores the strategy noted; else as listed)."""
    acc = request.account
    if acc is None or not acc.retrieved_turns:
        return []
    scores: dict[int, float] = {}
    for note in acc.notes:
        m = _SCORE.match(note)
        if m:
            scores[int(m.group(1))] = float(m.group(2))
    order = list(acc.retrieved_turns)
    return sorted(order, key=lambda t: (-scores.get(t, 0.0), order.index(t)))


def _recall_at(conv: BenchConversation, q: BenchQuestion, ranked: list[int]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        top = ranked[:k]
        out[f"turn@{k}"] = len(set(q.evidence) & set(top)) / len(q.evidence)
        if q.evidence_sessions:
            got = {conv.turn_sessions[t - 1] for t in top}
            out[f"session@{k}"] = len(set(q.evidence_sessions) & got) / len(q.evidence_sessions)
    return out


def full_tokens(conv: BenchConversation, counter: TokenCounter) -> int:
    return counter.count(conv.system) + sum(
        counter.count(u) + counter.count(a) for u, a in conv.turns
    )


def run_conversation(
    conv: BenchConversation, setting: LaneSpec, counter: TokenCounter
) -> list[BenchResult]:
    """Replay one conversation through one setting; check every question when it is due."""
    choice = setting.resolve(full_tokens(conv, counter))
    cls = spec(choice.name).cls
    strategy = choice.create(
        conv.system or "You are a helpful assistant.",
        counter=counter,
        upkeep=Upkeep(
            ExtractiveSummariser() if cls.uses_summary else None,
            RuleExtractor() if cls.uses_facts else None,
        ),
    )
    due: dict[int, list[BenchQuestion]] = {}
    for q in conv.questions:
        due.setdefault(conv.asked_at(q), []).append(q)
    system_tokens = counter.count(
        strategy.system_prompt if hasattr(strategy, "system_prompt") else conv.system
    )
    history = 0
    out: list[BenchResult] = []
    for n, (user, reply) in enumerate(conv.turns, start=1):
        strategy.commit(user, reply)
        history += counter.count(user) + counter.count(reply)
        for q in due.get(n, ()):
            request = strategy.fork().prepare(q.question)
            kept = set(request.account.kept_turns) if request.account else set()
            ranked = ranked_retrieved(request)
            retrieving = (
                bool(ranked) or bool(getattr(cls, "retrieves", False)) or choice.name == "retrieval"
            )
            out.append(
                BenchResult(
                    question=q.id,
                    category=q.category,
                    apart=q.apart,
                    evidence=q.evidence,
                    found=tuple(e for e in q.evidence if e in kept),
                    answer_in_payload=answer_present(q.answer, request_text(request))
                    if q.answer
                    else None,
                    prompt_tokens=request.tokens.content,
                    full_tokens=system_tokens + history + counter.count(q.question),
                    recall_at=_recall_at(conv, q, ranked) if retrieving and q.evidence else {},
                )
            )
    return out


def _share(found: int, total: int) -> float | None:
    return found / total if total else None


def summarise(setting: LaneSpec, results: list[BenchResult]) -> BenchRow:
    scored = [r for r in results if r.evidence and not r.apart]
    apart = [r for r in results if r.apart and r.evidence]
    answers = [
        r.answer_in_payload for r in results if r.answer_in_payload is not None and not r.apart
    ]
    keys = sorted({k for r in scored for k in r.recall_at})
    categories = sorted({r.category for r in results if not r.apart})
    by_category = {
        c: _share(sum(len(r.found) for r in scored if r.category == c),
                  sum(len(r.evidence) for r in scored if r.category == c))
        for c in categories
    }  # fmt: skip
    apart_by = {
        c: _share(sum(len(r.found) for r in apart if r.category == c),
                  sum(len(r.evidence) for r in apart if r.category == c))
        for c in sorted({r.category for r in results if r.apart})
    }  # fmt: skip
    mean_tokens = statistics.fmean(r.prompt_tokens for r in results) if results else 0.0
    mean_full = statistics.fmean(r.full_tokens for r in results) if results else 1.0
    return BenchRow(
        label=setting.sized_label,
        name=setting.name,
        questions=len(scored),
        evidence_recall=_share(
            sum(len(r.found) for r in scored), sum(len(r.evidence) for r in scored)
        ),
        all_evidence=_share(sum(1 for r in scored if len(r.found) == len(r.evidence)), len(scored)),
        answer_in_payload=(sum(answers) / len(answers)) if answers else None,
        mean_tokens=mean_tokens,
        full_share=mean_tokens / mean_full if mean_full else 0.0,
        recall_at={
            k: statistics.fmean(r.recall_at[k] for r in scored if k in r.recall_at) for k in keys
        },
        by_category=by_category,
        apart=apart_by,
        no_evidence=sum(1 for r in results if not r.evidence),
        tokens_by_category={
            c: statistics.fmean(r.prompt_tokens for r in scored if r.category == c)
            for c in categories
            if any(r.category == c for r in scored)
        },
    )


class Checkpoint:
    """A run's finished conversations, one JSON line each (its id and its results per
    setting), after a first line naming the settings. Appended as conversations finish, so
    a run stopped anywhere keeps all it finished. May touch: its own file only."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, labels: list[str]) -> dict[str, list[list[BenchResult]]]:
        """What the file holds for a run of these settings (a new file: nothing);
        ValueError when it was written by a run of other settings or is not a checkpoint."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            self._write({"settings": labels})
            return {}
        text = self.path.read_text(encoding="utf-8")
        if not text.endswith("\n"):  # the run stopped while writing its last line: redo it
            text = text[: text.rfind("\n") + 1]
            self.path.write_text(text, encoding="utf-8")
        held: dict[str, list[list[BenchResult]]] = {}
        lines = text.splitlines()
        try:
            head = json.loads(lines[0])
            if head.get("settings") != labels:
                raise ValueError(
                    f"the checkpoint {self.path.name} was made with other settings "
                    f"({', '.join(head.get('settings') or [])}): give the same ones, or "
                    "another file"
                )
            for line in lines[1:]:
                data = json.loads(line)
                held[data["id"]] = [[_result(r) for r in rs] for rs in data["results"]]
        except (IndexError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{self.path.name} is not a recall checkpoint ({exc})") from None
        return held

    def add(self, conversation: str, results: list[list[BenchResult]]) -> None:
        self._write({"id": conversation, "results": [[asdict(r) for r in rs] for rs in results]})

    def _write(self, data: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(data, ensure_ascii=False) + "\n")


def _result(data: Mapping[str, Any]) -> BenchResult:
    values = dict(data)
    for key in ("evidence", "found"):
        values[key] = tuple(values[key])
    return BenchResult(**values)


def run_stream(
    name: str,
    conversations: Iterable[BenchConversation | str],
    settings: Iterable[LaneSpec],
    *,
    counter: TokenCounter | None = None,
    on_conversation: Callable[[int], None] | None = None,
    checkpoint: Checkpoint | None = None,
) -> BenchReport:
    """`run_benchmark` over conversations read one at a time (a str: one the reader skipped,
    with why): each conversation replayed once per setting and let go, so memory holds the
    per-question results only. `on_conversation(done)` after each. With a `checkpoint`,
    each conversation's results are added to it as they finish, and a conversation it
    already holds is not replayed again: an interrupted run resumes where it stopped."""
    counter = counter or TokenCounter()
    chosen = list(settings)
    results: list[list[BenchResult]] = [[] for _ in chosen]
    unresolved: list[str] = []
    notes: list[str] = []
    skipped: list[str] = []
    done = questions = 0
    saved = checkpoint.load([s.sized_label for s in chosen]) if checkpoint is not None else {}
    for conv in conversations:
        if isinstance(conv, str):
            skipped.append(conv)
            continue
        mine = saved.get(conv.id)
        if mine is None:
            mine = [run_conversation(conv, setting, counter) for setting in chosen]
            if checkpoint is not None:
                checkpoint.add(conv.id, mine)
        for held, theirs in zip(results, mine, strict=True):
            held += theirs
        unresolved += [f"{q.id}: {i}" for q in conv.questions for i in q.unresolved]
        notes += [f"{conv.id}: {n}" for n in conv.notes]
        done += 1
        questions += len(conv.questions)
        if on_conversation is not None:
            on_conversation(done)
    rows = tuple(summarise(s, r) for s, r in zip(chosen, results, strict=True))
    return BenchReport(name, done, questions, rows, tuple(unresolved), tuple(notes), tuple(skipped))


@dataclass(frozen=True)
class Progress:
    """How far a run over a benchmark is: conversations done (a LongMemEval question is one),
    how many there are (None while a streamed file is being read), and the share done."""

    done: int
    total: int | None
    share: float


def run_benchmark(
    dataset: Dataset,
    settings: Iterable[LaneSpec],
    *,
    counter: TokenCounter | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> BenchReport:
    """Every setting over every conversation of `dataset` (one row per setting), run
    conversation by conversation, telling `on_progress` after each one."""
    total = len(dataset.conversations)

    def tell(done: int) -> None:
        if on_progress is not None:
            on_progress(Progress(done, total, done / total if total else 1.0))

    items: list[BenchConversation | str] = [*dataset.skipped, *dataset.conversations]
    return run_stream(dataset.name, items, settings, counter=counter, on_conversation=tell)


def streams(path: Path, name: str = "auto") -> bool:
    """Whether a benchmark at `path` is read as it streams (LongMemEval's large files)."""
    return not path.is_dir() and (name if name != "auto" else sniff(path)) == "longmemeval"


def run_path(
    path: Path,
    settings: Iterable[LaneSpec],
    *,
    name: str = "auto",
    limit: int | None = None,
    counter: TokenCounter | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    checkpoint: Checkpoint | None = None,
) -> BenchReport:
    """A benchmark as its authors ship it (scenarios.benchmarks.load_path's forms), the first
    `limit` conversations or all: LongMemEval streamed question by question (resumable with a
    `checkpoint`), the others loaded whole. Raises BenchmarkFormatError (a file that cannot
    be used), OSError, and ValueError (a checkpoint of other settings; `checkpoint` given for
    a file that is loaded whole)."""
    if not streams(path, name):
        if checkpoint is not None:
            raise ValueError("resuming is for LongMemEval files (read as they stream)")
        dataset = load_path(path, name)
        if limit is not None:
            dataset = Dataset(dataset.name, dataset.conversations[:limit], dataset.skipped)
        return run_benchmark(dataset, settings, counter=counter, on_progress=on_progress)
    read = [0.0]

    def tell(done: int) -> None:
        if on_progress is not None:
            share = done / limit if limit else read[0]
            on_progress(Progress(done, limit, min(1.0, share)))

    questions = stream_longmemeval(path, on_read=lambda share: read.__setitem__(0, share))
    return run_stream("longmemeval", islice(questions, limit), settings, counter=counter,
                      on_conversation=tell, checkpoint=checkpoint)  # fmt: skip


def table_rows(report: BenchReport) -> list[dict[str, Any]]:
    """The report as table rows (the Long recall page and `memory-lab recall` print these)."""

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.0f}%"

    out = []
    for r in report.rows:
        row: dict[str, Any] = {
            "setting": r.label,
            "evidence recall": pct(r.evidence_recall),
            "all evidence": pct(r.all_evidence),
            "answer in payload": pct(r.answer_in_payload),
            "mean tokens": f"{r.mean_tokens:,.0f}",
            "% of full": pct(r.full_share),
        }
        for k in (f"turn@{KS[0]}", f"session@{KS[0]}"):
            row[f"recall {k}"] = pct(r.recall_at.get(k))
        for c, v in r.by_category.items():
            row[c] = pct(v)
        for c, v in r.apart.items():
            row[f"{c} (apart)"] = pct(v)
        out.append(row)
    return out
