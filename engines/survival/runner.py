"""Running the fact-survival lab: each strategy as a `Lane` over one scripted conversation.

For every fact, strategy and probe turn N after the fact is stated, it gives two verdicts,
kept apart because they answer different questions (verdicts.py):

* in the payload - is the fact's current value (or only a stale one) in the request sent at
  turn N (a kept turn, the summary or the facts block)? Deterministic; numbers are matched in
  any form (memory/numbers.py).
* recalled - does the model's reply to the probe contain the current value (or a stale one)?

Probes are sent from a `fork()` of the lane's strategy, so probing never changes the
conversation. With no model ("payload only") replies are fixed and upkeep is done by
rule-based stand-ins, and every row says so (`upkeep`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from engines.survival.config import ScriptTurn, SurvivalConfig, script
from engines.survival.facts import Fact
from engines.survival.results import ProbeRow, Progress
from engines.survival.verdicts import (
    ERROR,
    LEAK_FLAG,
    payload_check,
    reply_state,
    state_of,
    verdict_of,
)
from lanes.lane import OVERFLOW, Lane, LaneTurn, ReplyLike, Sender
from memory.errors import ContextOverflow, MemoryLabError
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.numbers import Answer
from memory.registry import spec
from memory.standins import (
    ExtractiveSummariser,
    RuleExtractor,
    StaticReply,
    fixed_sender,
)
from memory.tokens import TokenCounter
from memory.types import Completion, ModelFn, Request


class Cancelled(BaseException):  # noqa: N818 - BaseException so upkeep wrappers don't swallow it
    """Raised inside a lane when the run is cancelled (caught by the runner)."""


@dataclass(frozen=True)
class Hooks:
    """How a live run reports and stops: progress, each row, a cancel flag, expected calls."""

    on_progress: Callable[[Progress], None] | None = None
    on_row: Callable[[ProbeRow], None] | None = None
    cancel: threading.Event | None = None
    expected_calls: int | None = None


class _Runner:
    """One run: lanes in threads, counted calls, progress, cancellation."""

    def __init__(
        self,
        config: SurvivalConfig,
        models: tuple[Sender | None, Upkeep],
        counter: TokenCounter,
        hooks: Hooks = Hooks(),
        *,
        count_stand_ins: bool = False,
        stand_in: bool = False,
        turns: Sequence[ScriptTurn] | None = None,
    ) -> None:
        send, given = models
        on_progress, on_row = hooks.on_progress, hooks.on_row
        cancel, expected_calls = hooks.cancel, hooks.expected_calls
        self.config = config
        self.send = send
        self.counter = counter
        self.on_progress = on_progress
        self.on_row = on_row
        self.cancel = cancel or threading.Event()
        self.lock = threading.Lock()
        self.rows: list[ProbeRow] = []
        self.notes: list[str] = []
        self.provider_calls = 0
        self.maintenance_calls = 0
        self.reply_calls = 0
        self.probe_calls = 0
        self.prompt_tokens = 0
        self.maintenance_tokens = 0
        self.output_tokens = 0

        # upkeep by a model is counted as calls; rule-based stand-ins cost nothing
        def counted(fn: ModelFn | None) -> ModelFn | None:
            if fn is None or (
                isinstance(fn, ExtractiveSummariser | RuleExtractor) and not count_stand_ins
            ):
                return fn
            return self._counted_model(fn)

        self.upkeep = Upkeep(counted(given.summarize), counted(given.extract))
        self.script = list(turns) if turns is not None else script(config)
        self.stand_in = stand_in
        self.rows_total = config.rows_total
        self.expected = expected_calls or 0
        self.model: str | None = None

    # --- counted calls -----------------------------------------------------------------

    def _check(self) -> None:
        if self.cancel.is_set():
            raise Cancelled()

    def _progress(self) -> None:
        if self.on_progress is None:
            return
        done = self.provider_calls + self.maintenance_calls
        self.on_progress(Progress(done, max(self.expected, done), len(self.rows), self.rows_total))

    def _counted_model(self, fn: ModelFn) -> ModelFn:
        def model(request: Request) -> Completion:
            self._check()
            completion = fn(request)
            with self.lock:
                self.maintenance_calls += 1
                self.maintenance_tokens += request.tokens.content
                self.output_tokens += self.counter.count(completion.text or "")
                self._progress()
            return completion

        return model

    def _call(self, request: Request, kind: str) -> ReplyLike:
        assert self.send is not None
        self._check()
        try:
            reply = self.send(request, None)
        except MemoryLabError:
            raise
        except Exception as exc:  # a provider should never raise; if it does, record it
            reply = StaticReply("", complete=False, error=exc, model=None)
        with self.lock:
            self.provider_calls += 1
            if kind == "probe":
                self.probe_calls += 1
            else:
                self.reply_calls += 1
            self.prompt_tokens += request.tokens.content
            self.output_tokens += self.counter.count(reply.text or "")
            if reply.model and not self.model:
                self.model = reply.model
            self._progress()
        return reply

    def _reply_sender(self) -> Sender:
        def send(request: Request, on_delta: Callable[[str], None] | None) -> ReplyLike:
            return self._call(request, "reply")

        return send

    # --- one lane ------------------------------------------------------------------------

    def _advance(self, lane: Lane, st: ScriptTurn) -> LaneTurn | None:
        """Run one scripted turn on the main line; None if the lane cannot go on."""
        if self.config.replies == "fixed" or self.send is None or st.scripted:
            record = lane.run(st.turn, st.user, fixed_sender(st.fixed_reply))
            return record if record.ok else None
        sender = self._reply_sender()
        record = lane.run(st.turn, st.user, sender)
        if record.ok:
            return record
        if record.status == OVERFLOW:
            return None
        record = lane.retry(sender)
        if record.ok:
            return record
        note = (
            f"{lane.name}: the reply to turn {st.turn} failed twice ({record.error}); "
            "a fixed reply was used so the conversation could go on"
        )
        with self.lock:
            self.notes.append(note)
        record = lane.retry(fixed_sender(st.fixed_reply))
        return record if record.ok else None

    def _row(self, **values: Any) -> None:
        row = ProbeRow(**values)
        with self.lock:
            self.rows.append(row)
            if self.on_row is not None:
                self.on_row(row)
            self._progress()

    def _upkeep(self, choice: LaneSpec) -> str:
        if not spec(choice.name).needs_model:
            return "none"
        return "stand-in" if self.stand_in else "model"

    def _probe(self, lane: Lane, choice: LaneSpec, n: int, fact: Fact, spent: int,
               maint_tokens: int, maint_calls: int) -> None:  # fmt: skip
        common = _probe_fields(choice, n, fact, self._upkeep(choice))
        fork = lane.strategy.fork()
        try:
            request = fork.prepare(fact.probe)
        except ContextOverflow as exc:
            self._error_row(common, str(exc), spent, maint_tokens, maint_calls)
            return
        current_text, stale_text = fact.expected_at(n)
        current = [Answer(a) for a in current_text]
        stale = [Answer(a) for a in stale_text]
        in_payload, where = payload_check(request, fork, current)
        has_stale, _ = payload_check(request, fork, stale)
        payload_state = state_of(in_payload, has_stale)
        upkeep = sum(c.tokens.content for c in request.maintenance)
        reply_text, recalled, matched, error, latency = "", None, None, None, None
        recall_state = ""
        billed_in = billed_out = None
        if self.send is not None:
            reply = self._call(request, "probe")
            reply_text = reply.text or ""
            latency = reply.latency_s
            usage = reply.usage
            billed_in = getattr(usage, "input", None) if usage else None
            billed_out = getattr(usage, "output", None) if usage else None
            if reply.error is not None or not reply.complete:
                error = (
                    f"{type(reply.error).__name__}: {reply.error}"
                    if reply.error
                    else ("the reply stream ended early")
                )
            if reply_text or error is None:
                recall_state, matched = reply_state(reply_text, current, stale)
                recalled = matched is not None
        acc = request.account
        self._row(
            **common,
            in_payload=in_payload,
            found_in=where,
            recalled=recalled,
            matched=matched,
            verdict=verdict_of(
                in_payload,
                recalled,
                error,
                payload_state=payload_state,
                recall_state=recall_state,
            ),
            flag=LEAK_FLAG if recalled and not in_payload else "",
            reply=reply_text,
            probe_prompt_tokens=request.tokens.content,
            prompt_tokens_spent=spent + request.tokens.content,
            maintenance_tokens=maint_tokens + upkeep,
            maintenance_calls=maint_calls + len(request.maintenance),
            billed_input=billed_in,
            billed_output=billed_out,
            kept_turns=tuple(acc.kept_turns) if acc else (),
            summarised_turns=tuple(acc.summarised_turns) if acc else (),
            error=error,
            latency_s=latency,
            payload_state=payload_state,
            recall_state=recall_state,
        )

    def _error_rows(self, choice: LaneSpec, from_n: int, message: str, spent: int) -> None:
        for n in self.config.probe_turns:
            if n < from_n:
                continue
            for fact in self.config.facts:
                if n > fact.plant_turn:
                    fields = _probe_fields(choice, n, fact, self._upkeep(choice))
                    self._error_row(fields, message, spent)

    def _error_row(
        self,
        common: dict[str, Any],
        message: str,
        spent: int,
        maint_tokens: int = 0,
        maint_calls: int = 0,
    ) -> None:
        """A row for a probe that could not run: no verdict, the reason in `error`."""
        self._row(
            **common,
            in_payload=None,
            found_in=(),
            recalled=None,
            matched=None,
            verdict=ERROR,
            flag="",
            reply="",
            probe_prompt_tokens=0,
            prompt_tokens_spent=spent,
            maintenance_tokens=maint_tokens,
            maintenance_calls=maint_calls,
            billed_input=None,
            billed_output=None,
            kept_turns=(),
            summarised_turns=(),
            error=message,
        )

    def run_lane(self, choice: LaneSpec) -> None:
        try:
            self._run_lane(choice)
        except Cancelled:
            return

    def _run_lane(self, choice: LaneSpec) -> None:
        self._check()
        lane = Lane(
            choice.name,
            self.config.system_prompt,
            counter=self.counter,
            params=choice.params,
            upkeep=self.upkeep,
        )
        probes = set(self.config.probe_turns)
        last = self.config.last_turn
        spent = maint_tokens = maint_calls = 0
        for t in range(1, last + 1):
            if t in probes:
                for fact in self.config.facts:
                    if t > fact.plant_turn:  # a probe tests the facts stated before it
                        self._probe(lane, choice, t, fact, spent, maint_tokens, maint_calls)
            if t == last:
                break
            st = self.script[t - 1]
            self._check()
            record = self._advance(lane, st)
            if record is None:
                failed = lane.turns[-1] if lane.turns else None
                reason = failed.error if failed is not None else "unknown error"
                message = f"the conversation stopped at turn {t}: {reason}"
                with self.lock:
                    self.notes.append(f"{choice.label}: {message}")
                self._error_rows(choice, t + 1, message, spent)
                return
            spent += record.counted
            maint_tokens += sum(m.counted for m in record.maintenance)
            maint_calls += len(record.maintenance)

    def run(self, workers: int) -> None:
        choices = list(self.config.strategies)
        if workers <= 1 or len(choices) == 1:
            for choice in choices:
                self.run_lane(choice)
            return
        with ThreadPoolExecutor(max_workers=min(workers, len(choices))) as pool:
            futures = [pool.submit(self.run_lane, c) for c in choices]
            for f in futures:
                f.result()


def _probe_fields(choice: LaneSpec, n: int, fact: Fact, upkeep: str) -> dict[str, Any]:
    """The fields every row of one probe carries, whatever its outcome."""
    return {
        "strategy": choice.label,
        "strategy_name": choice.name,
        "params": dict(choice.params),
        "fact": fact.key,
        "fact_label": fact.title,
        "plant_turn": fact.plant_turn,
        "probe_turn": n,
        "probe": fact.probe,
        "answers": fact.expected_at(n)[0],
        "stale_answers": fact.expected_at(n)[1],
        "speaker": fact.speaker,
        "upkeep": upkeep,
    }
