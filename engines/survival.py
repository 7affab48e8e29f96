"""The fact-survival lab: plant facts at turn 1, talk about other things, probe at turn N.

For every fact, strategy and probe turn N it gives two verdicts, kept apart because they
answer different questions:

* in the payload - is the fact in the request sent at turn N (a kept turn, the summary or
  the facts block)? Deterministic; numbers are matched in any form (memory/numbers.py).
* recalled - does the model's reply to the probe question contain an accepted answer?

A fact recalled but not in the payload is a guess or a leak, and is flagged. Each strategy
runs as a `Lane` (the main page's lanes) over one scripted conversation; probes are sent
from a `fork()` of the lane's strategy, so probing never changes the conversation. With no
model ("payload only") replies are fixed and upkeep is done by rule-based stand-ins.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from lanes.lane import OVERFLOW, Lane, LaneTurn, ReplyLike, Sender
from memory.choices import StrategyChoice
from memory.errors import ContextOverflow, MemoryLabError
from memory.numbers import Answer
from memory.registry import DEFAULT_LANES, spec
from memory.standins import (
    ExtractiveSummariser,
    RuleExtractor,
    SizedSummariser,
    StaticReply,
    fixed_reply,
    fixed_sender,
)
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter
from memory.types import Completion, ModelFn, Request
from scenarios import fincoach
from scenarios.filler import FillerTurn, builtin, cycle

MAX_TURN = 1000
REPLY_MODES = ("fixed", "generated")

# Verdicts (one per row). The first four need a model reply; the next two are payload-only.
KEPT = "in payload, recalled"
MISSED = "in payload, not recalled"
LOST = "not in payload, not recalled"
LEAK = "recalled, NOT in payload"
IN_PAYLOAD = "in payload"
NOT_IN_PAYLOAD = "not in payload"
ERROR = "error"
LEAK_FLAG = "guess/leak"


class SurvivalConfigError(ValueError):
    """A survival run that cannot be set up as asked; the message says what to change."""


@dataclass(frozen=True)
class Fact:
    """A fact to plant and probe: what the user says, what we ask, what counts as right."""

    key: str
    plant: str
    probe: str
    answers: tuple[str, ...]
    label: str = ""
    plant_turn: int = 1

    @property
    def title(self) -> str:
        return self.label or self.key

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["answers"] = list(self.answers)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fact:
        missing = [k for k in ("key", "plant", "probe", "answers") if not data.get(k)]
        if missing:
            raise SurvivalConfigError(f"a fact needs {', '.join(missing)}: got {dict(data)}")
        answers = data["answers"]
        if isinstance(answers, str):
            answers = [answers]
        return cls(
            key=str(data["key"]),
            plant=str(data["plant"]),
            probe=str(data["probe"]),
            answers=tuple(str(a) for a in answers),
            label=str(data.get("label") or ""),
            plant_turn=int(data.get("plant_turn", 1)),
        )


DEFAULT_FACTS: tuple[Fact, ...] = (
    Fact("name", "Hi! I'm Chiru.", "What is my name?", ("Chiru",), "Name (Chiru)"),
    Fact(
        "salary",
        "My monthly take-home salary is ₹1,20,000.",
        "What is my monthly take-home salary?",
        ("₹1,20,000",),
        "Salary (₹1,20,000)",
    ),
    Fact(
        "expenses",
        "I have monthly expenses of about ₹60,000: rent, groceries, transport, and utilities.",
        "How much are my monthly expenses?",
        ("₹60,000",),
        "Expenses (₹60,000)",
    ),
    Fact(
        "fd",
        "I currently have no investments except a small FD of ₹50,000 that matures in 3 months.",
        "How much money do I have in my FD?",
        ("₹50,000",),
        "FD (₹50,000)",
    ),
)
DEFAULT_PROBE_TURNS: tuple[int, ...] = (2, 5, 10, 20, 50)
DEFAULT_STRATEGIES: tuple[StrategyChoice, ...] = tuple(StrategyChoice(n) for n in DEFAULT_LANES)


@dataclass(frozen=True)
class SurvivalConfig:
    """Everything that decides a survival run's verdicts (with the model and its settings)."""

    facts: tuple[Fact, ...] = DEFAULT_FACTS
    probe_turns: tuple[int, ...] = DEFAULT_PROBE_TURNS
    strategies: tuple[StrategyChoice, ...] = DEFAULT_STRATEGIES
    filler: tuple[FillerTurn, ...] | None = None  # None: the built-in bank
    filler_seed: int = 0
    replies: str = "fixed"  # "fixed" short replies, or "generated" by the model
    system_prompt: str = fincoach.SYSTEM_PROMPT
    encoding: str = "o200k_base"

    @property
    def last_turn(self) -> int:
        return max(self.probe_turns)

    def validate(self) -> SurvivalConfig:
        """The config itself if it can run; SurvivalConfigError with the reason otherwise."""
        if not self.facts:
            raise SurvivalConfigError("choose at least one fact to plant")
        keys = [f.key for f in self.facts]
        if len(set(keys)) != len(keys):
            raise SurvivalConfigError(f"fact keys must be unique, got {keys}")
        for f in self.facts:
            if not f.plant.strip() or not f.probe.strip():
                raise SurvivalConfigError(f"fact {f.key!r} needs a planting sentence and a probe")
            if not [a for a in f.answers if a.strip()]:
                raise SurvivalConfigError(f"fact {f.key!r} needs at least one accepted answer")
            if f.plant_turn < 1:
                raise SurvivalConfigError(f"fact {f.key!r}: turns are numbered from 1")
        if not self.probe_turns:
            raise SurvivalConfigError("choose at least one probe turn N")
        if list(self.probe_turns) != sorted(set(self.probe_turns)):
            raise SurvivalConfigError(
                f"probe turns must be increasing with no repeats, got {list(self.probe_turns)}"
            )
        latest_plant = max(f.plant_turn for f in self.facts)
        if self.probe_turns[0] <= latest_plant:
            raise SurvivalConfigError(
                f"every probe turn must come after the facts are planted (turn {latest_plant}); "
                f"got N={self.probe_turns[0]}"
            )
        if self.last_turn > MAX_TURN:
            raise SurvivalConfigError(f"probe turns go up to {MAX_TURN}; got {self.last_turn}")
        if not self.strategies:
            raise SurvivalConfigError("choose at least one strategy")
        labels = [s.label for s in self.strategies]
        if len(set(labels)) != len(labels):
            raise SurvivalConfigError(f"each strategy setting can run once; got {labels}")
        for s in self.strategies:
            spec(s.name)  # UnknownStrategy names the ones that exist
        if self.replies not in REPLY_MODES:
            raise SurvivalConfigError(f"replies are 'fixed' or 'generated', got {self.replies!r}")
        if self.filler is not None and not self.filler:
            raise SurvivalConfigError("the imported filler is empty")
        return self

    def as_dict(self) -> dict[str, Any]:
        return {
            "facts": [f.as_dict() for f in self.facts],
            "probe_turns": list(self.probe_turns),
            "strategies": [s.as_dict() for s in self.strategies],
            "filler": "built-in"
            if self.filler is None
            else [{"user": t.user, "reply": t.reply} for t in self.filler],
            "filler_seed": self.filler_seed,
            "replies": self.replies,
            "system_prompt": self.system_prompt,
            "encoding": self.encoding,
        }


