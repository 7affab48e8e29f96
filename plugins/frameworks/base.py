"""The base of every framework lane: the lab's strategy contract around a framework's own call.

A framework lane keeps the framework's own state object (a LangChain memory, a Semantic
Kernel chat history, a LangMem running summary, ...) and, each turn, asks the framework what
it would send. What the framework returns is turned into the lab's `Request` by one mapping
(`to_request`): leading system messages become the system text (joined by a blank line, as
both provider APIs take one system text), human messages are the user's and AI messages the
assistant's. Every history message the lane hands the framework carries an id (`u3`, `a3`:
turn 3's user and assistant message, `new`: the message being sent), so the Account can say
which turns the framework kept; anything else it returned (a summary) is its own text.

The per-turn protocol is the lab's: `prepare` computes the framework's next state on a copy
and keeps it pending; `commit` gives the pending state the reply and adopts it, so a failed
turn changes nothing. A framework's model calls go through `ModelBridge` to the lab's upkeep
function and come back as the turn's MaintenanceCalls.
"""

from __future__ import annotations

import copy
import importlib.metadata
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memory.errors import InvalidMessage, InvalidParameter, MemoryLabError
from memory.maintenance import NO_UPKEEP, Upkeep, call_model
from memory.strategies.base import Strategy, check_user_text
from memory.types import Account, MaintenanceCall, Message, ModelFn, Part, Request


class FrameworkError(MemoryLabError):
    """A framework raised inside a turn, or returned something the lab cannot send."""


class FrameworkMissing(MemoryLabError):
    """The framework package a lane runs is not installed."""


@dataclass(frozen=True)
class Framework:
    """The package a framework lane runs: its name as people know it and its distribution."""

    name: str  # "LangGraph"
    distribution: str  # the PyPI name: "langchain-core"
    module: str  # the import name looked up (not imported) to tell whether it is there

    def version(self) -> str | None:
        """The installed version, or None when the package is not installed."""
        try:
            if importlib.util.find_spec(self.module) is None:
                return None
        except ModuleNotFoundError:  # a dotted name whose parent package is not installed
            return None
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def missing(self) -> str | None:
        """Why the lane cannot run here (None when it can)."""
        if self.version() is not None:
            return None
        return (
            f"needs {self.distribution}, which is not installed: "
            f"pip install 'memory-lab[frameworks]' (or scripts/setup.sh) adds it"
        )

    def produced_by(self) -> str:
        """'langchain-core 1.8.1': which package and version produced a lane's requests."""
        return f"{self.distribution} {self.version() or '(not installed)'}"


# --- the one mapping from a framework's messages to the lab's Request ---------------------


@dataclass(frozen=True)
class Sent:
    """One message a framework returned, as the lab reads it."""

    role: str  # "system", "user" or "assistant"
    content: str
    origin: str | None  # "u3" / "a3" / "new" for messages the lane handed in; None: the framework's


def text_of(content: Any) -> str:
    """A message's content as text: a string as it is; a list of parts as their texts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            else:
                raise FrameworkError(f"a message part the lab cannot send as text: {part!r:.80}")
        return "".join(pieces)
    raise FrameworkError(f"message content must be text, got {type(content).__name__}")


def split_system(sent: Sequence[Sent]) -> tuple[str, list[Sent]]:
    """(system text, the other messages): leading system messages joined by a blank line; a
    system message after the conversation has started is an error the lane reports."""
    system: list[str] = []
    rest: list[Sent] = []
    for item in sent:
        if item.role == "system" and not rest:
            system.append(item.content)
        elif item.role == "system":
            raise FrameworkError(
                "the framework put a system message inside the conversation; the lab sends "
                "one system text first"
            )
        else:
            rest.append(item)
    return "\n\n".join(system), rest


# --- model calls a framework makes ---------------------------------------------------------


class ModelBridge:
    """The lab's upkeep model function as a framework sees it: each call is recorded as a
    MaintenanceCall (the exact request, the reply, usage and body), and a failed call raises
    in the framework as its own model would."""

    def __init__(
        self,
        fn: ModelFn | None,
        build: Callable[[str, tuple[Message, ...]], Request],
        kind: str = "summary",
    ) -> None:
        self.fn = fn
        self.build = build  # (system, messages) -> the counted Request
        self.kind = kind
        self.calls: list[MaintenanceCall] = []

    def complete(self, system: str, messages: Sequence[Message]) -> str:
        """Send one upkeep request; its reply text, or UpkeepFailed naming what went wrong."""
        if self.fn is None:
            raise UpkeepFailed("this lane has no upkeep model to call")
        kind: Any = "extraction" if self.kind == "extraction" else "summary"
        call, text = call_model(kind, self.fn, self.build(system, tuple(messages)), lambda t: t)
        self.calls.append(call)
        if text is None:
            raise UpkeepFailed(call.error or "the upkeep call failed")
        return text

    def take(self) -> tuple[MaintenanceCall, ...]:
        """The calls made since the last take (and forget them)."""
        out = tuple(self.calls)
        self.calls.clear()
        return out


class UpkeepFailed(RuntimeError):
    """An upkeep call a framework made failed (the framework decides what follows)."""


def lab_messages(pairs: Sequence[tuple[str, str]]) -> list[Message]:
    """(role, text) pairs as lab Messages, any role other than assistant read as the user's."""
    return [Message("assistant" if r == "assistant" else "user", t) for r, t in pairs]


