"""Maintenance (upkeep) a strategy asks of a model: summaries and fact extraction.

The prompts are built here as plain Requests, with their parsers. The model functions that
answer them arrive as one `Upkeep` value passed in from outside, so this module needs no
network and is tested with fakes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from memory.tokens import TokenCounter
from memory.types import MaintenanceCall, Message, ModelFn, Request, Turn

T = TypeVar("T")

SUMMARY_SYSTEM = (
    "You maintain a running summary of a conversation between a user and an assistant. "
    "Keep every name, number, amount, date, preference and decision stated by either side: "
    "the user's facts, and the figures, advice and commitments the assistant gave. "
    'Say who stated each one ("the user said ...", "the assistant suggested ..."). '
    "When a fact changes, keep only its current value and say it changed. "
    "Write plain prose in the third person, at most {words} words. Reply with the summary only."
)

EXTRACTION_SYSTEM = (
    "You keep a store of facts about the user. Read the current facts and the latest turn, "
    'then reply with JSON only: an object with "set", the new or changed facts as snake_case '
    'keys and their values, and "delete", a list of the keys of facts the user retracted. '
    "Set facts stated by either side: facts the user stated under plain keys (name, "
    "monthly_salary, monthly_expenses, ...), figures and commitments the assistant gave under "
    "keys starting assistant_ (assistant_suggested_emergency_fund, ...). "
    'If nothing changed reply {"set": {}, "delete": []}.'
)

# The shape of an extraction reply, as a JSON Schema for providers that can hold a model to one
# (the embedded llama.cpp server turns it into a grammar; see providers/families/embedded.py). No free
# text anywhere, so generation ends at the closing brace instead of running to the token cap.
FACT_UPDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "set": {"type": "object", "additionalProperties": {"type": ["string", "number"]}},
        "delete": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["set", "delete"],
    "additionalProperties": False,
}


def transcript_text(turns: Sequence[Turn]) -> str:
    """Turns as 'User: …' / 'Assistant: …' lines."""
    return "\n".join(f"User: {t.user}\nAssistant: {t.assistant}" for t in turns)


def summary_request(
    counter: TokenCounter, previous: str | None, turns: Sequence[Turn], *, words: int = 120
) -> Request:
    """The request that folds `turns` into the running summary `previous`."""
    parts = []
    if previous:
        parts.append(f"Current summary:\n{previous}")
    parts.append(f"New turns to fold in:\n{transcript_text(turns)}")
    parts.append("Write the updated summary.")
    system = SUMMARY_SYSTEM.format(words=words)
    messages = (Message("user", "\n\n".join(parts)),)
    return Request(system=system, messages=messages, tokens=counter.request(system, messages))


def extraction_request(counter: TokenCounter, facts: Mapping[str, Any], turn: Turn) -> Request:
    """The request that asks for fact updates from the latest turn."""
    current = json.dumps(dict(facts), ensure_ascii=False, sort_keys=True)
    content = (
        f"Current facts: {current}\n\nLatest turn:\n{transcript_text([turn])}\n\n"
        "Reply with the JSON update."
    )
    messages = (Message("user", content),)
    return Request(
        system=EXTRACTION_SYSTEM,
        messages=messages,
        tokens=counter.request(EXTRACTION_SYSTEM, messages),
        reply_schema=FACT_UPDATE_SCHEMA,
    )


def parse_summary(text: str) -> str:
    """The summary text, stripped; an empty reply is an error (the old summary is kept)."""
    summary = text.strip()
    if not summary:
        raise ValueError("the summariser returned an empty summary")
    return summary


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_fact_update(text: str) -> tuple[dict[str, Any], list[str]]:
    """(facts to set, keys to delete) from an extractor reply; ValueError if it is not that JSON.

    A reply that is JSON as a whole (what a schema-held model writes) is read as it is; else
    the JSON inside a code fence, or between the first "{" and the last "}", is. A bare object
    of facts counts as a 'set'.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        data = _embedded_json(text)
    if not isinstance(data, dict):
        raise ValueError("the extractor's JSON is not an object")
    if "set" not in data and "delete" not in data:
        data = {"set": data, "delete": []}
    to_set, to_delete = data.get("set") or {}, data.get("delete") or []
    if not isinstance(to_set, dict) or not isinstance(to_delete, list):
        raise ValueError("the extractor's JSON needs 'set' as an object and 'delete' as a list")
    clean: dict[str, Any] = {}
    for key, value in to_set.items():
        if not isinstance(value, str | int | float | bool) and value is not None:
            value = json.dumps(value, ensure_ascii=False)
        clean[str(key).strip()] = value
    return clean, [str(k) for k in to_delete]


def _embedded_json(text: str) -> Any:
    """The JSON object inside a reply that has other text around it (a fence, a preamble)."""
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    start, end = candidate.find("{"), candidate.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"the extractor did not return a JSON object: {text[:80]!r}")
    try:
        return json.loads(candidate[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the extractor returned invalid JSON ({exc.msg}): {text[:80]!r}") from exc


def call_model(
    kind: Literal["summary", "extraction"],
    model: ModelFn,
    request: Request,
    parse: Callable[[str], T],
) -> tuple[MaintenanceCall, T | None]:
    """Run one maintenance call; any failure is recorded in the call, never raised."""
    try:
        completion = model(request)
    except Exception as exc:  # a failing model must not fail the turn: record it
        error = f"{kind} call failed: {type(exc).__name__}: {exc}"
        return MaintenanceCall(kind, request, None, request.tokens, error=error), None
    try:
        result = parse(completion.text)
    except ValueError as exc:
        call = MaintenanceCall(
            kind,
            request,
            completion.text,
            request.tokens,
            usage=completion.usage,
            body=completion.body,
            error=str(exc),
            shared=completion.shared,
        )
        return call, None
    call = MaintenanceCall(
        kind,
        request,
        completion.text,
        request.tokens,
        usage=completion.usage,
        body=completion.body,
        shared=completion.shared,
    )
    return call, result


FactUpdate = tuple[dict[str, Any], list[str]]  # (facts to set, keys to delete)


@dataclass(frozen=True)
class Upkeep:
    """The model functions a strategy's upkeep calls go to (None: no calls of that kind)."""

    summarize: ModelFn | None = None
    extract: ModelFn | None = None

    @classmethod
    def using(cls, model: ModelFn | None) -> Upkeep:
        """One model function for both summaries and extraction."""
        return cls(model, model)

    def summary(
        self, counter: TokenCounter, previous: str | None, turns: Sequence[Turn], *, words: int
    ) -> tuple[MaintenanceCall, str | None]:
        """Fold `turns` into `previous`: the call, and the new summary (None if it failed)."""
        if self.summarize is None:
            raise ValueError("no summariser model function was given")
        request = summary_request(counter, previous, turns, words=words)
        return call_model("summary", self.summarize, request, parse_summary)

    def extraction(
        self, counter: TokenCounter, facts: Mapping[str, Any], turn: Turn
    ) -> tuple[MaintenanceCall, FactUpdate | None]:
        """Ask for fact updates from `turn`: the call, and the update (None if it failed)."""
        if self.extract is None:
            raise ValueError("no extractor model function was given")
        request = extraction_request(counter, facts, turn)
        return call_model("extraction", self.extract, request, parse_fact_update)


NO_UPKEEP = Upkeep()
