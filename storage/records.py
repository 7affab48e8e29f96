"""Small pure helpers shared by the export format, the repository and the tracker: token
figures of a record, interrupted records, default names, the settings a session ran with,
lane memory states, and the one JSON encoder every stored text goes through."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from typing import Any

from lanes.lane import ERROR, LaneTurn
from lanes.session import Session
from memory.maintenance import Upkeep
from memory.registry import create
from memory.tokens import TokenCounter
from providers.redaction import redact, safe_url
from storage.carried import lane_compositions

INTERRUPTED = "Interrupted"  # error_kind of a lane that never answered its turn
INTERRUPTED_TEXT = "the app stopped before this lane answered (turn interrupted)"
NAME_LIMIT = 200
REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")  # NUL (PostgreSQL), lone surrogates (both)


def storable(text: str) -> str:
    """`text` as a database can hold it: NUL and lone surrogates (which no UTF-8 column
    accepts) become U+FFFD; every other character is kept as written."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


def dumps(data: Any, secrets: Iterable[str] = ()) -> str:
    """Compact JSON for a database column: known secrets redacted, nothing else rewritten.
    A lone surrogate (which no UTF-8 column takes) is written as its JSON escape, and NUL is
    escaped by `json` itself, so both read back exactly as they were."""
    text = redact(
        json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_default), secrets
    )
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def _default(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "as_dict"):  # typed records (TurnAccount, MaintenanceRecord)
        return value.as_dict()
    return str(value)


def public_settings(settings: Any) -> dict[str, Any] | None:
    """Provider settings as data without any key field, and their URL without credentials."""
    if settings is None:
        return None
    if hasattr(settings, "public_dict"):
        data = dict(settings.public_dict())
    elif isinstance(settings, Mapping):
        data = dict(settings)
    else:
        data = dict(vars(settings))
    data = {k: v for k, v in data.items() if "key" not in k.lower() or k == "key_set"}
    if isinstance(data.get("base_url"), str):
        data["base_url"] = safe_url(data["base_url"])
    return data


def prompt_tokens(record: LaneTurn) -> int:
    """Prompt tokens of a lane turn (`LaneTurn.prompt_tokens`, the one definition)."""
    return record.prompt_tokens


def total_tokens(record: LaneTurn) -> int:
    """Everything a lane turn sent and received (`LaneTurn.total_tokens`)."""
    return record.total_tokens


def interrupted_record(lane: str, turn: int, user: str) -> LaneTurn:
    """The record shown for a lane that never answered `turn` (retryable on the main page)."""
    return LaneTurn(lane, turn, user, ERROR, error=INTERRUPTED_TEXT, error_kind=INTERRUPTED)


def is_interrupted(record: LaneTurn) -> bool:
    return record.error_kind == INTERRUPTED and record.counted == 0 and record.body is None


def default_name(user_turns: Sequence[str]) -> str:
    """A session's name before anyone renames it: its first message, shortened."""
    if not user_turns:
        return "Empty conversation"
    first = " ".join(user_turns[0].split())
    return first if len(first) <= 60 else first[:59].rstrip() + "…"