@dataclass(frozen=True)
class ScriptTurn:
    """One turn of the scripted conversation before the probes."""

    turn: int
    user: str
    kind: str  # "plant" or "filler"
    fixed_reply: str


def script(config: SurvivalConfig) -> list[ScriptTurn]:
    """Turns 1 .. N_max - 1: planting sentences at their turns, filler everywhere else."""
    last = config.last_turn - 1
    plants: dict[int, list[str]] = {}
    for f in config.facts:
        plants.setdefault(f.plant_turn, []).append(f.plant.strip())
    n_filler = last - len([t for t in plants if t <= last])
    if config.filler is None:
        filler = builtin(n_filler, seed=config.filler_seed)
    else:
        filler = cycle(config.filler, n_filler)
    turns: list[ScriptTurn] = []
    k = 0
    for t in range(1, last + 1):
        if t in plants:
            turns.append(ScriptTurn(t, " ".join(plants[t]), "plant", fixed_reply(t)))
        else:
            item = filler[k]
            k += 1
            turns.append(ScriptTurn(t, item.user, "filler", item.reply or fixed_reply(t)))
    return turns


@dataclass(frozen=True)
class ProbeRow:
    """One probe: a fact, a strategy, a turn N, and both verdicts (plain data)."""

    strategy: str
    strategy_name: str
    params: Mapping[str, Any]
    fact: str
    fact_label: str
    plant_turn: int
    probe_turn: int
    probe: str
    answers: tuple[str, ...]
    in_payload: bool | None
    found_in: tuple[str, ...]
    recalled: bool | None
    matched: str | None
    verdict: str
    flag: str
    reply: str
    probe_prompt_tokens: int
    prompt_tokens_spent: int
    maintenance_tokens: int
    maintenance_calls: int
    billed_input: int | None
    billed_output: int | None
    kept_turns: tuple[int, ...]
    summarised_turns: tuple[int, ...]
    error: str | None = None
    latency_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("answers", "found_in", "kept_turns", "summarised_turns"):
            data[key] = list(data[key])
        data["params"] = dict(self.params)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeRow:
        values: dict[str, Any] = {f.name: data.get(f.name) for f in fields(cls)}
        for key in ("answers", "found_in", "kept_turns", "summarised_turns"):
            values[key] = tuple(values[key] or ())
        values["params"] = dict(values["params"] or {})
        return cls(**values)


