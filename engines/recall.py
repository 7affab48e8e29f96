"""Long-conversation recall: which strategies keep the turns that answer later questions.

Each strategy setting replays the conversation's recorded turns (no model: summaries and
facts come from the rule-based stand-ins unless model functions are given). When a question
is due, the strategy is forked and asked it; the request it would send is checked:

* evidence kept - the share of the question's evidence turns sent verbatim;
* all evidence - whether every evidence turn was sent;
* answer in payload - whether the expected answer's text appears anywhere in the request
  (system text, summary, facts, turns), when the question gives one;
* prompt tokens, and their share of what the full buffer would send at that point;
* time to build the request (prepare only; the fork is not timed).

With a model (`send`, as the survival lab takes it) each question is also answered: the
request goes out, and *answered* says whether the reply holds the expected answer
(`answer_present`, the same check as *answer in payload*). A batch sweep
(engines/sweep_recall.py) answers through the same code with its collected replies.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from lanes.lane import Sender
from memory.lane_spec import LaneSpec
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.registry import REGISTRY, spec
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.tokens import TokenCounter
from memory.types import Request
from scenarios.longmem import KINDS, LongConversation, Question


@dataclass(frozen=True)
class QuestionResult:
    """One strategy setting's request for one question."""

    label: str
    question: str
    kind: str
    evidence: tuple[int, ...]
    found: tuple[int, ...]
    answer_in_payload: bool | None
    prompt_tokens: int
    full_tokens: int
    seconds: float
    answered: bool | None = None  # the model's reply holds the answer (None: no model/answer)
    reply: str = ""
    error: str | None = None  # the model call failed (answered is then None)

    @property
    def share(self) -> float:
        return len(self.found) / len(self.evidence)


@dataclass(frozen=True)
class RecallRow:
    """One strategy setting over all questions."""

    label: str
    name: str
    evidence_kept: float  # share of all evidence turns (pooled over questions)
    all_evidence: float  # share of questions with every evidence turn
    answer_in_payload: float | None
    mean_tokens: float
    full_share: float  # mean prompt tokens / mean full-buffer tokens
    by_kind: Mapping[str, float] = field(default_factory=dict)  # evidence kept per kind
    ms_per_query: float = 0.0
    answered: float | None = None  # share of answerable questions the model answered
    errors: int = 0  # questions whose model call failed
    model: str = ""  # the model that answered ("" when none did)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "by_kind": dict(self.by_kind)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecallRow:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass(frozen=True)
class RecallResult:
    """A recall run's rows (one per setting and model) and how they were made."""

    rows: tuple[RecallRow, ...]
    full_tokens: int
    notes: tuple[str, ...] = ()
    model: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "recall",
            "rows": [r.as_dict() for r in self.rows],
            "full_tokens": self.full_tokens,
            "notes": list(self.notes),
            "model": self.model,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecallResult:
        return cls(
            rows=tuple(RecallRow.from_dict(r) for r in data["rows"]),
            full_tokens=int(data["full_tokens"]),
            notes=tuple(data.get("notes") or ()),
            model=str(data.get("model") or ""),
        )


def answer_present(answer: str, text: str) -> bool:
    """Every comma-separated part of `answer` appears in `text` (case-insensitive)."""
    lowered = text.lower()
    return all(part.strip().lower() in lowered for part in answer.split(",") if part.strip())


def request_text(request: Request) -> str:
    return "\n".join([request.system, *(m.content for m in request.messages)])


def _model_fns(choice: LaneSpec, upkeep: Upkeep) -> Upkeep:
    cls = spec(choice.name).cls
    if cls.uses_summary and upkeep.summarize is None:
        upkeep = replace(upkeep, summarize=ExtractiveSummariser())
    if cls.uses_facts and upkeep.extract is None:
        upkeep = replace(upkeep, extract=RuleExtractor())
    return upkeep


def run_setting(
    conv: LongConversation,
    choice: LaneSpec,
    *,
    counter: TokenCounter,
    upkeep: Upkeep = NO_UPKEEP,
    send: Sender | None = None,
) -> list[QuestionResult]:
    """Replay `conv` through one strategy setting and ask every question when it is due
    (and, with `send`, have the model answer it)."""
    strategy = choice.create(conv.system, counter=counter, upkeep=_model_fns(choice, upkeep))
    turns = conv.turns
    due: dict[int, list[Question]] = {}
    for q in conv.questions:
        due.setdefault(conv.asked_at(q), []).append(q)
    system_tokens = counter.count(conv.system)
    history_tokens = 0
    out: list[QuestionResult] = []
    for n, (user, reply) in enumerate(turns, start=1):
        strategy.commit(user, reply)
        history_tokens += counter.count(user) + counter.count(reply)
        for q in due.get(n, ()):
            probe = strategy.fork()
            started = time.perf_counter()
            request = probe.prepare(q.question)
            seconds = time.perf_counter() - started
            assert request.account is not None
            kept = set(request.account.kept_turns)
            found = tuple(e for e in q.evidence if e in kept)
            answered = answer_present(q.answer, request_text(request)) if q.answer else None
            full = system_tokens + history_tokens + counter.count(q.question)
            answer = _answer(send, request, q) if send is not None else (None, "", None)
            out.append(
                QuestionResult(
                    label=choice.label,
                    question=q.id,
                    kind=q.kind,
                    evidence=q.evidence,
                    found=found,
                    answer_in_payload=answered,
                    prompt_tokens=request.tokens.content,
                    full_tokens=full,
                    seconds=seconds,
                    answered=answer[0],
                    reply=answer[1],
                    error=answer[2],
                )
            )
    return out


