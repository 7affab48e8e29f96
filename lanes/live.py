"""One lane's run of one turn as it goes on: the text streamed so far, for whoever draws it.

The Session runs a lane's turn in a thread of its own (`Session.start_lane`) and writes into
a `LiveRun`; a reader (the page's lane fragment) waits on it and draws what is there. The
reader may go away mid-stream (a full page rerun cuts it off) and another attach later: the
run is not the reader's, so it goes on, and the new reader starts from the text so far.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from lanes.lane import LaneTurn


@dataclass(frozen=True)
class LiveView:
    """What a run has produced at one moment. `version` grows with every change."""

    text: str  # the reply streamed so far
    reply: str | None  # the complete reply, once it is (upkeep may still be running)
    record: LaneTurn | None  # the recorded turn, once the run is done
    done: bool
    version: int


class LiveRun:
    """The buffer between a lane's run (one writer) and any number of readers."""

    def __init__(self, name: str, turn: int) -> None:
        self.name = name
        self.turn = turn
        self._changed = threading.Condition()
        self._text = ""
        self._reply: str | None = None
        self._record: LaneTurn | None = None
        self._error: BaseException | None = None
        self._done = False
        self._version = 0

    # ---- the run writes ------------------------------------------------------------------
    def add(self, delta: str) -> None:
        """A streamed piece of the reply."""
        with self._changed:
            self._text += delta
            self._bump()

    def replied(self, text: str) -> None:
        """The reply is complete (the lane's upkeep calls come next)."""
        with self._changed:
            self._reply = text
            self._bump()

    def finish(self, record: LaneTurn | None, error: BaseException | None = None) -> None:
        """The run is over: its record, or the exception it raised."""
        with self._changed:
            self._record, self._error, self._done = record, error, True
            self._bump()

    def _bump(self) -> None:
        self._version += 1
        self._changed.notify_all()

    # ---- readers -------------------------------------------------------------------------
    def view(self) -> LiveView:
        with self._changed:
            return self._view()

    def _view(self) -> LiveView:
        return LiveView(self._text, self._reply, self._record, self._done, self._version)

    def wait(self, after: int, timeout: float | None) -> LiveView:
        """The run's view once its version is past `after` (or it is done), or after
        `timeout` seconds, whichever comes first."""
        with self._changed:
            self._changed.wait_for(lambda: self._done or self._version > after, timeout)
            return self._view()

    @property
    def done(self) -> bool:
        with self._changed:
            return self._done

    @property
    def failed(self) -> bool:
        """Done by raising (no record): a later attach starts the run again."""
        with self._changed:
            return self._done and self._error is not None

    def result(self, timeout: float | None = None) -> LaneTurn:
        """The recorded turn, waiting for it; re-raises the run's exception in the reader.
        TimeoutError if the run is not done within `timeout` seconds."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._done, timeout):
                raise TimeoutError(f"lane {self.name} is still running turn {self.turn}")
            if self._error is not None:
                raise self._error
            assert self._record is not None
            return self._record
