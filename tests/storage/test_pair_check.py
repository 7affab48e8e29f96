"""A lane's state written turn by turn is compacted as a whole-state check would compact it,
and each write compares only the pairs it has not compared before (issue 36, class 6).

The driver below does what storage/writes.SessionWrites does with a `PairCheck`: one check per
lane, told of each committed write, rebuilt from the saved rows when a state could not be
compacted (and that state checked again). Histories are the strategies' own (`History`), so pairs are shared
the way a real lane shares them."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.strategies.base import History
from memory.tokens import TokenCounter
from storage.records import PairCheck, compact_state
from storage.store import Store
from tests.storage.store_support import make_session

COUNTER = TokenCounter.for_model(None)


@dataclass(frozen=True)
class Row:
    """The parts of a LaneTurn that compaction reads."""

    turn: int
    user: str
    reply: str


def _state(history: History, numbers: list[int]) -> dict:
    return {"strategy": "full", "memory": {"turns": history.pairs()}, "turn_numbers": list(numbers)}


# one step: ("turn", write committed?, record equal to the pair?) | ("repair",)
# | ("restore", first reply changed?): the lane's history replaced by another one
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.booleans(), st.booleans()),
        st.tuples(st.just("restore"), st.booleans()),
        st.tuples(st.just("repair")),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_incremental_compaction_equals_the_whole_check(steps):
    history, numbers, records = History(COUNTER), [], []
    saved: set[int] = set()  # rows in the "database"
    check: PairCheck | None = None
    for step in steps:
        if step[0] == "restore":  # a new history (new pair objects), maybe with other text
            fresh = History(COUNTER)
            for i, (user, reply) in enumerate(history.pairs()):
                fresh.append(user, reply + "!" if step[1] and i == 0 else reply)
            history = fresh
            continue
        if step[0] == "repair":  # another path writes every missing row that matches
            saved |= {r.turn for r in records}
            continue
        _, committed, same = step
        n = len(numbers) + 1
        history.append(f"u{n}", f"r{n}")
        numbers.append(n)
        record = Row(n, f"u{n}", f"r{n}" if same else f"other{n}")
        records.append(record)
        state = _state(history, numbers)
        expected = compact_state(state, [r for r in records if r.turn in saved or r is record])
        if check is None:
            check = PairCheck(saved)
        got, done = check.compact(state, records, record)
        if "turns_from_records" not in got["memory"]:  # checked again against the rows
            check = PairCheck(saved)
            got, done = check.compact(state, records, record)
        assert got == expected
        if committed:
            saved.add(n)
            check.written(n, done)


class CountingRows(list):
    """A list of records that counts how many of them are read."""

    read = 0

    def __reversed__(self):
        for item in super().__reversed__():
            CountingRows.read += 1
            yield item

    def __iter__(self):
        for item in super().__iter__():
            CountingRows.read += 1
            yield item


def test_a_write_reads_only_the_records_it_has_not_checked():
    history, numbers, records = History(COUNTER), [], CountingRows()
    check = PairCheck(())
    reads = []
    for n in range(1, 301):
        history.append(f"u{n}", f"r{n}")
        numbers.append(n)
        record = Row(n, f"u{n}", f"r{n}")
        records.append(record)
        CountingRows.read = 0
        got, done = check.compact(_state(history, numbers), records, record)
        assert got["memory"].get("turns_from_records")
        check.written(n, done)
        reads.append(CountingRows.read)
    assert max(reads[1:]) <= 1  # the record being written is handed over; nothing else is read


def test_a_store_compacts_a_long_lane_and_loads_it_back(tmp_path):
    """The real write path: states stay compacted turn after turn, load equal to the lane's
    memory, and a deleted session leaves nothing kept for its id."""
    store = Store(f"sqlite:///{tmp_path / 's.sqlite3'}")
    session = make_session(lanes=("full", "window"))
    store.track(session)
    for i in range(12):
        session.run_turn(f"Turn {i}: I save {1000 + i} a month.")
    loaded = store.load(session.id)
    for name, lane in session.lanes.items():
        assert loaded.memory[name] == lane.memory_state()
    checks = store.writes._checks
    assert {k for k in checks if k[0] == session.id} == {
        (session.id, "full"),
        (session.id, "window"),
    }
    assert store.delete(session.id)
    assert not any(k[0] == session.id for k in checks)
