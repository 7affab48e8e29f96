"""A lane: one memory strategy talking to one provider, turn after turn.

A lane turn is recorded as a `LaneTurn`, plain data (JSON-ready) that the UI draws and the
store saves. What a failed turn means for memory is defined here: a turn whose call fails
(or whose stream breaks) is NOT committed to the lane's memory; it stays visible as a gap
marked with its error, and `Lane.retry` can resend it while it is still the latest turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from memory.errors import ContextOverflow, MemoryLabError
from memory.registry import create, spec
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter
from memory.types import Completion, MaintenanceCall, ModelFn, Request

OK, ERROR, OVERFLOW, INCOMPLETE = "ok", "error", "overflow", "incomplete"


class ReplyLike(Protocol):
    """What a provider returns (providers.Reply satisfies it); read-only, so frozen
    dataclasses fit."""

    @property
    def text(self) -> str: ...

    @property
    def body(self) -> Mapping[str, Any] | None: ...

    @property
    def complete(self) -> bool: ...

    @property
    def latency_s(self) -> float | None: ...

    @property
    def ttft_s(self) -> float | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def usage(self) -> Any: ...

    @property
    def error(self) -> Exception | None: ...


# sender(request, on_delta) -> reply: the provider call, with settings already bound
Sender = Callable[[Request, Callable[[str], None] | None], ReplyLike]


@dataclass(frozen=True)
class LaneTurn:
    """One lane's record of one conversation turn: what was sent, what came back, what it cost."""

    lane: str
    turn: int
    user: str
    status: str
    reply: str = ""
    error: str | None = None
    error_kind: str | None = None
    body: dict[str, Any] | None = None
    n_messages: int = 0
    counted: int = 0
    counted_overhead: int = 0
    estimate: bool = True
    billed_input: int | None = None
    billed_output: int | None = None
    maintenance: tuple[dict[str, Any], ...] = ()
    account: dict[str, Any] = field(default_factory=dict)
    latency_s: float | None = None
    ttft_s: float | None = None
    model: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def maintenance_tokens(self) -> int:
        """Tokens spent on this turn's upkeep calls (billed where known, else counted input)."""
        return sum(m["input"] + m["output"] for m in self.maintenance)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LaneTurn:
        values = dict(data)
        values["maintenance"] = tuple(values.get("maintenance") or ())
        return cls(**values)


def maintenance_record(call: MaintenanceCall) -> dict[str, Any]:
    """A maintenance call as plain data: kind, outcome, its request body and its tokens."""
    usage = call.usage
    billed_in = usage.input if usage and usage.input is not None else None
    billed_out = usage.output if usage and usage.output is not None else None
    return {
        "kind": call.kind,
        "ok": call.ok,
        "error": call.error,
        "reply": call.reply,
        "counted": call.tokens.content,
        "billed_input": billed_in,
        "billed_output": billed_out,
        "input": billed_in if billed_in is not None else call.tokens.content,
        "output": billed_out or 0,
        "body": dict(call.body)
        if call.body
        else {
            "system": call.request.system,
            "messages": [m.as_dict() for m in call.request.messages],
        },
    }


def _no_model(request: Request) -> Completion:
    raise RuntimeError("no model calls while estimating")


