"""The record codec: reading a JSON export (and the records the database holds) safely.
Every part is checked before anything is built, so a broken, hostile or too deeply nested
file gives a SessionFormatError that names the problem (never a RecursionError, TypeError
or a half-restored session). Pure: no database; registers the compositions an export carries.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pydantic

from lanes.lane import CANCELLED, ERROR, INCOMPLETE, OK, OVERFLOW, LaneTurn
from memory.errors import InvalidParameter, MemoryLabError
from memory.jsontext import decoded, parse_json
from memory.lane_spec import LABEL_LIMIT, strategy_of
from memory.maintenance import Upkeep
from memory.registry import REGISTRY, create
from memory.strategies.base import UNSENDABLE
from memory.tokens import TokenCounter
from providers.settings import ProviderChoice, ProviderSettings
from storage.carried import adopt
from storage.errors import SessionFormatError
from storage.records import is_interrupted, prompt_tokens, total_tokens
from storage.saved import FORMAT, READABLE_VERSIONS, SavedSession, SessionInfo, complete

STATUSES = frozenset({OK, ERROR, OVERFLOW, INCOMPLETE, CANCELLED})
MAX_COUNT = 2**53  # the largest whole number JSON carries exactly
MAX_DEPTH = 64  # an export nests about 8 levels; request bodies a few more
MAX_BYTES = 200_000_000


def loads(text: str | bytes, what: str = "the file") -> Any:
    """JSON from `text`, or SessionFormatError: not UTF-8, not JSON, or nested too deeply."""
    if isinstance(text, bytes) and len(text) > MAX_BYTES:
        raise SessionFormatError(f"{what} is larger than {MAX_BYTES // 1_000_000} MB")
    text = decoded(text, what, SessionFormatError)
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise SessionFormatError(
            f"{what} nests {depth} levels deep; at most {MAX_DEPTH} are accepted"
        )
    return parse_json(text, what, SessionFormatError)  # its recursion guard is a second one


def nesting(text: str) -> int:
    """The deepest bracket nesting of JSON `text` (brackets inside strings not counted),
    found without recursion."""
    deepest = depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


# -- typed records ---------------------------------------------------------------------------
# Every record an export or a database row holds is decoded by pydantic against the record's
# own dataclass, strictly (no "12" for 12): the type checks live in the record types, and a
# wrong field is answered with its path. Ranges JSON cannot express are checked by
# `_in_range`; characters a text column cannot hold by `check_text`.


def decode_turn(data: Any, path: str = "a turn") -> LaneTurn:
    """One lane record (as exported, or as a database row holds it), every field checked
    against its declared type and range; SessionFormatError names the field's path, as in
    `lanes.full.turns[0].counted`. Unknown fields are ignored (a newer app's additions)."""
    data = _mapping(data, path)
    _in_range(data, path)
    # a record with a lone surrogate is checked as _record says, then built from `data`
    turn: LaneTurn = _record(LaneTurn, _shaped(data), path, keep=lambda: LaneTurn.from_dict(data))
    if turn.status not in STATUSES:
        raise SessionFormatError(
            f"{path}.status is one of {', '.join(sorted(STATUSES))}, not {turn.status!r}"
        )
    return turn


@dataclass(frozen=True)
class CounterRecord:
    """`settings.counter`: the token counter a session was run with."""

    encoding: str | None = None
    estimate: bool = True


@dataclass(frozen=True)
class LaneEntry:
    """One of `settings.lanes`: a lane's strategy, parameters, label and own provider."""

    strategy: str
    params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    provider: ProviderSettings | None = None


@dataclass(frozen=True)
class AppLane:
    """One lane of the main page's saved choices (`settings.app.lanes`)."""

    strategy: str | None = None
    label: str | None = None
    params: dict[str, Any] | None = None
    provider: ProviderChoice | None = None


@dataclass(frozen=True)
class AppChoices:
    """`settings.app`: the main page's choices when the session was saved."""

    provider: ProviderChoice | None = None
    system_prompt: str | None = None
    lanes: tuple[AppLane, ...] | None = None


@dataclass(frozen=True)
class MemorySnapshot:
    """The part of `Strategy.snapshot()` every strategy shares (subclasses add their own)."""

    strategy: str
    turns: tuple[tuple[str, str], ...] | None = None
    summary: str | None = None
    summarised: int = 0
    facts: dict[str, Any] | None = None
    summary_truncated: bool | None = None
    turns_from_records: bool = False


def check_settings(settings: Mapping[str, Any], path: str = "settings") -> None:
    """The settings an export carries, checked as the readers will use them: the provider
    settings (session's, upkeep's, each lane's), the counter, the lanes and the main page's
    saved choices. Only checked: where a request goes and which key it carries is never
    taken from them (lanes/endpoint_policy.py decides)."""
    for key, cls in (
        ("provider", ProviderSettings),
        ("maintenance", ProviderSettings),
        ("counter", CounterRecord),
        ("app", AppChoices),
    ):
        if settings.get(key) is not None:
            _in_range(settings[key], f"{path}.{key}")
            _record(cls, settings[key], f"{path}.{key}")
    lanes = settings.get("lanes")
    if lanes is not None:
        _record(tuple[LaneEntry, ...], lanes, f"{path}.lanes")
    if not isinstance(settings.get("system_prompt", ""), str):
        raise SessionFormatError(f"{path}.system_prompt must be text")


def check_memory(state: Mapping[str, Any], name: str, params: Mapping[str, Any]) -> None:
    """A lane's saved memory, restored once into a fresh strategy of its kind (no model is
    called): what Open will do, so a state that would break Open is refused at the door."""
    path = f"lanes.{name}.memory"
    snapshot: MemorySnapshot = _record(MemorySnapshot, state, path)
    _in_range({"summarised": snapshot.summarised}, path)
    if snapshot.turns is None:
        if snapshot.turns_from_records:
            return  # rebuilt from the lane's records when the session opens
        raise SessionFormatError(f"{path}.turns is missing: a list of [user, reply] pairs")
    try:
        strategy = create(
            snapshot.strategy,
            "",
            params=dict(params),
            counter=TokenCounter.for_model(None),
            upkeep=Upkeep.using(_no_model),
        )
        strategy.restore(dict(state))
    except (MemoryLabError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise SessionFormatError(
            f"{path} cannot be restored: {type(exc).__name__}: {exc}"
        ) from None


def _no_model(request: Any) -> Any:
    raise RuntimeError("restoring a saved memory never calls a model")


# A check for an export's optional top-level part that a layer above storage owns (the
# survival result): registered by that layer, run by check_export on every import.
PART_CHECKS: dict[str, Callable[[Any, str], None]] = {}


def register_part(key: str, check: Callable[[Any, str], None]) -> None:
    """Have `check(value, path)` run on an export's `key` part (it raises
    SessionFormatError naming the field)."""
    PART_CHECKS[key] = check


def check_text(value: Any, path: str) -> None:
    """Text a database column holds as text (user messages, names, labels): NUL and lone
    surrogates, which no UTF-8 column takes and the chat box never sends, are refused with
    the field and position, rather than stored changed. Text that is stored as JSON (replies,
    bodies, memory) keeps them, escaped, byte for byte."""
    for where, text in _texts(value, path):
        bad = UNSENDABLE.search(text)
        if bad:
            what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate"
            raise SessionFormatError(
                f"{where} contains {what} at position {bad.start() + 1}; a message or name "
                "cannot hold it (the chat box refuses it too): remove it and import again"
            )


def _texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _texts(key, f"{path} (a key)")
            yield from _texts(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _texts(item, f"{path}[{i}]")


FREE_NUMBERS = frozenset({"body", "facts", "params"})  # what went on the wire, what a user said


def _in_range(value: Any, path: str) -> None:
    """Every number in `value` (a record's fields: counts, seconds, settings) finite, 0 or
    more, and at most MAX_COUNT; numbers under FREE_NUMBERS keys are left as they are."""
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((f"{where}.{k}", v) for k, v in item.items() if k not in FREE_NUMBERS)
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
        elif (
            isinstance(item, int | float)
            and not isinstance(item, bool)
            and not (math.isfinite(item) and 0 <= item <= MAX_COUNT)
        ):
            raise SessionFormatError(
                f"{where} must be a number from 0 to {MAX_COUNT}, not {item!r}"
            )


def _shaped(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A lane record with its account's parts as objects: they are saved as
    [name, tokens, [turns]] to keep exports small."""
    account = data.get("account")
    if not isinstance(account, Mapping) or not isinstance(account.get("parts"), list):
        return data
    parts = [
        {"name": p[0], "tokens": p[1], "turns": p[2]} if isinstance(p, list) and len(p) == 3 else p
        for p in account["parts"]
    ]
    return {**data, "account": {**account, "parts": parts}}


@functools.cache
def _adapter(cls: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(cls)


def _record(cls: Any, data: Any, path: str, keep: Callable[[], Any] | None = None) -> Any:
    """`data` as the record type `cls`, strictly; SessionFormatError names the first field
    that is missing, extra to a list's shape, or of the wrong type. Text holding a lone
    surrogate (a model's broken reply, kept as it came) is checked with U+FFFD in its place,
    and `keep()` builds the record from the original data, every character kept."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SessionFormatError(f"{path}: {exc}") from None
    whole = not _SURROGATE_ESCAPE.search(text)
    if not whole:  # pydantic's JSON reader refuses lone ones
        text = json.dumps(_whole(data))
    try:
        record = _adapter(cls).validate_json(text, strict=True)
    except pydantic.ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = path + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in error["loc"])
        shown = repr(error.get("input"))
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise SessionFormatError(f"{where}: {error['msg']} (got {shown})") from None
    return record if whole or keep is None else keep()


_SURROGATE_ESCAPE = re.compile(r"\\ud[89a-f]", re.IGNORECASE)
_LONE = re.compile("[\ud800-\udfff]")


def _whole(node: Any) -> Any:
    """`node` with every lone surrogate in its text replaced by U+FFFD (types unchanged)."""
    if isinstance(node, str):
        return _LONE.sub("\ufffd", node)
    if isinstance(node, Mapping):
        return {_whole(k): _whole(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_whole(v) for v in node]
    return node


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SessionFormatError(f"{what} must be an object, not {type(value).__name__}")
    return value


def check_export(data: Any) -> dict[str, Any]:
    """The `SavedSession` fields an export holds, every one checked; SessionFormatError
    names the first part missing or of the wrong shape."""
    if not isinstance(data, Mapping) or FORMAT not in data:
        raise SessionFormatError(f"not a Memory Lab session export (no {FORMAT!r} key)")
    version = data[FORMAT]
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionFormatError(f"export format {version!r} is not a version number")
    if version not in READABLE_VERSIONS:
        newer = version > max(READABLE_VERSIONS)
        raise SessionFormatError(
            f"export format {version} is {'newer than this app understands' if newer else 'unknown'}"
        )
    for key in ("id", "user_turns", "lanes", "settings"):
        if key not in data:
            raise SessionFormatError(f"the export has no {key!r}")
    if not isinstance(data["id"], str) or not data["id"]:
        raise SessionFormatError("'id' must be a non-empty string")
    user_turns = data["user_turns"]
    if not isinstance(user_turns, list) or not all(isinstance(u, str) for u in user_turns):
        raise SessionFormatError("'user_turns' must be a list of strings")
    lanes = data["lanes"]
    if not isinstance(lanes, Mapping) or not lanes:
        raise SessionFormatError("'lanes' must map each strategy to its lane")
    for key in ("id", "name", "user_turns", "info"):
        check_text(data.get(key), key)
    check_text(list(lanes), "lanes (their names)")
    settings = dict(_mapping(data["settings"], "'settings'"))
    settings.setdefault("system_prompt", data.get("system_prompt", ""))
    check_settings(settings)
    try:  # the compositions its lanes ran: registered if this process lacks them
        adopt(settings)
    except InvalidParameter as exc:
        raise SessionFormatError(f"'settings': {exc}") from None
    records: dict[str, list[LaneTurn]] = {}
    memory: dict[str, dict[str, Any]] = {}
    for name, lane in lanes.items():
        records[name], memory[name] = _lane(name, lane, len(user_turns))
    for key, check in PART_CHECKS.items():
        if data.get(key) is not None:
            check(data[key], key)
    info_data = dict(_mapping(data.get("info") or {}, "'info'"))
    info_data.setdefault("id", data["id"])
    info_data.setdefault("name", data.get("name", ""))
    saved_records = [r for rs in records.values() for r in rs if not is_interrupted(r)]
    info = decode_info(
        {
            **info_data,
            "strategies": list(lanes),
            "turns": len(user_turns),
            "lane_turns": len(saved_records),
            "prompt_tokens": sum(prompt_tokens(r) for r in saved_records),
            "total_tokens": sum(total_tokens(r) for r in saved_records),
            "has_survival": bool(data.get("survival")),
        }
    )
    survival = data.get("survival")
    return {
        "info": info,
        "settings": settings,
        "user_turns": tuple(user_turns),
        "records": records,
        "memory": memory,
        "survival": dict(_mapping(survival, "'survival'")) if survival else None,
    }


def _lane(name: str, lane: Any, turns: int) -> tuple[list[LaneTurn], dict[str, Any]]:
    """One lane of an export: its records and its memory state, each field checked."""
    path = f"lanes.{name}"
    lane = _mapping(lane, path)
    strategy = lane.get("strategy", name)
    if not isinstance(strategy, str) or strategy not in REGISTRY:
        raise SessionFormatError(f"{path}.strategy: unknown strategy {strategy!r}")
    if strategy_of(name, REGISTRY) != strategy or len(name) > LABEL_LIMIT:
        raise SessionFormatError(
            f"lane {name!r}: unknown strategy (a lane's label is at most {LABEL_LIMIT} "
            f"characters and starts with its strategy, here {strategy!r})"
        )
    for key in ("turns", "memory", "turn_numbers"):
        if key not in lane:
            raise SessionFormatError(f"{path}.{key} is missing")
    if not isinstance(lane["turns"], list):
        raise SessionFormatError(f"{path}.turns must be a list")
    records = [decode_turn(t, f"{path}.turns[{i}]") for i, t in enumerate(lane["turns"])]
    for i, record in enumerate(records):
        check_text(record.user, f"{path}.turns[{i}].user")
        check_text(record.lane, f"{path}.turns[{i}].lane")
        if not 1 <= record.turn <= turns:
            raise SessionFormatError(f"{path}.turns[{i}].turn {record.turn} is outside 1..{turns}")
    numbers: tuple[int, ...] = _record(
        tuple[int, ...], lane["turn_numbers"], f"{path}.turn_numbers"
    )
    outside = [n for n in numbers if not 1 <= n <= turns]
    if outside:
        raise SessionFormatError(f"{path}.turn_numbers: turn {outside[0]} is outside 1..{turns}")
    params = lane.get("params") or {}
    state = dict(_mapping(lane["memory"], f"{path}.memory"))
    check_memory(state, name, _mapping(params, f"{path}.params"))
    if state.get("strategy") != strategy:
        raise SessionFormatError(
            f"{path}.memory.strategy is {state.get('strategy')!r}, the lane's is {strategy!r}"
        )
    saved: dict[str, Any] = {
        "strategy": strategy,
        "params": dict(params),
        "memory": state,
        "turn_numbers": list(numbers),
    }
    if lane.get("provider") is not None:
        _in_range(lane["provider"], f"{path}.provider")
        _record(ProviderSettings, lane["provider"], f"{path}.provider")
        saved["provider"] = dict(lane["provider"])
    return records, saved


def read_export(text: str | bytes, what: str = "the file") -> SavedSession:
    """A JSON export's text as a SavedSession; SessionFormatError names what is wrong."""
    return decode_export(loads(text, what))


def decode_export(data: Any) -> SavedSession:
    """A parsed JSON export as a SavedSession; SessionFormatError names the first missing
    or wrong part."""
    return complete(SavedSession(**check_export(data)))


def parse_time(value: Any, what: str = "a date") -> datetime:
    """An ISO date (naive ones are UTC); now when absent; SessionFormatError when not a date."""
    if isinstance(value, datetime):
        return _utc(value)
    if value is None or value == "":
        return datetime.now(UTC)
    if isinstance(value, str):
        try:
            return _utc(datetime.fromisoformat(value))
        except ValueError:
            pass
    raise SessionFormatError(f"{what} must be an ISO date like 2026-01-31T12:00:00, not {value!r}")


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def decode_info(data: Mapping[str, Any]) -> SessionInfo:
    """An export's `info` part."""
    if not isinstance(data, Mapping):
        raise SessionFormatError(f"'info' must be an object, not {type(data).__name__}")
    try:
        return SessionInfo(
            id=str(data["id"]),
            name=str(data.get("name") or ""),
            source=str(data.get("source") or "import")[:32],
            created=parse_time(data.get("created"), "'info.created'"),
            updated=parse_time(data.get("updated"), "'info.updated'"),
            strategies=tuple(str(s) for s in data.get("strategies") or ()),
            turns=int(data.get("turns") or 0),
            lane_turns=int(data.get("lane_turns") or 0),
            prompt_tokens=int(data.get("prompt_tokens") or 0),
            total_tokens=int(data.get("total_tokens") or 0),
            has_survival=bool(data.get("has_survival")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SessionFormatError):
            raise
        raise SessionFormatError(f"'info': {type(exc).__name__}: {exc}") from None