def verdict_of(in_payload: bool | None, recalled: bool | None, error: str | None) -> str:
    """The row's one-phrase verdict."""
    if in_payload is None:
        return ERROR
    if recalled is None:
        return ERROR if error else (IN_PAYLOAD if in_payload else NOT_IN_PAYLOAD)
    if in_payload:
        return KEPT if recalled else MISSED
    return LEAK if recalled else LOST


def payload_check(
    request: Request, strategy: Strategy, answers: Sequence[Answer]
) -> tuple[bool, tuple[str, ...]]:
    """Is any accepted answer in the request (the probe question itself excluded), and where:
    'turn 1', 'reply 7', 'turn 3 (retrieved)', 'summary', 'facts', 'system prompt'."""

    def found(text: str | None) -> bool:
        return bool(text) and any(a.found_in(text) for a in answers)  # type: ignore[arg-type]

    present = found(request.system) or any(found(m.content) for m in request.messages[:-1])
    where: list[str] = []
    acc = request.account
    if found(strategy.system_prompt):
        where.append("system prompt")
    if acc is not None:
        if acc.facts and found(json.dumps(dict(acc.facts), ensure_ascii=False)):
            where.append("facts")
        if acc.summary and found(acc.summary):
            where.append("summary")
        retrieved = set(acc.retrieved_turns)
        for i in acc.kept_turns:
            turn = strategy.history.turn(i)
            tag = " (retrieved)" if i in retrieved else ""
            if found(turn.user):
                where.append(f"turn {i}{tag}")
            if found(turn.assistant):
                where.append(f"reply {i}{tag}")
    if present and not where:
        where.append("payload")
    return present, tuple(where)