class Lane:
    """A strategy instance plus the record of every turn it ran."""

    def __init__(
        self,
        strategy_name: str,
        system_prompt: str,
        *,
        counter: TokenCounter,
        params: Mapping[str, Any] | None = None,
        summarize: ModelFn | None = None,
        extract: ModelFn | None = None,
    ) -> None:
        self.name = strategy_name
        self.spec = spec(strategy_name)
        self.params = dict(params or {})
        self.counter = counter
        self.strategy: Strategy = create(
            strategy_name,
            system_prompt,
            counter=counter,
            summarize=summarize,
            extract=extract,
            params=self.params,
        )
        self.turns: list[LaneTurn] = []
        self._turn_numbers: list[int] = []  # strategy history index i -> conversation turn

    @property
    def title(self) -> str:
        return self.spec.title

    def conversation_turn(self, index: int) -> int:
        """The conversation turn number of the strategy's history entry `index` (1-based)."""
        return self._turn_numbers[index - 1]

    def _account(self, request: Request) -> dict[str, Any]:
        acc = request.account
        if acc is None:
            return {}
        conv = self.conversation_turn
        return {
            "kept": [conv(i) for i in acc.kept_turns],
            "dropped": [conv(i) for i in acc.dropped_turns],
            "summarised": [conv(i) for i in acc.summarised_turns],
            "retrieved": [conv(i) for i in acc.retrieved_turns],
            "summary": acc.summary,
            "facts": dict(acc.facts) if acc.facts is not None else None,
            "budget": acc.budget,
            "notes": list(acc.notes),
        }

    def run(
        self,
        turn: int,
        user_text: str,
        send: Sender,
        on_delta: Callable[[str], None] | None = None,
    ) -> LaneTurn:
        """Run one turn: build the request, send it, commit the reply; never raises for a
        provider failure or an overflow — the LaneTurn says what happened."""
        try:
            request = self.strategy.prepare(user_text)
        except ContextOverflow as exc:
            record = LaneTurn(
                self.name, turn, user_text, OVERFLOW, error=str(exc), error_kind="ContextOverflow"
            )
            return self._store(record)
        prep_calls = [maintenance_record(c) for c in request.maintenance]
        base = {
            "lane": self.name,
            "turn": turn,
            "user": user_text,
            "n_messages": len(request.messages) + 1,
            "counted": request.tokens.content,
            "counted_overhead": request.tokens.with_overhead,
            "estimate": request.tokens.estimate,
            "account": self._account(request),
        }
        try:
            reply = send(request, on_delta)
        except MemoryLabError:
            raise
        except Exception as exc:  # a provider must not take the lane down: record it
            record = LaneTurn(
                **base,
                status=ERROR,
                error=f"{type(exc).__name__}: {exc}",
                error_kind=type(exc).__name__,
                maintenance=tuple(prep_calls),
            )
            return self._store(record)
        usage = reply.usage
        fields = {
            **base,
            "reply": reply.text,
            "body": dict(reply.body) if reply.body is not None else None,
            "billed_input": getattr(usage, "input", None) if usage else None,
            "billed_output": getattr(usage, "output", None) if usage else None,
            "latency_s": reply.latency_s,
            "ttft_s": reply.ttft_s,
            "model": reply.model,
        }
        if reply.error is not None or not reply.complete:
            status = INCOMPLETE if reply.text else ERROR
            error = reply.error
            message = str(error) if error is not None else "the reply stream ended early"
            kind = type(error).__name__ if error is not None else "Incomplete"
            record = LaneTurn(
                **fields,
                status=status,
                error=message,
                error_kind=kind,
                maintenance=tuple(prep_calls),
            )
            return self._store(record)
        self._turn_numbers.append(turn)
        calls = self.strategy.commit(user_text, reply.text)
        record = LaneTurn(
            **fields,
            status=OK,
            maintenance=tuple(prep_calls + [maintenance_record(c) for c in calls]),
        )
        return self._store(record)

    def _store(self, record: LaneTurn) -> LaneTurn:
        if self.turns and self.turns[-1].turn == record.turn:
            self.turns[-1] = record  # a retry replaces the failed attempt
        else:
            self.turns.append(record)
        return record

    def memory_state(self) -> dict[str, Any]:
        """The lane's memory as plain data (strategy, parameters, memory, turn numbers), without
        the turn records: what a store saves after every turn."""
        return {
            "strategy": self.name,
            "params": dict(self.params),
            "memory": self.strategy.snapshot(),
            "turn_numbers": list(self._turn_numbers),
        }

    def snapshot(self) -> dict[str, Any]:
        """The lane as plain data: strategy, parameters, memory state and every turn record."""
        return {**self.memory_state(), "turns": [t.as_dict() for t in self.turns]}

    def restore(self, data: Mapping[str, Any]) -> None:
        """Load a `snapshot` into this fresh lane (same strategy and parameters)."""
        self.strategy.restore(dict(data["memory"]))
        self._turn_numbers = [int(t) for t in data["turn_numbers"]]
        self.turns = [LaneTurn.from_dict(t) for t in data["turns"]]

    def next_turn_tokens(self, sample_text: str) -> int | None:
        """Prompt tokens the next turn would send for a message like `sample_text` (probed on a
        fork, so nothing changes; maintenance a real turn would run first is skipped)."""
        probe = self.strategy.fork()
        probe.summarize = probe.extract = _no_model
        try:
            return probe.prepare(sample_text).tokens.with_overhead
        except ContextOverflow:
            return None

    def can_retry(self, latest_turn: int) -> bool:
        """A failed turn can be retried while it is the conversation's latest turn."""
        return bool(self.turns) and self.turns[-1].turn == latest_turn and not self.turns[-1].ok

    def retry(self, send: Sender, on_delta: Callable[[str], None] | None = None) -> LaneTurn:
        """Resend the latest (failed) turn's user message."""
        last = self.turns[-1]
        if last.ok:
            raise ValueError("the latest turn of this lane succeeded; nothing to retry")
        return self.run(last.turn, last.user, send, on_delta)
