"""The survival lab's verdicts: is a fact's current value, or only a stale one, in the payload
and in the model's answer.

A fact that was updated ("my rent went up to ₹28,000") has a current value and stale ones.
Each probe says, for the payload and for the reply, which of four states holds:

* current - the current value is there (and no stale one);
* both    - the current value and a stale one are there;
* stale   - only a stale value is there: recalling the old rent after an update is a failure;
* missing - neither.

A fact never updated has no stale value, so it is current or missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory.numbers import Answer
from memory.strategies.base import Strategy
from memory.types import Request

# Row verdicts (one per row). The first four need a model reply; the next ones are payload-only.
KEPT = "in payload, recalled"
MISSED = "in payload, not recalled"
LOST = "not in payload, not recalled"
LEAK = "recalled, NOT in payload"
STALE_RECALL = "recalled the stale value"
IN_PAYLOAD = "in payload"
NOT_IN_PAYLOAD = "not in payload"
STALE_IN_PAYLOAD = "only the stale value in payload"
ERROR = "error"
LEAK_FLAG = "guess/leak"

# Value states, for the payload and for the reply.
CURRENT, BOTH, STALE, MISSING = "current", "both", "stale", "missing"
STATES = (CURRENT, BOTH, STALE, MISSING)
STATE_MEANING = {
    CURRENT: "the current value is there",
    BOTH: "the current value and an old (stale) one are both there",
    STALE: "only an old value is there: the update was lost",
    MISSING: "no value of the fact is there",
}


def state_of(has_current: bool, has_stale: bool) -> str:
    if has_current:
        return BOTH if has_stale else CURRENT
    return STALE if has_stale else MISSING


def found(text: str | None, answers: Sequence[Answer]) -> bool:
    return bool(text) and any(a.found_in(text) for a in answers)  # type: ignore[arg-type]


def reply_state(
    reply: str, current: Sequence[Answer], stale: Sequence[Answer]
) -> tuple[str, str | None]:
    """(state of the reply, the current answer it matched or None)."""
    matched = next((a.text for a in current if a.found_in(reply)), None)
    return state_of(matched is not None, found(reply, stale)), matched


def verdict_of(
    in_payload: bool | None,
    recalled: bool | None,
    error: str | None,
    *,
    payload_state: str = "",
    recall_state: str = "",
) -> str:
    """The row's one-phrase verdict."""
    if in_payload is None:
        return ERROR
    if recalled is None:
        if error:
            return ERROR
        if in_payload:
            return IN_PAYLOAD
        return STALE_IN_PAYLOAD if payload_state == STALE else NOT_IN_PAYLOAD
    if recall_state == STALE:
        return STALE_RECALL
    if in_payload:
        return KEPT if recalled else MISSED
    return LEAK if recalled else LOST


def payload_check(
    request: Request, strategy: Strategy, answers: Sequence[Answer]
) -> tuple[bool, tuple[str, ...]]:
    """Is any accepted answer in the request (the probe question itself excluded), and where:
    'turn 1', 'reply 7', 'turn 3 (retrieved)', 'summary', 'facts', 'system prompt'."""
    if not answers:
        return False, ()
    present = found(request.system, answers) or any(
        found(m.content, answers) for m in request.messages[:-1]
    )
    where: list[str] = []
    acc = request.account
    if found(strategy.system_prompt, answers):
        where.append("system prompt")
    if acc is not None:
        if acc.facts and found(json.dumps(dict(acc.facts), ensure_ascii=False), answers):
            where.append("facts")
        if acc.summary and found(acc.summary, answers):
            where.append("summary")
        retrieved = set(acc.retrieved_turns)
        for i in acc.kept_turns:
            turn = strategy.history.turn(i)
            tag = " (retrieved)" if i in retrieved else ""
            if found(turn.user, answers):
                where.append(f"turn {i}{tag}")
            if found(turn.assistant, answers):
                where.append(f"reply {i}{tag}")
    if present and not where:
        where.append("payload")
    return present, tuple(where)
