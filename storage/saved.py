"""The saved-session types: `SessionInfo` (a row of the list) and `SavedSession` (a whole
session as plain data, which every export draws and storage/codec.py reads back).

A JSON export carries ``"memory_lab_session": FORMAT_VERSION``. That is the version of this
file format, not of the database schema (storage/migrations.py), and they change independently.
Version 1 was written before the two were separated (same layout); version 2 never holds
credentials in a provider URL; version 3 keys lanes by label (one strategy may run in
several lanes, each lane's own provider is in its entry; a lane named after its strategy
reads as before). All three are read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from lanes.lane import LaneTurn, lane_title
from lanes.session import Session
from memory.registry import REGISTRY
from storage.records import (
    default_name,
    interrupted_record,
    is_interrupted,
    plain,
    prompt_tokens,
    session_settings,
    total_tokens,
)

FORMAT = "memory_lab_session"  # the marker key of a JSON export (value: FORMAT_VERSION)
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
_ID = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def now() -> datetime:
    return datetime.now(UTC)


def valid_id(value: Any) -> bool:
    """Whether `value` can be a session id as saved (letters, digits, `_.-`, at most 64)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


@dataclass(frozen=True)
class SessionInfo:
    """A saved session as the list shows it."""

    id: str
    name: str
    source: str
    created: datetime
    updated: datetime
    strategies: tuple[str, ...]
    turns: int
    lane_turns: int
    prompt_tokens: int
    total_tokens: int
    has_survival: bool = False

    @property
    def interrupted(self) -> bool:
        """Some lane of some turn never answered."""
        return self.lane_turns < self.turns * len(self.strategies)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "source": self.source,
            "created": self.created.isoformat(),
            "updated": self.updated.isoformat(),
            "strategies": list(self.strategies),
            "turns": self.turns,
            "lane_turns": self.lane_turns,
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.total_tokens,
            "has_survival": self.has_survival,
        }


@dataclass(frozen=True)
class SavedSession:
    """A whole session as plain data: what the sessions page shows and every export draws.

    `records` holds each lane's turn records in turn order; a lane that never answered a
    turn has an `Interrupted` error record there (see `interrupted`)."""

    info: SessionInfo
    settings: dict[str, Any]
    user_turns: tuple[str, ...]
    records: dict[str, list[LaneTurn]]
    memory: dict[str, dict[str, Any]]  # lane -> Lane.memory_state()
    interrupted: tuple[int, ...] = ()
    survival: dict[str, Any] | None = None

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def strategies(self) -> tuple[str, ...]:
        return self.info.strategies

    @property
    def system_prompt(self) -> str:
        return str(self.settings.get("system_prompt", ""))

    def titles(self) -> dict[str, str]:
        """Lane label -> its title: the strategy's, plus what the label adds."""
        out = {}
        for n in self.strategies:
            strategy = self.strategy(n)
            found = REGISTRY.get(strategy)
            out[n] = lane_title(found.title, strategy, n) if found else n
        return out

    def strategy(self, lane: str) -> str:
        """The strategy lane `lane` ran (older sessions keyed lanes by strategy name)."""
        return str(self.memory.get(lane, {}).get("strategy") or lane)

    def params(self, lane: str) -> dict[str, Any]:
        return dict(self.memory.get(lane, {}).get("params") or {})

    def lane_provider(self, lane: str) -> dict[str, Any] | None:
        """The public settings of the lane's own provider (None: it ran on the session's)."""
        found = self.memory.get(lane, {}).get("provider")
        return dict(found) if found else None

    def with_info(self, **changes: Any) -> SavedSession:
        """A copy with some list fields changed (id, name, source, turns…)."""
        return replace(self, info=replace(self.info, **changes))

    def snapshot(self) -> dict[str, Any]:
        """The session in `Session.snapshot()` form, ready for `Session.from_snapshot`."""
        return {
            "id": self.id,
            "name": self.name,
            "system_prompt": self.system_prompt,
            "provider": self.settings.get("provider"),
            "maintenance": self.settings.get("maintenance"),
            "user_turns": list(self.user_turns),
            "lanes": {
                name: {
                    **self.memory[name],
                    "turns": [plain(r) for r in self.records.get(name, [])],
                }
                for name in self.strategies
            },
        }

    def as_dict(self) -> dict[str, Any]:
        """The whole session as JSON-ready data (the JSON export; `from_dict` reads it back)."""
        return {
            FORMAT: FORMAT_VERSION,
            **self.snapshot(),
            "info": self.info.as_dict(),
            "settings": self.settings,
            "interrupted": list(self.interrupted),
            "survival": self.survival,
        }

    @classmethod
    def from_session(
        cls,
        session: Session,
        *,
        app: Mapping[str, Any] | None = None,
        source: str = "main",
        survival: Mapping[str, Any] | None = None,
        created: datetime | None = None,
    ) -> SavedSession:
        """A live Session as plain data (to save it whole, or export it without a database)."""
        records = session.records()
        saved = [r for rs in records.values() for r in rs if not is_interrupted(r)]
        at = now()
        info = SessionInfo(
            id=session.id,
            name=session.name or default_name(session.user_turns),
            source=source,
            created=created or at,
            updated=at,
            strategies=tuple(session.lanes),
            turns=session.turn,
            lane_turns=len(saved),
            prompt_tokens=sum(prompt_tokens(r) for r in saved),
            total_tokens=sum(total_tokens(r) for r in saved),
            has_survival=survival is not None,
        )
        return complete(
            cls(
                info=info,
                settings=session_settings(session, app=app),
                user_turns=tuple(session.user_turns),
                records=records,
                memory={name: lane.memory_state() for name, lane in session.lanes.items()},
                survival=dict(survival) if survival else None,
            )
        )


def complete(saved: SavedSession) -> SavedSession:
    """Fill each lane's missing turns with `Interrupted` records; list the turns affected."""
    interrupted: set[int] = set()
    records: dict[str, list[LaneTurn]] = {}
    for name in saved.strategies:
        have = {r.turn: r for r in saved.records.get(name, [])}
        rows = []
        for turn, user in enumerate(saved.user_turns, start=1):
            record = have.get(turn)
            if record is None or is_interrupted(record):
                interrupted.add(turn)
                record = record or interrupted_record(name, turn, user)
            rows.append(record)
        records[name] = rows
    return replace(saved, records=records, interrupted=tuple(sorted(interrupted)))
