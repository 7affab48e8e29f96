"""Crash and concurrency drivers shared by tests/storage/test_crashes.py and bench/bench_faults.py.

`kill_run` runs one conversation of `turns` turns in a child process and SIGKILLs it at
random moments; after every kill the store is reopened, every lane turn the child reported
as saved must be there, and a new child continues the saved session where it stopped.
`two_writers` has two processes write two sessions into one SQLite file at once."""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass

from storage.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LANES = ("full", "window", "summary_buffer", "entity")

CHILD = textwrap.dedent(
    """
    import sys, threading
    import providers
    from engines.sessions import RunOptions, continue_stored
    from lanes.session import Session
    from memory.lane_spec import LaneSpec
    from providers.fake import FakeTransport
    from storage.store import Store

    url, sid, turns, lanes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")
    store = Store(url)
    settings = providers.preset("openai").settings("gpt-4o-mini")
    transport = FakeTransport(latency=0.01, chunks=2)
    if sid == "new":
        session = Session(system_prompt="Be brief.", lanes=[LaneSpec(n) for n in lanes],
                          provider=settings, transport=transport)
    else:
        session = continue_stored(store, sid, RunOptions(provider=settings, transport=transport))
    tracker = store.track(session)
    out = threading.Lock()

    def report(s, r):  # after the store's listener: printed once the row is committed
        if tracker.error is None and r.ok:
            with out:
                print(f"saved {s.id} {r.turn} {r.lane}", flush=True)

    session.listeners.append(report)
    print(f"session {session.id} {session.turn}", flush=True)
    while session.turn < turns:
        session.run_turn(f"message {session.turn + 1}: I save {session.turn * 7} a month.")
    print(f"finished {session.id} {tracker.error}", flush=True)
    """
)


def start_child(
    url: str,
    sid: str,
    turns: int,
    lanes: tuple[str, ...] = LANES,
    *,
    stderr: int = subprocess.DEVNULL,
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, url, sid, str(turns), ",".join(lanes)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def _reader(child: subprocess.Popen) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()
    assert child.stdout is not None
    threading.Thread(target=lambda: [lines.put(x) for x in child.stdout], daemon=True).start()
    return lines


@dataclass
class KillReport:
    kills: int = 0
    attempted: int = 0  # lane turns started (a killed turn counts its lanes too)
    completed: int = 0  # lane turns the child reported saved
    lost: int = 0  # of those, missing from the reopened store
    turns: int = 0


def kill_run(url: str, *, turns: int = 50, seed: int = 0, timeout: float = 120.0) -> KillReport:
    rng = random.Random(seed)
    report = KillReport()
    sid = "new"
    saved: set[tuple[int, str]] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        child = start_child(url, sid, turns)
        lines = _reader(child)
        kill_at = None
        finished = False
        started_turn = 0
        try:
            while True:
                try:
                    words = lines.get(timeout=max(0.01, deadline - time.monotonic())).split()
                except queue.Empty:
                    raise AssertionError("the child stopped answering") from None
                if words[0] == "session":
                    sid, started_turn = words[1], int(words[2])
                    kill_at = time.monotonic() + rng.uniform(0.1, 1.5)
                elif words[0] == "saved":
                    saved.add((int(words[2]), words[3]))
                elif words[0] == "finished":
                    finished = True
                    break
                if kill_at is not None and time.monotonic() >= kill_at:
                    child.send_signal(signal.SIGKILL)
                    report.kills += 1
                    break
        finally:
            if child.poll() is None and not finished:
                child.kill()
            child.wait(timeout=30)
            assert child.stdout is not None
            child.stdout.close()
        store = Store(url)
        loaded = store.load(sid)
        store.close()
        stored = {(r.turn, r.lane) for rs in loaded.records.values() for r in rs if r.ok}
        report.lost = len(saved - stored)
        report.completed = len(saved)
        report.turns = len(loaded.user_turns)
        report.attempted += (report.turns - started_turn) * len(LANES)
        if finished or report.lost:
            break
    return report


def two_writers(url: str, *, turns: int = 8) -> list[tuple[str, str]]:
    """Two processes, each writing its own session into one database at the same time;
    returns each child's (session id, tracker error) as it finished."""
    children = [start_child(url, "new", turns, stderr=subprocess.PIPE) for _ in range(2)]
    results = []
    for child in children:
        out, err = child.communicate(timeout=120)
        last = [line.split(maxsplit=2) for line in out.splitlines() if line.startswith("finished")]
        assert last, f"a writer did not finish: {out[-500:]}\n{err[-3000:]}"
        results.append((last[0][1], last[0][2]))
    return results
