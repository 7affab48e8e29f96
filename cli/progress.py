"""A progress bar on stderr (tqdm), shown only when stderr is a terminal and not `--quiet`.

Piped or redirected stderr gets no bar at all, so logs and `2>file` stay clean.
"""

from __future__ import annotations

import sys
import threading
from types import TracebackType
from typing import IO

from tqdm import tqdm


def wants_bar(stream: IO[str], quiet: bool) -> bool:
    """True when a bar helps: a person is watching `stream` and did not ask for quiet."""
    isatty = getattr(stream, "isatty", None)
    return not quiet and callable(isatty) and bool(isatty())


class ProgressBar:
    """`update(done, total, note)` moves the bar; closing it leaves the cursor on a new line."""

    def __init__(
        self, desc: str, unit: str, *, quiet: bool = False, stream: IO[str] | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.shown = wants_bar(self.stream, quiet)
        self._bar: tqdm[None] | None = None
        self._desc, self._unit = desc, unit
        self._lock = threading.Lock()  # engines report from worker threads

    def update(self, done: int, total: int, note: str = "") -> None:
        if not self.shown:
            return
        with self._lock:
            self._update(done, total, note)

    def _update(self, done: int, total: int, note: str) -> None:
        if self._bar is None:
            self._bar = tqdm(
                total=total or None,  # 0: not known (a file read as it streams)
                desc=self._desc,
                unit=self._unit,
                file=self.stream,
                dynamic_ncols=True,
                leave=True,
            )
        bar = self._bar
        if bar.total != (total or None):
            bar.total = total or None
        if note:
            bar.set_postfix_str(note, refresh=False)
        bar.update(done - bar.n)  # redraws at most every tqdm `mininterval` (0.1 s)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