@dataclass(frozen=True)
class Progress:
    """How far a run is: calls made and calls still expected (an estimate for upkeep calls)."""

    done: int
    total: int
    rows: int
    rows_total: int

    @property
    def to_go(self) -> int:
        return max(0, self.total - self.done)

    @property
    def fraction(self) -> float:
        if self.total <= 0:  # payload only: no calls, count rows
            return min(1.0, self.rows / self.rows_total) if self.rows_total else 1.0
        return min(1.0, self.done / self.total)


@dataclass(frozen=True)
class Estimate:
    """Calls and tokens a run is expected to take, from a model-free dry run of the script."""

    probe_calls: int
    reply_calls: int
    maintenance_calls: int
    prompt_tokens: int
    maintenance_tokens: int
    output_tokens: int
    rows: int
    exact: bool

    @property
    def calls(self) -> int:
        return self.probe_calls + self.reply_calls + self.maintenance_calls

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.maintenance_tokens + self.output_tokens

    def rough_seconds(
        self, *, prompt_tps: float = 400.0, output_tps: float = 60.0, parallel: int = 1
    ) -> float:
        """A rough wall time for a local model reading `prompt_tps` and writing `output_tps`."""
        work = (self.prompt_tokens + self.maintenance_tokens) / prompt_tps
        work += self.output_tokens / output_tps
        return work / max(1, min(parallel, 4) ** 0.5)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "calls": self.calls, "tokens": self.tokens}


class Cancelled(BaseException):  # noqa: N818 - BaseException so upkeep wrappers don't swallow it
    """Raised inside a lane when the run is cancelled (caught by the runner)."""


@dataclass
class SurvivalResult:
    """A finished (or cancelled) run: config, rows and what it took."""

    config: dict[str, Any]
    rows: list[ProbeRow]
    mode: str  # "model" or "payload-only"
    maintenance: str  # "model" or "stand-in"
    cancelled: bool = False
    provider_calls: int = 0
    maintenance_calls: int = 0
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    model: str | None = None

    @property
    def calls(self) -> int:
        return self.provider_calls + self.maintenance_calls

    def strategies(self) -> list[str]:
        seen: dict[str, None] = {}
        for s in self.config.get("strategies", []):
            seen[s["label"]] = None
        for r in self.rows:
            seen.setdefault(r.strategy, None)
        return list(seen)

    def probe_turns(self) -> list[int]:
        return list(self.config.get("probe_turns") or sorted({r.probe_turn for r in self.rows}))

    def matrix(self, verdict: str) -> dict[tuple[str, int], tuple[int, int]]:
        """(strategy, N) -> (facts with the verdict true, facts with a verdict at all).

        `verdict` is 'in_payload', 'recalled' or 'leak'."""
        cells: dict[tuple[str, int], tuple[int, int]] = {}
        for r in self.rows:
            if verdict == "leak":
                value: bool | None = None if r.recalled is None else (r.flag == LEAK_FLAG)
            else:
                value = getattr(r, verdict)
            hit, total = cells.get((r.strategy, r.probe_turn), (0, 0))
            if value is not None:
                cells[(r.strategy, r.probe_turn)] = (hit + int(bool(value)), total + 1)
            else:
                cells.setdefault((r.strategy, r.probe_turn), (hit, total))
        return cells

    def tokens_spent(self) -> dict[tuple[str, int], int]:
        """(strategy, N) -> conversation prompt tokens sent up to and including the probe."""
        spent: dict[tuple[str, int], int] = {}
        for r in self.rows:
            if r.error is None or r.prompt_tokens_spent:
                key = (r.strategy, r.probe_turn)
                spent[key] = max(spent.get(key, 0), r.prompt_tokens_spent)
        return spent

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "mode": self.mode,
            "maintenance": self.maintenance,
            "model": self.model,
            "cancelled": self.cancelled,
            "provider_calls": self.provider_calls,
            "maintenance_calls": self.maintenance_calls,
            "elapsed_s": round(self.elapsed_s, 3),
            "notes": list(self.notes),
            "rows": [r.as_dict() for r in self.rows],
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2)

    def to_csv(self) -> str:
        return rows_to_csv(self.rows)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SurvivalResult:
        return cls(
            config=dict(data.get("config") or {}),
            rows=[ProbeRow.from_dict(r) for r in data.get("rows") or []],
            mode=str(data.get("mode", "model")),
            maintenance=str(data.get("maintenance", "model")),
            cancelled=bool(data.get("cancelled")),
            provider_calls=int(data.get("provider_calls") or 0),
            maintenance_calls=int(data.get("maintenance_calls") or 0),
            elapsed_s=float(data.get("elapsed_s") or 0.0),
            notes=list(data.get("notes") or []),
            model=data.get("model"),
        )


