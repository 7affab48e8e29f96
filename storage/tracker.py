"""The live tracker: saves one running Session turn by turn, through the store's session
writes (storage/writes.py) only. It never raises into a lane: a failed write is logged, kept
in `error` (shown by the page) and retried with the next write, and `error` clears only once every lost write
has been repaired. Every lane's thread calls it at once: one lock makes each call (its
repairs and its own write) whole, so two lanes never repair the same lost write."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from lanes.lane import LaneTurn
from lanes.session import Session
from providers.redaction import secrets_of
from storage.writes import SessionWrites

log = logging.getLogger(__name__)


class Writable(Protocol):
    """What the tracker saves through: a store's session writes (`Store` is one)."""

    @property
    def writes(self) -> SessionWrites: ...


@dataclass(eq=False)
class Tracker:
    """Saves one live Session as it runs (a session listener)."""

    store: Writable
    session: Session = field(repr=False)
    app: dict[str, Any] | None = None
    source: str = "main"
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    claimed: bool = False
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    saved: int = 0
    # writes that failed, retried before the next write: turn -> user text, (turn, lane) -> record
    unsaved_turns: dict[int, str] = field(default_factory=dict, repr=False)
    unsaved_lanes: dict[tuple[int, str], LaneTurn] = field(default_factory=dict, repr=False)
    # held by each call from a lane's thread (or the page's): repairs and writes one at a time
    _lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.app = dict(self.app) if self.app else None
        self.secrets = secrets_of(self.session.provider, self.session.maintenance)

    def on_turn(self, session: Session, turn: int, text: str) -> None:
        with self._lock:
            self._on_turn(session, turn, text)

    def _on_turn(self, session: Session, turn: int, text: str) -> None:
        self._repair(session)

        def write() -> None:
            old = self.store.writes.begin_turn(
                session, turn, text, writer=self.token, claimed=self.claimed,
                secrets=self.secrets, app=self.app, source=self.source,
            )  # fmt: skip
            self.claimed = True
            if old is not None:
                self.notes.append(
                    f"session {old} was changed in another window: this conversation is "
                    f"saved as a copy ({session.id})"
                )

        if not self._guard(write):
            self.unsaved_turns[turn] = text

    def __call__(self, session: Session, record: LaneTurn) -> None:
        with self._lock:
            self._repair(session)
            if not self._save_lane(session, record):
                self.unsaved_lanes[(record.turn, record.lane)] = record
            elif session.lean:  # saved: the store has its bodies (Session's `lean`)
                session.lanes[record.lane].lean_last(record)

    def _save_lane(self, session: Session, record: LaneTurn) -> bool:
        def write() -> None:
            self.store.writes.save_lane_turn(
                session, record, writer=self.token, claimed=self.claimed,
                secrets=self.secrets, app=self.app, source=self.source,
                create=not self.claimed and record.turn in self.unsaved_turns,
            )  # fmt: skip
            self.unsaved_turns.pop(record.turn, None)  # its row is written with the lane's

        if not self._guard(write):
            return False
        self.claimed = True
        self.saved += 1
        return True

    def _repair(self, session: Session) -> None:
        """Retry every write that failed before (a lane record only if it is still the lane's
        latest word on that turn)."""
        for (turn, lane), record in sorted(self.unsaved_lanes.items()):
            current = [r for r in session.lanes[lane].turns if r.turn == turn]
            latest = current[-1] if current else record
            if not self._save_lane(session, latest):
                return
            del self.unsaved_lanes[(turn, lane)]
        for turn, text in sorted(self.unsaved_turns.items()):

            def write(turn: int = turn, text: str = text) -> None:
                self.store.writes.save_user_turn(
                    session, turn, text, writer=self.token, secrets=self.secrets
                )

            if not self._guard(write):
                return
            del self.unsaved_turns[turn]
        if not self.pending:
            self.error = None

    @property
    def pending(self) -> int:
        """Writes that failed and are not repaired yet."""
        return len(self.unsaved_turns) + len(self.unsaved_lanes)

    def _guard(self, write: Callable[[], None]) -> bool:
        try:
            write()
        except Exception as exc:  # saving must never take a lane (or the page) down
            log.exception("saving session %s failed", self.session.id)
            self.error = f"{type(exc).__name__}: {exc}"
            return False
        if not self.pending:
            self.error = None
        return True
