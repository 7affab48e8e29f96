"""A lane: one memory strategy talking to one provider, turn after turn.

A lane turn is recorded as a `LaneTurn`, plain data (JSON-ready) that the UI draws and the
store saves. What a failed turn means for memory is defined here: a turn whose call fails
(or whose stream breaks) is NOT committed to the lane's memory; it stays visible as a gap
marked with its error, and `Lane.retry` can resend it while it is still the latest turn.
A cancelled turn (the user pressed Stop) is recorded as `cancelled` and, like a failed one,
leaves nothing in memory: the turn runs on a fork of the strategy that is dropped on cancel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Protocol

from memory.errors import ContextOverflow, MemoryLabError
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.registry import create, spec
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter
from memory.types import Completion, MaintenanceCall, Part, Request

OK, ERROR, OVERFLOW, INCOMPLETE = "ok", "error", "overflow", "incomplete"
CANCELLED = "cancelled"
CANCELLED_NOTE = "stopped by the user: this turn is not in the lane's memory"


class TurnCancelled(Exception):  # noqa: N818 (a signal, not an error)
    """Raised from a stream callback to stop a reply the user cancelled (closes the stream)."""


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


class PriceLike(Protocol):
    """USD per million input and output tokens (providers' `Price` satisfies it)."""

    @property
    def input_per_m(self) -> float: ...

    @property
    def output_per_m(self) -> float: ...


@dataclass(frozen=True)
class TurnAccount:
    """What a lane's request held, in conversation turn numbers: the memory core's `Account`
    translated from strategy history indices to the turns the user sees."""

    kept: tuple[int, ...] = ()
    dropped: tuple[int, ...] = ()
    summarised: tuple[int, ...] = ()
    retrieved: tuple[int, ...] = ()
    summary: str | None = None
    facts: dict[str, Any] | None = None
    budget: int | None = None
    notes: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()  # the core's parts, their turns as conversation turns

    def __bool__(self) -> bool:
        return self != TurnAccount()

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("kept", "dropped", "summarised", "retrieved", "notes"):
            data[name] = list(data[name])
        data["parts"] = [[p.name, p.tokens, list(p.turns)] for p in self.parts]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> TurnAccount:
        if not data:
            return cls()
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("kept", "dropped", "summarised", "retrieved", "notes"):
            values[name] = tuple(values.get(name) or ())
        values["parts"] = tuple(
            p if isinstance(p, Part) else Part(str(p[0]), int(p[1]), tuple(p[2]))
            for p in values.get("parts") or ()
        )
        return cls(**values)


@dataclass(frozen=True)
class MaintenanceRecord:
    """One upkeep call (summary, fact extraction) as a lane recorded it: outcome, the body it
    sent, and its tokens (`input`/`output`: billed where known, else counted; 0 for a call
    that failed without a provider's usage: it spent nothing)."""

    kind: str
    ok: bool
    error: str | None = None
    reply: str | None = None
    counted: int = 0
    billed_input: int | None = None
    billed_output: int | None = None
    input: int = 0
    output: int = 0
    body: dict[str, Any] | None = None
    # the lanes this one call answered, the one that sent it first (lanes/sharing.py); empty:
    # the lane's own call
    shared: tuple[str, ...] = ()
    # an extraction's values that could not be traced to the turn, not stored (key=JSON)
    ungrounded: tuple[str, ...] = ()
    # facts the rule extractor filled in: stated in the turn, missing from the reply (key=JSON)
    filled_by_rules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.shared, tuple):  # a saved record holds a list
            object.__setattr__(self, "shared", tuple(self.shared))
        for name in ("ungrounded", "filled_by_rules"):  # a saved record holds lists
            if not isinstance(getattr(self, name), tuple):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.ok and self.billed_input is None and self.billed_output is None:
            # failed with no usage from a provider (no key, refused, never sent): nothing was
            # spent, whatever a record saved before this rule says; `counted` keeps the size
            object.__setattr__(self, "input", 0)
            object.__setattr__(self, "output", 0)

    @property
    def tokens(self) -> int:
        return self.input + self.output

    def as_dict(self) -> dict[str, Any]:
        """Its fields as JSON-ready data (shared, never-mutated values: no deep copy)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["shared"] = list(self.shared)
        data["ungrounded"] = list(self.ungrounded)
        data["filled_by_rules"] = list(self.filled_by_rules)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | MaintenanceRecord) -> MaintenanceRecord:
        if isinstance(data, MaintenanceRecord):
            return data
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @classmethod
    def of(cls, call: MaintenanceCall) -> MaintenanceRecord:
        """A maintenance call of the memory core, as recorded by a lane."""
        usage = call.usage
        billed_in = usage.input if usage and usage.input is not None else None
        billed_out = usage.output if usage and usage.output is not None else None
        body = (
            dict(call.body)
            if call.body
            else {
                "system": call.request.system,
                "messages": [m.as_dict() for m in call.request.messages],
            }
        )
        return cls(
            kind=call.kind,
            ok=call.ok,
            error=call.error,
            reply=call.reply,
            counted=call.tokens.content,
            billed_input=billed_in,
            billed_output=billed_out,
            input=billed_in if billed_in is not None else call.tokens.content,
            output=billed_out or 0,
            body=body,
            shared=call.shared,
            ungrounded=call.ungrounded,
            filled_by_rules=call.filled_by_rules,
        )


class MessageTable:
    """Each distinct plain request message (role and text) a lane has sent, once: the bodies
    it records share those dicts. A full-history lane resends every message each turn, so a
    copy per turn would make memory grow with the square of the conversation. Safe because
    recorded bodies are never mutated; what is shared equals what was sent."""

    def __init__(self) -> None:
        self._by_text: dict[tuple[str, str], dict[str, Any]] = {}

    def share(self, body: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(body)
        messages = out.get("messages")
        if isinstance(messages, list):
            out["messages"] = [self._one(m) for m in messages]
        return out

    def _one(self, message: Any) -> Any:
        if not isinstance(message, dict) or list(message) != ["role", "content"]:
            return message
        role, content = message["role"], message["content"]
        if not (isinstance(role, str) and isinstance(content, str)):
            return message
        return self._by_text.setdefault((role, content), message)


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
    maintenance: tuple[MaintenanceRecord, ...] = ()
    account: TurnAccount = field(default_factory=TurnAccount)
    latency_s: float | None = None
    ttft_s: float | None = None
    model: str | None = None
    # of billed_input: tokens read from / written to the provider's prompt cache (None: not said)
    cached_input: int | None = None
    cache_write_input: int | None = None
    # the lanes the reply's one call answered, the one that sent it first (lanes/sharing.py:
    # identical requests sent once); empty: the lane's own call
    shared: tuple[str, ...] = ()

    def __post_init__(self) -> None:  # accept the JSON shapes too (saved sessions, exports)
        if not isinstance(self.shared, tuple):
            object.__setattr__(self, "shared", tuple(self.shared))
        if not isinstance(self.account, TurnAccount):
            object.__setattr__(self, "account", TurnAccount.from_dict(self.account))
        if any(not isinstance(m, MaintenanceRecord) for m in self.maintenance):
            records = tuple(MaintenanceRecord.from_dict(m) for m in self.maintenance)
            object.__setattr__(self, "maintenance", records)

    @property
    def ok(self) -> bool:
        return self.status == OK

    def lean(self) -> LaneTurn:
        """This record without what only its views and exports read: its request body, its
        upkeep calls' bodies and its account's turn lists. What a turn keeps in memory once
        it is saved, in a session that is saved as it runs and not drawn (an import)."""
        account = replace(
            self.account, kept=(), dropped=(), summarised=(), retrieved=(),
            parts=tuple(replace(p, turns=()) for p in self.account.parts),
        )  # fmt: skip
        maintenance = tuple(replace(m, body=None) for m in self.maintenance)
        return replace(self, body=None, maintenance=maintenance, account=account)

    @property
    def maintenance_tokens(self) -> int:
        """Tokens spent on this turn's upkeep calls (billed where known, else counted input)."""
        return sum(m.tokens for m in self.maintenance)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens: billed where known, else counted (as the charts draw them)."""
        return self.billed_input if self.billed_input is not None else self.counted

    @property
    def total_tokens(self) -> int:
        """Everything this turn sent and received: prompt, reply and upkeep calls."""
        return self.prompt_tokens + (self.billed_output or 0) + self.maintenance_tokens

    def cost(self, price: PriceLike | None) -> float | None:
        """This turn's cost in USD: prompt and upkeep input, reply and upkeep output."""
        if price is None:
            return None
        tokens_in = self.prompt_tokens + sum(m.input for m in self.maintenance)
        tokens_out = (self.billed_output or 0) + sum(m.output for m in self.maintenance)
        usd = tokens_in * price.input_per_m + tokens_out * price.output_per_m
        for tokens, rate in ((self.cached_input, getattr(price, "cached_input_per_m", None)),
                             (self.cache_write_input, getattr(price, "cache_write_per_m", None))):  # fmt: skip
            if tokens and rate is not None:  # cache tokens at their own price, not the list one
                usd += tokens * (rate - price.input_per_m)
        return usd / 1_000_000

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["account"] = self.account.as_dict()
        data["maintenance"] = [m.as_dict() for m in self.maintenance]
        data["shared"] = list(self.shared)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LaneTurn:
        values = {k: v for k, v in data.items() if k in _TURN_FIELDS}
        values["maintenance"] = tuple(
            MaintenanceRecord.from_dict(m) for m in values.get("maintenance") or ()
        )
        values["account"] = TurnAccount.from_dict(values.get("account"))
        return cls(**values)


