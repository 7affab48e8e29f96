"""Kill the process with SIGKILL in the middle of a turn: every completed lane turn is in the
database, and the interrupted turn is marked as such, not half-written."""

from __future__ import annotations

import os
import queue
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

from engines.sessions import RunOptions, continue_stored
from lanes.lane import ERROR
from storage.store import INTERRUPTED, Store
from tests.storage.store_support import openai_settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A real Session, tracked by a real Store, runs lanes in parallel threads (as the app does).
# From turn 3 on, only the first two lane calls answer; the others hang until killed.
CHILD = textwrap.dedent(
    """
    import sys, threading, time
    from scenarios import fincoach
    from providers.fake import FakeTransport
    from lanes.session import Session
    from memory.lane_spec import LaneSpec
    from storage.store import Store
    from memory.registry import DEFAULT_LANES
    import providers

    class Hanging(FakeTransport):
        lock = threading.Lock()
        answered_in_turn_3 = 0

        def stream(self, request, settings, on_delta=None):
            if request.messages[-1].content == fincoach.DEMO_TURNS[2]:
                with self.lock:
                    Hanging.answered_in_turn_3 += 1
                    hang = Hanging.answered_in_turn_3 > 2
                if hang:
                    time.sleep(600)
            return super().stream(request, settings, on_delta)

    store = Store(sys.argv[1])
    session = Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n) for n in DEFAULT_LANES],
        provider=providers.preset("openai").settings("gpt-4o-mini"),
        transport=Hanging(chunks=2),
    )
    store.track(session)
    # after the store's own listener: a line is printed once the lane turn is committed
    out = threading.Lock()

    def report(s, r):
        with out:
            print(f"saved {r.turn} {r.lane}", flush=True)

    session.listeners.append(report)
    print(f"session {session.id}", flush=True)
    for text in fincoach.DEMO_TURNS[:4]:
        session.run_turn(text)
    print("finished", flush=True)
    """
)


def test_sigkill_mid_turn_loses_no_completed_lane_turn(tmp_path):
    url = f"sqlite:///{tmp_path / 'killed.sqlite3'}"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, url],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in child.stdout], daemon=True).start()
    saved: list[tuple[int, str]] = []
    session_id = None
    try:
        while len([t for t, _ in saved if t == 3]) < 2:
            try:
                words = lines.get(timeout=90).split()
            except queue.Empty:
                raise AssertionError("the child never reached turn 3") from None
            if not words:
                continue
            if words[0] == "session":
                session_id = words[1]
            elif words[0] == "saved":
                saved.append((int(words[1]), words[2]))
        child.send_signal(signal.SIGKILL)  # in the middle of turn 3: four lanes still hang
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        child.stderr.close()

    path = tmp_path / "killed.sqlite3"
    assert sqlite3.connect(path).execute("pragma integrity_check").fetchone() == ("ok",)
    store = Store(url)  # the restarted app
    [info] = store.list()
    assert info.id == session_id and info.turns == 3 and info.interrupted
    loaded = store.load(session_id)
    assert loaded.interrupted == (3,)
    for turn, lane in saved:  # every lane turn that completed is there, whole
        record = loaded.records[lane][turn - 1]
        assert record.ok and record.body is not None and record.reply.startswith("Reply to:")
    done_3 = {lane for turn, lane in saved if turn == 3}
    assert len(done_3) == 2
    for lane in loaded.strategies:
        record = loaded.records[lane][2]
        if lane in done_3:
            assert record.ok
        else:  # the lanes that were still running: marked, with nothing half-written
            assert record.status == ERROR and record.error_kind == INTERRUPTED
            assert record.body is None and record.reply == ""
    assert info.lane_turns == 2 * 6 + 2
    # each lane's memory is consistent with its last saved turn: continuing works
    again = continue_stored(store, session_id, RunOptions(provider=openai_settings()))
    for lane in again.lanes.values():
        expected = 3 if lane.name in done_3 else 2
        assert len(lane.strategy.history) == expected
    assert not again.pending_lanes()