def session_settings(session: Session, *, app: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a session was run with, as data with no key: prompt, providers, lanes, counter."""
    provider = public_settings(session.provider)
    maintenance = (
        None if session.maintenance is session.provider else public_settings(session.maintenance)
    )
    settings = {
        "system_prompt": session.system_prompt,
        "provider": provider,
        "maintenance": maintenance,
        "lanes": [lane_entry(n, lane) for n, lane in session.lanes.items()],
        "counter": {
            "encoding": session.counter.encoding_name,
            "estimate": session.counter.estimate,
        },
        "app": dict(app) if app else None,
    }
    composed = lane_compositions({n: lane.strategy for n, lane in session.lanes.items()})
    if composed:  # so the session opens where the compositions are not registered
        settings["compositions"] = composed
    return settings


def lane_entry(label: str, lane: Any) -> dict[str, Any]:
    """A lane in a session's settings: strategy and parameters; its label when that is not
    the strategy name, and its own provider (public settings) when it has one."""
    entry: dict[str, Any] = {"strategy": lane.strategy_name, "params": dict(lane.params)}
    if label != lane.strategy_name:
        entry["label"] = label
    if lane.provider:
        entry["provider"] = public_settings(lane.provider)
    return entry


def compact_state(state: Mapping[str, Any], records: Sequence[LaneTurn]) -> dict[str, Any]:
    """A lane's memory state without its history pairs when they equal its recorded turns.
    `records` must be rows that exist in the store: a pair is referenced only by a saved row
    (a turn whose write was lost keeps the pairs inline)."""
    memory = dict(state["memory"])
    numbers = state["turn_numbers"]
    pairs = memory.get("turns")
    if pairs is not None and _pairs_are_records(pairs, numbers, {r.turn: r for r in records}):
        memory["turns"] = None
        memory["turns_from_records"] = True
    return {**state, "memory": memory}


def _pairs_are_records(
    pairs: Sequence[Sequence[str]], numbers: Sequence[int], by_turn: Mapping[int, LaneTurn]
) -> bool:
    """Whether history pair i is (user, reply) of the record of turn numbers[i], for all i."""
    if len(pairs) != len(numbers):
        return False
    for number, pair in zip(numbers, pairs, strict=True):
        record = by_turn.get(number)
        if record is None or not _is_pair_of(pair, record):
            return False
    return True


def _is_pair_of(pair: Sequence[str], record: LaneTurn) -> bool:
    """Whether a history pair is (user, reply) of `record`."""
    return len(pair) == 2 and pair[0] == record.user and pair[1] == record.reply


class PairCheck:
    """`compact_state` for one lane saved turn by turn, each history pair compared with its
    saved row once. A strategy's history only grows and hands out the same pair objects each
    time (memory/strategies/base.History.pairs), so when the last pair checked is still the
    same object at its place, the pairs before it are unchanged; any other history (restored,
    replaced, a framework lane's own) is checked from its start. `saved`: the lane's turns
    whose rows exist in the store."""

    def __init__(self, saved: Iterable[int]) -> None:
        self.saved = set(saved)
        self._checked = 0
        self._last: Any = None

    def compact(
        self, state: Mapping[str, Any], records: Sequence[LaneTurn], record: LaneTurn
    ) -> tuple[dict[str, Any], tuple[int, Any]]:
        """`state` compacted as `compact_state` does it against the saved rows and `record`
        (being written), and how far the pairs are now checked: hand that to `written` once
        the row and state are stored."""
        memory = dict(state["memory"])
        numbers, pairs = state["turn_numbers"], memory.get("turns")
        if pairs is None or len(pairs) != len(numbers):
            return {**state, "memory": memory}, (0, None)
        start = self._checked
        if not (0 < start <= len(pairs) and pairs[start - 1] is self._last):
            start = 0
        done: tuple[int, Any] = (start, self._last if start else None)
        wanted = numbers[start:]
        found = _records_of(wanted, records, record)
        for number, pair in zip(wanted, pairs[start:], strict=True):
            rec = found.get(number)
            if rec is None or not (number in self.saved or number == record.turn):
                break
            if not _is_pair_of(pair, rec):
                break
            done = (done[0] + 1, pair)
        if done[0] == len(pairs):
            memory["turns"] = None
            memory["turns_from_records"] = True
        return {**state, "memory": memory}, done

    def written(self, turn: int, done: tuple[int, Any]) -> None:
        """The row of `turn` and the state `compact` returned `done` with are stored."""
        self.saved.add(turn)
        self._checked, self._last = done


def _records_of(
    numbers: Sequence[int], records: Sequence[LaneTurn], record: LaneTurn
) -> dict[int, LaneTurn]:
    """The records of `numbers` (`record` for its own turn), found from the end of `records`:
    the pairs left to check are the latest, so this costs what they cost."""
    wanted = set(numbers)
    found = {record.turn: record} if record.turn in wanted else {}
    for rec in reversed(records):
        if len(found) == len(wanted):
            break
        if rec.turn in wanted and rec.turn not in found:
            found[rec.turn] = rec
    return found


def expand_state(
    state: Mapping[str, Any],
    records: Sequence[LaneTurn],
    user_texts: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """The memory state `compact_state` saved, its pairs rebuilt from the saved rows. A row
    that is gone (a database written before compaction checked the rows) loses that turn's
    reply only: its pair is the user text (`user_texts`) and an empty reply, and the loader
    marks the turn interrupted."""
    memory = dict(state["memory"])
    if memory.pop("turns_from_records", False):
        by_turn = {r.turn: r for r in records}
        texts = user_texts or {}
        memory["turns"] = [
            [by_turn[t].user, by_turn[t].reply] if t in by_turn else [texts.get(t, ""), ""]
            for t in state["turn_numbers"]
        ]
    return {**state, "memory": memory}


def fresh_state(name: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The memory state of a lane that has not answered yet, as the strategy itself makes it."""
    params: dict[str, Any] = {}
    strategy, own = name, None
    for lane in settings.get("lanes") or []:
        if isinstance(lane, Mapping) and (lane.get("label") or lane.get("strategy")) == name:
            params = dict(lane.get("params") or {})
            strategy, own = str(lane.get("strategy") or name), lane.get("provider")
    counter = TokenCounter.for_model(None)
    kw: dict[str, Any] = {"counter": counter, "upkeep": Upkeep.using(_no_model)}
    try:
        memory = create(strategy, "", params=params, **kw).snapshot()
    except (ValueError, TypeError):  # parameters this version no longer accepts
        memory = create(strategy, "", **kw).snapshot()
    state = {"strategy": strategy, "params": params, "memory": memory, "turn_numbers": []}
    return {**state, "provider": dict(own)} if isinstance(own, Mapping) else state


def _no_model(request: Any) -> Any:
    raise RuntimeError("a fresh memory state never calls a model")


_LANE_FIELDS = fields(LaneTurn)


def plain(record: LaneTurn) -> dict[str, Any]:
    """A LaneTurn's fields as a dict, sharing its (never mutated) values: `as_dict` deep-copies
    every body, which is slow for a long session."""
    data = {f.name: getattr(record, f.name) for f in _LANE_FIELDS}
    data["account"] = record.account.as_dict()
    data["maintenance"] = [m.as_dict() for m in record.maintenance]
    data["shared"] = list(record.shared)
    return data


def record_data(record: LaneTurn) -> tuple[dict[str, Any], Any]:
    """A LaneTurn as (its fields without the body, the body): no deep copy, JSON does that."""
    data = plain(record)
    return data, data.pop("body")
