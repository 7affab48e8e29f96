"""A lane's recorded bodies share each distinct message (issue 36, cost growth): a
full-history lane resends every message each turn, so a copy per turn made memory grow with
the square of the conversation. What a record holds still equals what went on the wire."""

from __future__ import annotations

import json

from lanes.lane import MessageTable
from providers.fake import FakeTransport
from tests.storage.store_support import make_session


def test_consecutive_bodies_share_their_messages_and_equal_what_was_sent():
    transport = FakeTransport()
    session = make_session(transport, lanes=("full",))
    for n in range(1, 9):
        session.run_turn(f"Turn {n}: my rent is ₹{20_000 + n:,}.")
    records = session.records()["full"]
    assert [r.body for r in records] == transport.calls  # what went on the wire
    assert [json.dumps(r.body) for r in records] == [json.dumps(c) for c in transport.calls]
    last, before = records[-1].body["messages"], records[-2].body["messages"]
    shared = sum(1 for a, b in zip(before, last, strict=False) if a is b)
    assert shared == len(before)  # every message the two bodies both hold: one object
    held = {id(m) for r in records for m in r.body["messages"]}
    assert len(held) == 1 + 2 * 8 - 1  # the system message, 8 user turns, 7 replies


def test_only_plain_messages_are_shared_and_the_body_is_a_new_dict():
    table = MessageTable()
    blocks = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    extra = {"role": "user", "content": "hi", "name": "x"}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, blocks, extra]}
    first = table.share(body)
    second = table.share({"model": "m", "messages": [{"role": "user", "content": "hi"}, blocks]})
    assert first == body and first is not body
    assert second["messages"][0] is first["messages"][0]
    assert first["messages"][1] is blocks and first["messages"][2] is extra
    assert table.share({"input": "x"}) == {"input": "x"}
