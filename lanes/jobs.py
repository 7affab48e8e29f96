"""Background jobs for long lab runs: a thread, its progress, a cancel switch, its outcome.

A page starts a job and keeps only its id (plain data) in its session state; each rerun
looks the job up here to draw progress, and picks the result up once it is done. Jobs live
in this process's memory; the oldest finished ones are forgotten past `KEEP`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

RUNNING, DONE, CANCELLED, FAILED = "running", "done", "cancelled", "failed"
KEEP = 32


class Job:
    """One run in a background thread. `target(job)` does the work and returns the result."""

    def __init__(self, target: Callable[[Job], Any], *, name: str = "") -> None:
        self.id = uuid.uuid4().hex[:12]
        self.name = name
        self.cancel_event = threading.Event()
        self.progress: Any = None
        self.result: Any = None
        self.error: str | None = None
        self.started = time.time()
        self.finished: float | None = None
        self._lock = threading.Lock()
        self._items: list[Any] = []
        self._target = target
        self._thread = threading.Thread(target=self._run, name=f"job-{self.id}", daemon=True)

    def _run(self) -> None:
        try:
            self.result = self._target(self)
        except Exception as exc:  # the page shows it; the app stays up
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.finished = time.time()

    def start(self) -> Job:
        self._thread.start()
        return self

    # called from the worker ------------------------------------------------------------

    def set_progress(self, progress: Any) -> None:
        self.progress = progress

    def add(self, item: Any) -> None:
        with self._lock:
            self._items.append(item)

    # called from the page ---------------------------------------------------------------

    def cancel(self) -> None:
        self.cancel_event.set()

    def items(self) -> list[Any]:
        with self._lock:
            return list(self._items)

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def status(self) -> str:
        if not self.done:
            return RUNNING
        if self.error is not None:
            return FAILED
        return CANCELLED if self.cancel_event.is_set() else DONE

    @property
    def elapsed(self) -> float:
        return (self.finished or time.time()) - self.started

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (tests and the CLI); True if it did."""
        self._thread.join(timeout)
        return self.done


class Board:
    """A registry of jobs by id. A UI keeps one where module reloads cannot reset it
    (Streamlit re-imports project modules when a file changes; st.cache_resource survives)."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def submit(self, target: Callable[[Job], Any], *, name: str = "") -> Job:
        """Start `target` in a background job and register it."""
        job = Job(target, name=name)
        with self._lock:
            self._jobs[job.id] = job
            finished = [j for j in self._jobs.values() if j.done]
            for old in sorted(finished, key=lambda j: j.started)[: max(0, len(self._jobs) - KEEP)]:
                self._jobs.pop(old.id, None)
        return job.start()

    def get(self, job_id: str | None) -> Job | None:
        """The job with this id, if this board still has it."""
        if not job_id:
            return None
        with self._lock:
            return self._jobs.get(job_id)


_default = Board()


def default_board() -> Board:
    """The process-wide board (a UI caches it, so a module reload keeps the same one)."""
    return _default