_TURN_FIELDS = frozenset(f.name for f in fields(LaneTurn))


def _unfinished(answered: LaneTurn, reply: ReplyLike) -> LaneTurn:
    """A reply that failed or ended early: INCOMPLETE if it has text, else ERROR."""
    error = reply.error
    return replace(
        answered,
        status=INCOMPLETE if reply.text else ERROR,
        error=str(error) if error is not None else "the reply stream ended early",
        error_kind=type(error).__name__ if error is not None else "Incomplete",
    )


def _cache_detail(usage: Any, name: str) -> int | None:
    value = (getattr(usage, "details", None) or {}).get(name) if usage else None
    return value if isinstance(value, int) else None


def lane_title(title: str, strategy: str, label: str) -> str:
    """A strategy's title plus whatever a lane's label adds to the strategy name."""
    extra = label[len(strategy) :] if label.startswith(strategy) else ""
    return title + extra if extra else (title if label == strategy else label)


def _never() -> bool:
    return False


def _cancelled(record: LaneTurn) -> LaneTurn:
    """`record` marked as stopped by the user."""
    return replace(record, status=CANCELLED, error=CANCELLED_NOTE, error_kind="Cancelled")


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
        upkeep: Upkeep = NO_UPKEEP,
        label: str | None = None,
        provider: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = label or strategy_name  # the lane's key in its session (memory/lane_spec.py)
        self.strategy_name = strategy_name
        self.provider = dict(provider) if provider else None  # its own provider, public form
        self.spec = spec(strategy_name)
        self.params = dict(params or {})
        self.counter = counter
        self.strategy: Strategy = create(
            strategy_name,
            system_prompt,
            counter=counter,
            upkeep=upkeep,
            params=self.params,
        )
        self.turns: list[LaneTurn] = []
        self._messages = MessageTable()
        self._turn_numbers: list[int] = []  # strategy history index i -> conversation turn

    @property
    def title(self) -> str:
        """The strategy's title, then what the label adds ('Summary + buffer · gpt-4o-mini')."""
        return lane_title(self.spec.title, self.strategy_name, self.name)

    def conversation_turn(self, index: int) -> int:
        """The conversation turn number of the strategy's history entry `index` (1-based)."""
        return self._turn_numbers[index - 1]

    def _account(self, request: Request) -> TurnAccount:
        acc = request.account
        if acc is None:
            return TurnAccount()
        conv = self.conversation_turn
        return TurnAccount(
            kept=tuple(conv(i) for i in acc.kept_turns),
            dropped=tuple(conv(i) for i in acc.dropped_turns),
            summarised=tuple(conv(i) for i in acc.summarised_turns),
            retrieved=tuple(conv(i) for i in acc.retrieved_turns),
            summary=acc.summary,
            facts=dict(acc.facts) if acc.facts is not None else None,
            budget=acc.budget,
            notes=tuple(acc.notes),
            parts=tuple(Part(p.name, p.tokens, tuple(conv(i) for i in p.turns)) for p in acc.parts),
        )

    def run(
        self,
        turn: int,
        user_text: str,
        send: Sender,
        on_delta: Callable[[str], None] | None = None,
        *,
        cancelled: Callable[[], bool] | None = None,
        on_reply: Callable[[str], None] | None = None,
    ) -> LaneTurn:
        """Run one turn: build the request, send it, commit the reply; never raises for a
        provider failure or an overflow — the LaneTurn says what happened.

        `cancelled()` is checked before sending, at every streamed piece (the stream is then
        closed) and after upkeep: a cancelled turn is recorded as CANCELLED and nothing of it
        reaches memory. `on_reply(text)` runs once the reply is complete, before the upkeep
        calls (summaries, extraction), so a UI can show the reply while upkeep runs."""
        is_cancelled = cancelled or _never
        if is_cancelled():
            return self._store(_cancelled(LaneTurn(self.name, turn, user_text, CANCELLED)))
        work = self.strategy.fork()  # memory changes land on a fork, kept unless cancelled
        try:
            request = work.prepare(user_text)
        except ContextOverflow as exc:
            self.strategy = work  # as before forks: folds made while preparing are kept
            record = LaneTurn(
                self.name, turn, user_text, OVERFLOW, error=str(exc), error_kind="ContextOverflow"
            )
            return self._store(record)
        sent = self._sent(turn, user_text, request)

        def delta(text: str) -> None:
            if is_cancelled():
                raise TurnCancelled
            if on_delta is not None:
                on_delta(text)

        try:
            reply = send(request, delta)
        except TurnCancelled:
            return self._store(_cancelled(sent))
        except MemoryLabError:
            raise
        except Exception as exc:  # a provider must not take the lane down: record it
            self.strategy = work  # upkeep done while preparing (older turns) is kept
            failed = replace(
                sent, error=f"{type(exc).__name__}: {exc}", error_kind=type(exc).__name__
            )
            return self._store(failed)
        if is_cancelled():
            return self._store(_cancelled(sent))
        answered = self._answered(sent, reply)
        if reply.error is not None or not reply.complete:
            self.strategy = work
            return self._store(_unfinished(answered, reply))
        if on_reply is not None:
            on_reply(reply.text)
        calls = work.commit(user_text, reply.text)
        maintenance = sent.maintenance + tuple(MaintenanceRecord.of(c) for c in calls)
        if is_cancelled():  # stopped during upkeep: the fork, and the turn with it, is dropped
            return self._store(_cancelled(replace(answered, maintenance=maintenance)))
        self.strategy = work
        self._turn_numbers.append(turn)
        record = replace(answered, status=OK, maintenance=maintenance)
        return self._store(record)

    def _sent(self, turn: int, user_text: str, request: Request) -> LaneTurn:
        """The record of a request about to be sent (an error until a reply says otherwise),
        with the upkeep calls made while preparing it."""
        return LaneTurn(
            self.name,
            turn,
            user_text,
            ERROR,
            n_messages=len(request.messages) + 1,
            counted=request.tokens.content,
            counted_overhead=request.tokens.with_overhead,
            estimate=request.tokens.estimate,
            account=self._account(request),
            maintenance=tuple(MaintenanceRecord.of(c) for c in request.maintenance),
        )

    def _answered(self, sent: LaneTurn, reply: ReplyLike) -> LaneTurn:
        """`sent` with what the provider answered: text, body (its messages shared with the
        lane's earlier bodies), usage, timings, model, cache split, sharing."""
        usage = reply.usage
        return replace(
            sent,
            reply=reply.text,
            body=self._messages.share(reply.body) if reply.body is not None else None,
            billed_input=getattr(usage, "input", None) if usage else None,
            billed_output=getattr(usage, "output", None) if usage else None,
            latency_s=reply.latency_s,
            ttft_s=reply.ttft_s,
            model=reply.model,
            cached_input=_cache_detail(usage, "cached_tokens"),
            cache_write_input=_cache_detail(usage, "cache_write_tokens"),
            shared=tuple(getattr(reply, "shared", ()) or ()),
        )

    def lean_last(self, record: LaneTurn) -> None:
        """Keep `record`, the lane's latest, as its `lean` form (it has been saved)."""
        if self.turns and self.turns[-1] is record:
            self.turns[-1] = record.lean()

    def _store(self, record: LaneTurn) -> LaneTurn:
        if self.turns and self.turns[-1].turn == record.turn:
            self.turns[-1] = record  # a retry replaces the failed attempt
        else:
            self.turns.append(record)
        return record

    def memory_state(self) -> dict[str, Any]:
        """The lane's memory as plain data (strategy, parameters, memory, turn numbers), without
        the turn records: what a store saves after every turn."""
        state = {
            "strategy": self.strategy_name,
            "params": dict(self.params),
            "memory": self.strategy.snapshot(),
            "turn_numbers": list(self._turn_numbers),
        }
        return state if self.provider is None else {**state, "provider": dict(self.provider)}

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
        probe.upkeep = Upkeep.using(_no_model)
        try:
            return probe.prepare(sample_text).tokens.with_overhead
        except ContextOverflow:
            return None

    def can_retry(self, latest_turn: int) -> bool:
        """A failed turn can be retried while it is the conversation's latest turn."""
        return bool(self.turns) and self.turns[-1].turn == latest_turn and not self.turns[-1].ok

    def retry(
        self,
        send: Sender,
        on_delta: Callable[[str], None] | None = None,
        *,
        cancelled: Callable[[], bool] | None = None,
    ) -> LaneTurn:
        """Resend the latest (failed or cancelled) turn's user message."""
        last = self.turns[-1]
        if last.ok:
            raise ValueError("the latest turn of this lane succeeded; nothing to retry")
        return self.run(last.turn, last.user, send, on_delta, cancelled=cancelled)
