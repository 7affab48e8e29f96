"""Reading a JSON export safely: every part checked before anything is built, so a broken,
hostile or too deeply nested file gives a SessionFormatError that names the problem
(never a RecursionError, TypeError or a half-restored session)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lanes.labels import LABEL_LIMIT, strategy_of
from lanes.lane import LaneTurn
from memory.registry import REGISTRY
from storage.records import is_interrupted, prompt_tokens, total_tokens
from storage.saved import (
    FORMAT,
    READABLE_VERSIONS,
    SessionFormatError,
    SessionInfo,
)

MAX_DEPTH = 64  # an export nests about 8 levels; request bodies a few more
MAX_BYTES = 200_000_000


def loads(text: str | bytes, what: str = "the file") -> Any:
    """JSON from `text`, or SessionFormatError: not UTF-8, not JSON, or nested too deeply."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise SessionFormatError(f"{what} is larger than {MAX_BYTES // 1_000_000} MB")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SessionFormatError(
                f"{what} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
            ) from None
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise SessionFormatError(
            f"{what} nests {depth} levels deep; at most {MAX_DEPTH} are accepted"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SessionFormatError(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:  # nesting() counts brackets; this is only a second guard
        raise SessionFormatError(f"{what} nests too deeply to read") from None


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
    info = SessionInfo.from_dict(
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