CSV_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ProbeRow))


def rows_to_csv(rows: Sequence[ProbeRow]) -> str:
    """Rows as CSV (lists joined with '; ', parameters as JSON)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        data = row.as_dict()
        for key in ("answers", "found_in", "kept_turns", "summarised_turns"):
            data[key] = "; ".join(str(x) for x in data[key])
        data["params"] = json.dumps(data["params"], sort_keys=True)
        writer.writerow(data)
    return out.getvalue()


def _sort_key(order: Mapping[str, int], facts: Mapping[str, int]) -> Callable[[ProbeRow], Any]:
    return lambda r: (order.get(r.strategy, 99), r.probe_turn, facts.get(r.fact, 99))


class _Runner:
    """One run: lanes in threads, counted calls, progress, cancellation."""

    def __init__(
        self,
        config: SurvivalConfig,
        *,
        send: Sender | None,
        summarize: ModelFn | None,
        extract: ModelFn | None,
        counter: TokenCounter,
        on_progress: Callable[[Progress], None] | None,
        on_row: Callable[[ProbeRow], None] | None,
        cancel: threading.Event | None,
        expected_calls: int | None,
        count_stand_ins: bool = False,
    ) -> None:
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
        self.summarize = self._counted_model(summarize) if summarize else None
        self.extract = self._counted_model(extract) if extract else None
        for name in ("summarize", "extract"):
            fn = summarize if name == "summarize" else extract
            if isinstance(fn, ExtractiveSummariser | RuleExtractor) and not count_stand_ins:
                setattr(self, name, fn)
        self.script = script(config)
        self.answers = {f.key: [Answer(a) for a in f.answers if a.strip()] for f in config.facts}
        self.rows_total = len(config.facts) * len(config.probe_turns) * len(config.strategies)
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
        if self.config.replies == "fixed" or self.send is None:
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

    def _probe(self, lane: Lane, choice: StrategyChoice, n: int, fact: Fact, spent: int,
               maint_tokens: int, maint_calls: int) -> None:  # fmt: skip
        common = _probe_fields(choice, n, fact)
        fork = lane.strategy.fork()
        try:
            request = fork.prepare(fact.probe)
        except ContextOverflow as exc:
            self._error_row(common, str(exc), spent, maint_tokens, maint_calls)
            return
        answers = self.answers[fact.key]
        in_payload, where = payload_check(request, fork, answers)
        upkeep = sum(c.tokens.content for c in request.maintenance)
        reply_text, recalled, matched, error, latency = "", None, None, None, None
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
                matched = next((a.text for a in answers if a.found_in(reply_text)), None)
                recalled = matched is not None
        acc = request.account
        self._row(
            **common,
            in_payload=in_payload,
            found_in=where,
            recalled=recalled,
            matched=matched,
            verdict=verdict_of(in_payload, recalled, error),
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
        )

    def _error_rows(self, choice: StrategyChoice, from_n: int, message: str, spent: int) -> None:
        for n in self.config.probe_turns:
            if n < from_n:
                continue
            for fact in self.config.facts:
                self._error_row(_probe_fields(choice, n, fact), message, spent)

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

    def run_lane(self, choice: StrategyChoice) -> None:
        try:
            self._run_lane(choice)
        except Cancelled:
            return

    def _run_lane(self, choice: StrategyChoice) -> None:
        self._check()
        lane = Lane(
            choice.name,
            self.config.system_prompt,
            counter=self.counter,
            params=choice.params,
            summarize=self.summarize,
            extract=self.extract,
        )
        probes = set(self.config.probe_turns)
        last = self.config.last_turn
        spent = maint_tokens = maint_calls = 0
        for t in range(1, last + 1):
            if t in probes:
                for fact in self.config.facts:
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
            maint_tokens += sum(m["counted"] for m in record.maintenance)
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


def _stand_ins(
    config: SurvivalConfig, summarize: ModelFn | None, extract: ModelFn | None
) -> tuple[ModelFn | None, ModelFn | None, bool]:
    """Fill in rule-based upkeep where no model function was given (and one is needed)."""
    needs_summary = any(spec(s.name).cls.uses_summary for s in config.strategies)
    needs_facts = any(spec(s.name).cls.uses_facts for s in config.strategies)
    used = False
    if needs_summary and summarize is None:
        summarize, used = ExtractiveSummariser(), True
    if needs_facts and extract is None:
        extract, used = RuleExtractor(), True
    return summarize, extract, used


def estimate(
    config: SurvivalConfig,
    *,
    with_model: bool,
    model_maintenance: bool | None = None,
    assumed_reply_tokens: int = 80,
    assumed_summary_tokens: int = 160,
    counter: TokenCounter | None = None,
) -> Estimate:
    """Calls and tokens of a run, from a dry run of the script with no model.

    Probe and reply calls are exact; upkeep calls are exact when upkeep is done by stand-ins
    and close otherwise (summaries are assumed `assumed_summary_tokens` long, replies
    `assumed_reply_tokens`)."""
    config.validate()
    counter = counter or TokenCounter(config.encoding)
    model_maintenance = with_model if model_maintenance is None else model_maintenance
    sized_reply = counter.text_of_tokens(assumed_reply_tokens) if assumed_reply_tokens else "ok"

    def fake_send(request: Request, on_delta: Callable[[str], None] | None) -> StaticReply:
        return StaticReply(sized_reply)

    summarize: ModelFn | None = None
    extract: ModelFn | None = None
    if model_maintenance:
        summarize = SizedSummariser(counter, assumed_summary_tokens)
        extract = RuleExtractor()
    summarize, extract, _ = _stand_ins(config, summarize, extract)
    runner = _Runner(
        config,
        send=fake_send if with_model else None,
        summarize=summarize,
        extract=extract,
        counter=counter,
        on_progress=None,
        on_row=None,
        cancel=None,
        expected_calls=None,
        count_stand_ins=model_maintenance,
    )
    runner.run(workers=1)
    return Estimate(
        probe_calls=runner.probe_calls,
        reply_calls=runner.reply_calls,
        maintenance_calls=runner.maintenance_calls if model_maintenance else 0,
        prompt_tokens=runner.prompt_tokens,
        maintenance_tokens=runner.maintenance_tokens if model_maintenance else 0,
        output_tokens=runner.output_tokens if with_model or model_maintenance else 0,
        rows=runner.rows_total,
        exact=not with_model or (config.replies == "fixed" and not _needs_model(config)),
    )


def _needs_model(config: SurvivalConfig) -> bool:
    return any(spec(s.name).needs_model for s in config.strategies)


def run_survival(
    config: SurvivalConfig,
    *,
    send: Sender | None = None,
    summarize: ModelFn | None = None,
    extract: ModelFn | None = None,
    counter: TokenCounter | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_row: Callable[[ProbeRow], None] | None = None,
    cancel: threading.Event | None = None,
    workers: int | None = None,
    expected_calls: int | None = None,
) -> SurvivalResult:
    """Run the grid. `send` answers probes (and filler, with replies='generated'); with no
    `send` only the payload verdict is given. Upkeep without a model function is done by
    rule-based stand-ins (the result says so). Cancelling keeps the rows made so far."""
    config.validate()
    if config.replies == "generated" and send is None:
        raise SurvivalConfigError("generated replies need a model: choose fixed replies or a model")
    counter = counter or TokenCounter(config.encoding)
    summarize, extract, stand_in = _stand_ins(config, summarize, extract)
    if on_progress is not None and expected_calls is None:
        expected_calls = estimate(
            config, with_model=send is not None, model_maintenance=not stand_in, counter=counter
        ).calls
    runner = _Runner(
        config,
        send=send,
        summarize=summarize,
        extract=extract,
        counter=counter,
        on_progress=on_progress,
        on_row=on_row,
        cancel=cancel,
        expected_calls=expected_calls,
    )
    started = time.perf_counter()
    if workers is None:
        workers = len(config.strategies) if send is not None else 1
    runner._progress()
    runner.run(workers)
    order = {s.label: i for i, s in enumerate(config.strategies)}
    fact_order = {f.key: i for i, f in enumerate(config.facts)}
    rows = sorted(runner.rows, key=_sort_key(order, fact_order))
    cancelled = runner.cancel.is_set() and len(rows) < runner.rows_total
    notes = list(runner.notes)
    if stand_in:
        notes.append(
            "summaries and fact extraction were done by rule-based stand-ins, not a model "
            "(they keep names and amounts: an optimistic upkeep)"
        )
    if send is None:
        notes.append("payload only: no model answered the probes, so there is no recall verdict")
    return SurvivalResult(
        config=config.as_dict(),
        rows=rows,
        mode="model" if send is not None else "payload-only",
        maintenance="stand-in" if stand_in else "model",
        cancelled=cancelled,
        provider_calls=runner.provider_calls,
        maintenance_calls=runner.maintenance_calls,
        elapsed_s=time.perf_counter() - started,
        notes=notes,
        model=runner.model,
    )


def with_probe_turns(config: SurvivalConfig, turns: Sequence[int]) -> SurvivalConfig:
    """A copy of `config` probing at `turns` (sorted, duplicates removed)."""
    return replace(config, probe_turns=tuple(sorted(set(int(t) for t in turns))))


def parse_turns(text: str) -> tuple[int, ...]:
    """'2,5,10' or '2 5 10' -> (2, 5, 10); SurvivalConfigError says what is wrong."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise SurvivalConfigError("give at least one probe turn, e.g. 2,5,10")
    try:
        turns = sorted({int(p) for p in parts})
    except ValueError:
        raise SurvivalConfigError(f"probe turns are whole numbers, got {text!r}") from None
    if turns[0] < 2:
        raise SurvivalConfigError(
            f"probe turns start at 2 (turn 1 plants the facts); got {turns[0]}"
        )
    if turns[-1] > MAX_TURN:
        raise SurvivalConfigError(f"probe turns go up to {MAX_TURN}; got {turns[-1]}")
    return tuple(turns)


def load_facts(data: Any) -> tuple[Fact, ...]:
    """Facts from parsed JSON: a list of {key, plant, probe, answers[, label, plant_turn]}."""
    if isinstance(data, Mapping) and "facts" in data:
        data = data["facts"]
    if not isinstance(data, list) or not data:
        raise SurvivalConfigError("facts must be a non-empty JSON list of objects")
    facts = []
    for item in data:
        if not isinstance(item, Mapping):
            raise SurvivalConfigError(f"each fact is an object, got {item!r}")
        facts.append(Fact.from_dict(item))
    return tuple(facts)


def _probe_fields(choice: StrategyChoice, n: int, fact: Fact) -> dict[str, Any]:
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
        "answers": tuple(fact.answers),
    }