# --- the strategy ---------------------------------------------------------------------------


class FrameworkStrategy(Strategy):
    """A strategy whose requests a framework's own code decides (see the module docstring).

    Subclasses set `framework` and implement `_start`, `_before_model` and `_after_reply`;
    those that keep state that is not plain data implement `_dump`/`_load` as well."""

    framework: ClassVar[Framework]
    generated_part: ClassVar[str] = "summary"  # the Part the framework's own text is drawn as
    budget_param: ClassVar[str | None] = None  # the option that is its token limit, if any
    declared_budget: ClassVar[int | None] = None  # a user class's own `budget`

    def __init__(
        self,
        system_prompt: str,
        *,
        counter: Any,
        upkeep: Upkeep = NO_UPKEEP,
        **options: Any,
    ) -> None:
        missing = self.framework.missing()
        if missing:
            raise FrameworkMissing(f"{self.name} {missing}")
        super().__init__(system_prompt, counter=counter, upkeep=upkeep)
        self.options = options
        self.bridge = ModelBridge(upkeep.summarize, self.counter_request, "summary")
        self.extract_bridge = ModelBridge(upkeep.extract, self.counter_request, "extraction")
        self.state: Any = self._start()
        self._pending: Any = None
        self._save_failed: str | None = None

    # subclasses ----------------------------------------------------------------------------

    def _start(self) -> Any:
        """The framework's state for an empty conversation."""
        raise NotImplementedError

    def _before_model(self, state: Any, user_text: str) -> tuple[list[Sent], Any]:
        """What the framework sends for `user_text` on `state` (a copy: it may change it), and
        the state it leaves."""
        raise NotImplementedError

    def _after_reply(self, state: Any, user_text: str, reply: str) -> Any:
        """The state once the reply is in (the framework's own save step)."""
        raise NotImplementedError

    def _summarised(self, state: Any) -> set[int]:
        """Turns the framework has folded into a summary it keeps (none by default)."""
        return set()

    def _dump(self, state: Any) -> Any:
        """The state as JSON-ready data (default: none needed, the turns rebuild it)."""
        return None

    def _load(self, data: Any) -> Any:
        """The state from `_dump`'s data, on the restored turns (default: replay the turns)."""
        state = self._start()
        for turn in self.history.turns:
            state = self._replay_turn(state, turn.index, turn.user, turn.assistant)
        return state

    def _replay_turn(self, state: Any, index: int, user: str, reply: str) -> Any:
        _, state = self._before_model(state, user)
        return self._after_reply(state, user, reply)

    def budget_limit(self) -> int | None:
        """The token limit this lane says it keeps to (its framework's own option), if any."""
        if self.budget_param:
            return int(self.options[self.budget_param])
        return self.declared_budget

    # helpers for subclasses -----------------------------------------------------------------

    def turn_id(self, role: str, index: int | None = None) -> str:
        """The id the lane gives a message it hands in: u3, a3 (turn 3), or new."""
        if index is None:
            return "new"
        return f"{'u' if role == 'user' else 'a'}{index}"

    # the lab's protocol ---------------------------------------------------------------------

    def prepare(self, user_text: str) -> Request:
        text = check_user_text(user_text)
        work = self._clone(self.state)
        try:
            sent, after = self._before_model(work, text)
        except (FrameworkError, FrameworkMissing, InvalidMessage):
            self.bridge.take()
            self.extract_bridge.take()
            raise
        except Exception as exc:
            calls = self.bridge.take() + self.extract_bridge.take()
            raise FrameworkError(
                f"{self.framework.name} raised inside the turn: {type(exc).__name__}: {exc}"
                + (f" (after {len(calls)} upkeep call(s))" if calls else "")
            ) from exc
        request = self.to_request(sent, text, after)
        self._pending = after
        return request

    def commit(self, user_text: str, reply: str) -> tuple[MaintenanceCall, ...]:
        check_user_text(user_text)
        if not isinstance(reply, str):
            raise InvalidMessage(f"a reply must be text, got {type(reply).__name__}")
        state = self._pending
        self._pending = None
        if state is None:  # committed without a prepare (history filled in): the framework's
            _, state = self._before_model(self._clone(self.state), user_text)  # own step first
        self.history.append(user_text, reply)
        try:
            self.state = self._after_reply(state, user_text, reply)
        except Exception as exc:
            # the reply stays in the lab's history; the framework's memory misses this turn
            # (its own save step failed), which the next request's Account shows as dropped
            self._save_failed = f"{type(exc).__name__}: {exc}"
        else:
            self._save_failed = None
        return self.bridge.take() + self.extract_bridge.take()

    def counter_request(self, system: str, messages: tuple[Message, ...]) -> Request:
        return Request(
            system=system, messages=messages, tokens=self.counter.request(system, messages)
        )

    def to_request(self, sent: Sequence[Sent], user_text: str, state: Any) -> Request:
        """The Request for what the framework returned (module docstring), with its Account."""
        system, rest = split_system(sent)
        if not rest or rest[-1].origin != "new":
            raise FrameworkError(
                f"{self.framework.name} did not end the request with the new message"
            )
        messages = tuple(Message(m.role, m.content) for m in rest)  # type: ignore[arg-type]
        count = self.counter.count
        content = count(system) + sum(count(m.content) for m in messages)
        tokens = self.counter.total(content, len(messages), has_system=bool(system))
        kept = sorted({int(m.origin[1:]) for m in rest if m.origin and m.origin != "new"})
        summarised = sorted(self._summarised(state) - set(kept))
        dropped = tuple(
            i for i in range(1, len(self.history) + 1) if i not in kept and i not in summarised
        )
        prompt = count(self.system_prompt) if system.startswith(self.system_prompt) else 0
        generated = count(system) - prompt + sum(count(m.content) for m in rest if not m.origin)
        recent = sum(count(m.content) for m in rest if m.origin and m.origin != "new")
        parts = {name: 0 for name in ("system", "facts", "summary", "pinned", "retrieved")}
        parts["system"] = prompt
        parts[self.generated_part] += generated
        account = Account(
            strategy=self.name,
            turn=len(self.history) + 1,
            kept_turns=tuple(kept),
            dropped_turns=dropped,
            summarised_turns=tuple(summarised),
            notes=self._notes(),
            parts=(
                Part("system", parts["system"]),
                Part(
                    "facts",
                    parts["facts"],
                    tuple(summarised) if self.generated_part == "facts" else (),
                ),
                Part(
                    "summary",
                    parts["summary"],
                    tuple(summarised) if self.generated_part == "summary" else (),
                ),
                Part("pinned", 0),
                Part("retrieved", 0),
                Part("recent", recent, tuple(kept)),
                Part("new_message", count(user_text)),
                Part("framing", tokens.with_overhead - tokens.content),
            ),
        )
        return Request(
            system=system,
            messages=messages,
            tokens=tokens,
            account=account,
            maintenance=self.bridge.take() + self.extract_bridge.take(),
        )

    def _notes(self) -> tuple[str, ...]:
        notes = [f"sent as {self.framework.produced_by()} decided"]
        if self._save_failed:
            notes.append(f"the framework's save step failed last turn ({self._save_failed})")
        return tuple(notes)

    def _clone(self, state: Any) -> Any:
        return copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return {
            "strategy": self.name,
            "turns": [[t.user, t.assistant] for t in self.history.turns],
            "framework": self.framework.produced_by(),
            "framework_state": self._dump(self.state),
        }

    def restore(self, data: dict[str, Any]) -> None:
        if data.get("strategy") != self.name:
            raise InvalidParameter(
                f"a {data.get('strategy')!r} snapshot cannot restore a {self.name!r} strategy"
            )
        if len(self.history):
            raise InvalidParameter("restore into a fresh strategy (this one has turns)")
        for user, assistant in data["turns"]:
            self.history.append(user, assistant)
        self.state = self._load(data.get("framework_state"))
        self.bridge.take()
        self.extract_bridge.take()

    def fork(self) -> Strategy:
        other = copy.copy(self)
        other.history = self.history.copy()
        other.state = self._clone(self.state)
        other._pending = None
        other.bridge = ModelBridge(self.bridge.fn, other.counter_request, "summary")
        other.extract_bridge = ModelBridge(
            self.extract_bridge.fn, other.counter_request, "extraction"
        )
        return other
