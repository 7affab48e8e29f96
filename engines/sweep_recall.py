"""Recall sweeps: the long-recall benchmark's questions as provider batch requests.

The grid is strategy settings x the conversation's questions (x models: one plan per
model, engines/sweep_run.py keeps them in one sweep). How it becomes batches:

* The conversation's turns are recorded, so every setting's memory is known without a
  model. Each setting replays it exactly as `engines.recall.run_setting` does; when a
  question is due, the forked strategy's request becomes one batch line, the body the
  interactive answer mode sends (`batch_body` = `build_body` without the streaming fields).
  Identical requests (two settings sending the same payload) are sent once.
* Upkeep (summaries, fact extraction) is sequential by nature: the rule-based stand-ins
  do it ("stand-in", free, the benchmark's default), or the model does it **interactively,
  in turn order, before the batch is submitted** ("interactive", list prices); every
  upkeep reply is recorded and replayed when collecting.
* Collecting runs `run_setting` again, each question answered by its collected reply and
  graded by `answer_present`, so the rows are the ones an interactive run gives.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engines.recall import (
    RecallResult,
    RecallRow,
    full_tokens,
    grade,
    request_text,
    run_setting,
    summarise,
)
from engines.sweep import (
    SweepError,
    SweepEstimate,
    SweepPlan,
    body_key,
    capturing,
    check_settings,
    custom_id_of,
    make_estimate,
    planned_estimate,
    recording,
    replaying,
)
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import REGISTRY
from memory.standins import ExtractiveSummariser, RuleExtractor, StaticReply
from memory.tokens import TokenCounter
from memory.types import Completion, ModelFn, Request
from providers import ProviderError, ProviderSettings
from providers.batch import batch_body
from scenarios.longmem import LongConversation, LongMemFormatError, parse_conversation
from storage.store import NewRequest

KIND = "recall"


@dataclass(frozen=True)
class RecallGrid:
    """What a recall sweep asks: one long conversation, and the settings to ask it through."""

    conversation: LongConversation
    settings: tuple[LaneSpec, ...]

    def validate(self) -> RecallGrid:
        if not self.settings:
            raise SweepError("choose at least one strategy setting")
        unknown = sorted({s.name for s in self.settings} - set(REGISTRY))
        if unknown:
            raise SweepError(f"unknown strategies: {', '.join(unknown)}")
        if not self.conversation.questions:
            raise SweepError("the conversation has no questions to ask")
        return self

    @property
    def cells(self) -> int:
        return len(self.settings) * len(self.conversation.questions)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "conversation": json.loads(self.conversation.to_json()),
            "settings": [s.as_dict() for s in self.settings],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RecallGrid:
        try:
            conv = parse_conversation(json.dumps(data["conversation"]))
            return cls(conv, tuple(LaneSpec.from_dict(s) for s in data["settings"]))
        except (KeyError, TypeError, LongMemFormatError) as exc:
            raise SweepError(f"the saved recall sweep is incomplete: {exc}") from None


class _Counting:
    """A stand-in upkeep function that counts its calls and their input tokens."""

    def __init__(self, fn: ModelFn, counter: TokenCounter) -> None:
        self.fn, self.counter = fn, counter
        self.calls = self.tokens = 0

    def __call__(self, request: Request) -> Completion:
        self.calls += 1
        self.tokens += self.counter.count(request_text(request))
        return self.fn(request)


def _replay(
    grid: RecallGrid,
    *,
    send: Callable[..., Any],
    upkeep: Upkeep,
    model: str = "",
) -> list[RecallRow]:
    """One row per setting: the conversation through `run_setting`, questions to `send`."""
    counter = TokenCounter()
    conv = grid.conversation
    full = full_tokens(conv, counter)
    rows = []
    for setting in grid.settings:
        results = run_setting(conv, setting.resolve(full), counter=counter, upkeep=upkeep,
                              send=send)  # fmt: skip
        label = f"{setting.sized_label} · {model}" if model else setting.sized_label
        rows.append(summarise(label, setting.name, results, model=model))
    return rows


@dataclass(frozen=True)
class DryRun:
    """A recall grid replayed with the stand-ins doing upkeep: every question's request (in
    order, duplicates kept), and the upkeep calls an interactive run would make."""

    requests: tuple[Request, ...]
    upkeep_calls: int
    upkeep_tokens: int


def _requests(grid: RecallGrid, upkeep: Upkeep) -> list[Request]:
    found: list[Request] = []

    def keep(request: Request, on_delta: Any) -> StaticReply:
        found.append(request)
        return StaticReply("")

    _replay(grid, send=keep, upkeep=upkeep)
    return found


def dry_run(grid: RecallGrid) -> DryRun:
    """The grid with no model (the same for every model: bodies are built per model later)."""
    grid.validate()
    counter = TokenCounter()
    summarize = _Counting(ExtractiveSummariser(), counter)
    extract = _Counting(RuleExtractor(), counter)
    requests = _requests(grid, Upkeep(summarize, extract))
    return DryRun(tuple(requests), summarize.calls + extract.calls,
                  summarize.tokens + extract.tokens)  # fmt: skip


def _planned(requests: Sequence[Request], settings: ProviderSettings) -> tuple[NewRequest, ...]:  # fmt: skip
    found: dict[str, NewRequest] = {}
    capture = capturing(settings, found, threading.Lock())
    for request in requests:
        capture(request, None)
    return tuple(found.values())


def estimate_recall_sweep(
    grid: RecallGrid,
    settings: ProviderSettings,
    *,
    upkeep: str = "stand-in",
    dry: DryRun | None = None,
) -> SweepEstimate:
    """Requests (identical ones merged), tokens and cost, from a model-free dry run; upkeep
    calls are counted with the stand-ins doing them (nothing is sent)."""
    check_settings(settings, upkeep)
    dry = dry or dry_run(grid)
    return _estimate(grid, settings, upkeep, dry, _planned(dry.requests, settings))


def _estimate(grid: RecallGrid, settings: ProviderSettings, upkeep: str, dry: DryRun,
              planned: tuple[NewRequest, ...]) -> SweepEstimate:  # fmt: skip
    est = make_estimate(
        settings,
        cells=grid.cells,
        requests=0,
        input_tokens=0,
        upkeep=upkeep,
        upkeep_calls=dry.upkeep_calls,
        upkeep_input_tokens=dry.upkeep_tokens,
    )
    return planned_estimate(est, planned, settings)


def prepare_recall_sweep(
    grid: RecallGrid,
    settings: ProviderSettings,
    *,
    upkeep: str = "stand-in",
    upkeep_fn: ModelFn | None = None,
    dry: DryRun | None = None,
) -> SweepPlan:
    """Every question's request as a batch request; interactive upkeep calls the model now
    (list prices) and is recorded for collecting."""
    check_settings(settings, upkeep)
    dry = dry or dry_run(grid)
    records: Mapping[str, Mapping[str, Any]] = {}
    requests = dry.requests
    if upkeep == "interactive":
        summarize, records = recording(settings, upkeep_fn)
        requests = tuple(_requests(grid, Upkeep.using(summarize)))
    planned = _planned(requests, settings)
    est = _estimate(grid, settings, upkeep, dry, planned)
    note = f"{grid.cells:,} questions x settings → {len(planned):,} distinct requests"
    return SweepPlan(grid, settings, upkeep, planned, records, est, (note,), kind=KIND)


def prepare_recall_sweeps(
    grid: RecallGrid, arms: Sequence[ProviderSettings], *, upkeep: str = "stand-in"
) -> list[SweepPlan]:
    """One plan per model from one dry run (with stand-in upkeep the conversation is
    replayed once for all models)."""
    dry = dry_run(grid)
    return [prepare_recall_sweep(grid, s, upkeep=upkeep, dry=dry) for s in arms]


def _answerer(settings: ProviderSettings, replies: Mapping[str, Any]) -> Callable[..., Any]:
    """A sender answering each request with its collected reply (an error if none yet)."""

    def answer(request: Request, on_delta: Any) -> Any:
        reply = replies.get(custom_id_of(body_key(batch_body(request, settings))))
        if reply is None:
            return StaticReply("", complete=False, model=settings.model,
                               error=ProviderError("no reply collected for this question yet"))  # fmt: skip
        return reply

    return answer


def _graded_once(
    grid: RecallGrid, arms: Sequence[ProviderSettings], replies: Mapping[str, Any]
) -> list[RecallRow]:
    """With stand-in upkeep every model was asked the same requests: replay the conversation
    once, then grade each model's replies (the rows `_replay` gives, per model, faster)."""
    counter = TokenCounter()
    conv = grid.conversation
    full = full_tokens(conv, counter)
    questions = {q.id: q for q in conv.questions}
    replayed = []
    for setting in grid.settings:
        sent: list[Request] = []

        def keep(request: Request, on_delta: Any, sent: list[Request] = sent) -> StaticReply:
            sent.append(request)
            return StaticReply("")

        results = run_setting(conv, setting.resolve(full), counter=counter, send=keep)
        replayed.append((setting, results, sent))
    rows = []
    for settings in arms:
        answer = _answerer(settings, replies)
        model = settings.model if len(arms) > 1 else ""
        for setting, results, sent in replayed:
            graded = []
            for result, request in zip(results, sent, strict=True):
                answered, text, error = grade(answer(request, None), questions[result.question])
                graded.append(replace(result, answered=answered, reply=text, error=error))
            label = f"{setting.sized_label} · {model}" if model else setting.sized_label
            rows.append(summarise(label, setting.name, graded, model=model))
    return rows


def replay_recall(
    grid: RecallGrid,
    arms: Sequence[ProviderSettings],
    *,
    upkeep: str,
    upkeep_records: Mapping[str, Mapping[str, Any]],
    replies: Mapping[str, Any],
    note: str | None = None,
) -> RecallResult:
    """The recall result of a sweep: each model's rows, every question answered by its
    collected reply (`replies`: custom_id -> Reply); one not back yet is an error."""
    if upkeep == "interactive":  # each model did its own upkeep: one replay per model
        rows: list[RecallRow] = []
        for settings in arms:
            fn = replaying(settings, upkeep_records)
            model = settings.model if len(arms) > 1 else ""
            rows += _replay(grid, send=_answerer(settings, replies), upkeep=Upkeep.using(fn),
                            model=model)  # fmt: skip
    else:
        rows = _graded_once(grid, arms, replies)
    if len(arms) == 1:
        rows = [replace(r, model=arms[0].model) for r in rows]
    full = full_tokens(grid.conversation, TokenCounter())
    return RecallResult(tuple(rows), full, (note,) if note else (),
                        " vs ".join(a.model for a in arms))  # fmt: skip
