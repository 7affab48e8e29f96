"""The lab's strategy contracts as a check any strategy can be put through (`memory-lab
check-strategy PATH.py:NAME`): hypothesis generates conversations and, for each contract,
searches for one that breaks it and shrinks it to a minimal failing conversation.

The contracts, by the names the lanes and the command print:

* "system prompt first": the system text starts with the system prompt, unchanged;
* "new message last": the last message is the user's new message, as typed;
* "roles alternate": messages start with the user and alternate user/assistant;
* "budget": the request's content tokens never exceed the budget the strategy declares
  (its `budget` parameter, a framework lane's own limit, or a user class's `budget`);
* "a raise changes nothing": a prepare that raises (a refused message) leaves the next
  request exactly as it would have been.

Strategies that raise inside a turn are reported under "raises", with the error.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory.errors import ContextOverflow
from memory.maintenance import Upkeep
from memory.strategies.base import Strategy
from memory.tokens import TokenCounter
from memory.types import Completion, Request

CONTRACTS: tuple[str, ...] = (
    "system prompt first",
    "new message last",
    "roles alternate",
    "budget",
    "a raise changes nothing",
    "raises",
)
SYSTEM = "You are FinCoach, a careful personal finance assistant. Be brief."
_COUNTER = TokenCounter("o200k_base")


@dataclass(frozen=True)
class Broken:
    """One broken contract and the smallest conversation hypothesis found that breaks it."""

    contract: str
    conversation: tuple[tuple[str, str], ...]
    detail: str

    def show(self) -> str:
        lines = [f"BROKEN  {self.contract}: {self.detail}", "  minimal failing conversation:"]
        for i, (user, reply) in enumerate(self.conversation, 1):
            lines.append(f"    turn {i}: user {user!r} / assistant {reply!r}")
        return "\n".join(lines)


def _summariser(request: Request) -> Completion:
    return Completion("Summary: " + " ".join(m.content[:40] for m in request.messages)[:300])


def _extractor(request: Request) -> Completion:
    return Completion('{"set": {}, "delete": []}')


def declared_budget(strategy: Strategy) -> int | None:
    """The budget a strategy says it keeps to, if it says one."""
    limit = getattr(strategy, "budget_limit", None)
    if callable(limit):
        value = limit()
        return int(value) if value is not None else None
    value = getattr(strategy, "budget", None)
    return int(value) if isinstance(value, int) else None


def violations(make: Callable[[], Strategy], conversation: list[tuple[str, str]]) -> dict[str, str]:
    """contract -> what went wrong, for one conversation (empty: every contract held)."""
    found: dict[str, str] = {}
    try:
        strategy = make()
    except Exception as exc:
        return {"raises": f"creating it raised {type(exc).__name__}: {exc}"}
    budget = declared_budget(strategy)
    for user, reply in conversation:
        try:
            twin = strategy.fork()
            with contextlib.suppress(Exception):
                strategy.prepare("\x00")
            request = strategy.prepare(user)
            expected = twin.prepare(user)
        except ContextOverflow:
            continue
        except Exception as exc:
            found.setdefault("raises", f"{type(exc).__name__}: {exc}")
            return found
        if (request.system, request.messages) != (expected.system, expected.messages):
            found.setdefault(
                "a raise changes nothing", "a refused message changed the next request"
            )
        if not request.system.startswith(SYSTEM):
            found.setdefault("system prompt first", f"system text starts {request.system[:40]!r}")
        msgs = request.messages
        if not msgs or msgs[-1].role != "user" or msgs[-1].content != user:
            found.setdefault("new message last", "the last message is not the new user message")
        roles = [m.role for m in msgs]
        if roles and (
            roles[0] != "user" or any(a == b for a, b in zip(roles, roles[1:], strict=False))
        ):
            found.setdefault("roles alternate", f"roles sent: {', '.join(roles)}")
        if budget is not None and request.tokens.content > budget:
            found.setdefault("budget", f"{request.tokens.content} tokens sent, budget {budget}")
        try:
            strategy.commit(user, reply)
        except Exception as exc:
            found.setdefault("raises", f"commit raised {type(exc).__name__}: {exc}")
            return found
    return found


def broken_contracts(
    cls: type[Strategy],
    *,
    params: dict[str, Any] | None = None,
    examples: int = 100,
) -> list[Broken]:
    """Each contract `cls` breaks, with a minimal failing conversation (hypothesis `find`)."""
    from hypothesis import HealthCheck, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample

    def make() -> Strategy:
        return cls(
            SYSTEM,
            counter=_COUNTER,
            upkeep=Upkeep(_summariser, _extractor),
            **(params or {}),
        )

    words = st.sampled_from(
        ["my", "salary", "is", "₹1,20,000", "rent", "Asha", "fund", "ok", "thanks", "plan", "🙂"]
    )
    text = st.lists(words, min_size=1, max_size=30).map(" ".join)
    conversations = st.lists(st.tuples(text, text), min_size=1, max_size=10)
    config = settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    out: list[Broken] = []
    for contract in CONTRACTS:

        def breaks(c: list[tuple[str, str]], k: str = contract) -> bool:
            return k in violations(make, c)

        try:
            example = find(conversations, breaks, settings=config)
        except NoSuchExample:
            continue
        detail = violations(make, example)[contract]
        out.append(Broken(contract, tuple(example), detail))
    return out


def report(name: str, broken: list[Broken], *, source: str | None = None) -> str:
    """The check's text: every contract held, or each broken one with its conversation;
    `source` (a strategy file) is named beside the strategy."""
    title = f"{name} ({source})" if source else name
    if not broken:
        return f"{title}: every contract held ({', '.join(CONTRACTS[:-1])})"
    return "\n".join([f"{title}: {len(broken)} contract(s) broken", *(b.show() for b in broken)])


def as_json(name: str, broken: list[Broken], *, source: str | None = None) -> str:
    return json.dumps(
        {
            "strategy": name,
            "source": source,
            "contracts": list(CONTRACTS),
            "broken": [
                {
                    "contract": b.contract,
                    "detail": b.detail,
                    "conversation": [list(t) for t in b.conversation],
                }
                for b in broken
            ],
        },
        ensure_ascii=False,
        indent=2,
    )