def _answer(send: Sender, request: Request, q: Question) -> tuple[bool | None, str, str | None]:
    """(answered, reply text, error) for one question sent to the model."""
    return grade(send(request, None), q)


def grade(reply: Any, q: Question) -> tuple[bool | None, str, str | None]:
    """(answered, reply text, error) of a reply to `q`: answered when the reply holds the
    expected answer (`answer_present`); None when the call failed or `q` has no answer."""
    error = getattr(reply, "error", None)
    if error is not None or not getattr(reply, "complete", True):
        message = getattr(reply, "error_message", None) or str(error or "the reply was cut off")
        return None, reply.text, message
    return (answer_present(q.answer, reply.text) if q.answer else None), reply.text, None


def summarise(
    label: str, name: str, results: Sequence[QuestionResult], *, model: str = ""
) -> RecallRow:
    """Aggregate one setting's question results into a table row (`model`: who answered)."""
    kept = sum(len(r.found) for r in results)
    total = sum(len(r.evidence) for r in results)
    answers = [r.answer_in_payload for r in results if r.answer_in_payload is not None]
    by_kind: dict[str, float] = {}
    for kind in sorted({r.kind for r in results}, key=_kind_order):
        rows = [r for r in results if r.kind == kind]
        by_kind[kind] = sum(len(r.found) for r in rows) / sum(len(r.evidence) for r in rows)
    graded = [r.answered for r in results if r.answered is not None]
    mean_tokens = statistics.fmean(r.prompt_tokens for r in results)
    mean_full = statistics.fmean(r.full_tokens for r in results)
    return RecallRow(
        label=label,
        name=name,
        evidence_kept=kept / total,
        all_evidence=sum(1 for r in results if len(r.found) == len(r.evidence)) / len(results),
        answer_in_payload=(sum(answers) / len(answers)) if answers else None,
        mean_tokens=mean_tokens,
        full_share=mean_tokens / mean_full,
        by_kind=by_kind,
        ms_per_query=1000 * statistics.fmean(r.seconds for r in results),
        answered=(sum(graded) / len(graded)) if graded else None,
        errors=sum(1 for r in results if r.error),
        model=model,
    )


def _kind_order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


def full_tokens(conv: LongConversation, counter: TokenCounter) -> int:
    """What the full buffer holds after the last turn (system prompt and all turns)."""
    turns = conv.turns
    return counter.count(conv.system) + sum(counter.count(u) + counter.count(a) for u, a in turns)


def default_settings(*, sweep: bool = False) -> list[LaneSpec]:
    """Every strategy at settings spread over the token range (budgets as shares of full).

    `sweep` adds more retrieval and hybrid settings (recent turns, neighbour weight)."""
    shares = (0.025, 0.05, 0.10)
    settings = [LaneSpec("full")]
    settings += [LaneSpec("window", {"k": k}) for k in (10, 40)]
    settings += [LaneSpec("token_window", shares={"budget": p}) for p in shares]
    settings += [LaneSpec("summary")]
    settings += [LaneSpec("summary_buffer", shares={"budget": p}) for p in shares]
    settings += [LaneSpec("entity")]
    for r in (0.0, 0.25, 0.5) if sweep else (0.5,):
        settings += [LaneSpec("hybrid", {"recall_share": r}, shares={"budget": p}) for p in shares]
    settings += [LaneSpec("retrieval", {"k": 2, "top_k": 2, "recall_budget": 0, "neighbours": 0.0})]
    settings += [
        LaneSpec("retrieval", {"k": 2, "top_k": 20, "recall_budget": 0, "neighbours": 0.0})
    ]
    weights = (0.0, 0.25, 0.5, 1.0) if sweep else (0.0, 0.25)
    recents = (0, 2, 4) if sweep else (2,)
    for p in shares:
        for w in weights:
            for k in recents:
                params = {"k": k, "top_k": 200, "neighbours": w}
                settings.append(LaneSpec("retrieval", params, shares={"recall_budget": p}))
    return settings


def every_setting() -> dict[str, LaneSpec]:
    """`default_settings`, the retrieval strategy at its own defaults, and every other
    registered strategy (a plugin's too) at its defaults, by label."""
    settings = default_settings()
    settings.append(LaneSpec("retrieval", spec("retrieval").defaults()))
    have = {s.name for s in settings}
    settings += [LaneSpec(name) for name in REGISTRY if name not in have]
    return {s.sized_label: s for s in settings}


def run_recall(
    convs: Sequence[LongConversation],
    settings: Iterable[LaneSpec],
    *,
    counter: TokenCounter | None = None,
    upkeep: Upkeep = NO_UPKEEP,
    on_row: Callable[[RecallRow], None] | None = None,
    send: Sender | None = None,
    model: str = "",
) -> list[RecallRow]:
    """One table row per setting, pooled over the conversations' questions; with `send`,
    the model (named `model` in the rows) answers every question."""
    counter = counter or TokenCounter()
    fulls = [full_tokens(c, counter) for c in convs]
    rows = []
    for setting in settings:
        results: list[QuestionResult] = []
        for conv, full in zip(convs, fulls, strict=True):
            choice = setting.resolve(full)
            results += run_setting(conv, choice, counter=counter, upkeep=upkeep, send=send)
        row = summarise(setting.sized_label, setting.name, results, model=model)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows
