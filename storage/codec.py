"""The record codec: reading a JSON export (and the records the database holds) safely.
Every part is checked before anything is built, so a broken, hostile or too deeply nested
file gives a SessionFormatError that names the problem (never a RecursionError, TypeError
or a half-restored session). Pure: no database; registers the compositions an export carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from lanes.labels import LABEL_LIMIT, strategy_of
from lanes.lane import LaneTurn
from memory.errors import InvalidParameter
from memory.jsontext import decoded, parse_json
from memory.registry import REGISTRY
from storage.carried import adopt
from storage.errors import SessionFormatError
from storage.records import is_interrupted, prompt_tokens, total_tokens
from storage.saved import FORMAT, READABLE_VERSIONS, SavedSession, SessionInfo, complete

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
    settings = dict(_mapping(data["settings"], "'settings'"))
    if not isinstance(settings.get("provider"), Mapping | None):
        raise SessionFormatError("'settings.provider' must be an object")
    try:  # the compositions its lanes ran: registered if this process lacks them
        adopt(settings)
    except InvalidParameter as exc:
        raise SessionFormatError(f"'settings': {exc}") from None
    records: dict[str, list[LaneTurn]] = {}
    memory: dict[str, dict[str, Any]] = {}
    for name, lane in lanes.items():
        strategy = lane.get("strategy", name) if isinstance(lane, Mapping) else name
        if strategy not in REGISTRY:
            raise SessionFormatError(f"lane {name!r}: unknown strategy {strategy!r}")
        if strategy_of(name, REGISTRY) != strategy or len(name) > LABEL_LIMIT:
            raise SessionFormatError(
                f"lane {name!r}: unknown strategy (a lane's label is at most {LABEL_LIMIT} "
                f"characters and starts with its strategy, here {strategy!r})"
            )
        try:
            lane = _mapping(lane, f"lane {name!r}")
            records[name] = [LaneTurn.from_dict(_mapping(t, "a turn")) for t in lane["turns"]]
            memory[name] = {
                "strategy": strategy,
                "params": dict(lane.get("params") or {}),
                "memory": dict(lane["memory"]),
                "turn_numbers": [int(t) for t in lane["turn_numbers"]],
            }
            if lane.get("provider") is not None:
                memory[name]["provider"] = dict(_mapping(lane["provider"], "'provider'"))
        except SessionFormatError as exc:
            raise SessionFormatError(f"lane {name!r}: {exc}") from None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise SessionFormatError(f"lane {name!r}: {type(exc).__name__}: {exc}") from None
        bad = [
            r.turn
            for r in records[name]
            if type(r.turn) is not int or not 1 <= r.turn <= len(user_turns)
        ]
        if bad:
            raise SessionFormatError(
                f"lane {name!r}: turn {bad[0]!r} is outside 1..{len(user_turns)}"
            )
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
    settings.setdefault("system_prompt", data.get("system_prompt", ""))
    if not isinstance(settings["system_prompt"], str):
        raise SessionFormatError("'settings.system_prompt' must be text")
    survival = data.get("survival")
    return {
        "info": info,
        "settings": settings,
        "user_turns": tuple(user_turns),
        "records": records,
        "memory": memory,
        "survival": dict(_mapping(survival, "'survival'")) if survival else None,
    }


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
