"""Strategy choices as the lab's tools read them: 'window:k=3'."""

from __future__ import annotations

import pytest

from memory.errors import InvalidParameter, UnknownStrategy
from memory.lane_spec import LaneSpec, parse_spec


def test_parse_names_and_typed_parameters():
    assert parse_spec("full") == LaneSpec("full")
    w = parse_spec("window:k=5")
    assert w.params == {"k": 5} and w.label == "window (k=5)"
    sb = parse_spec("summary_buffer: budget=900, trigger=0.5, summary_note=true")
    assert sb.params == {"budget": 900, "trigger": 0.5, "summary_note": True}
    assert parse_spec("summary:summary_placement=message").params == {
        "summary_placement": "message"
    }


def test_labels_show_the_defaults_that_matter():
    assert LaneSpec("window").label == "window (k=3)"
    assert LaneSpec("retrieval").label == "retrieval (k=2, recall_budget=4000)"
    assert LaneSpec("full").label == "full"
    assert LaneSpec("hybrid").as_dict()["label"] == "hybrid (budget=800)"


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("windw", UnknownStrategy, "choose one of"),
        ("window:q=1", InvalidParameter, "no parameter 'q'"),
        ("window:k=three", InvalidParameter, "must be a whole number"),
        ("window:k", InvalidParameter, "key=value"),
        ("window:k=-1", InvalidParameter, "at least 0"),
        ("summary_buffer:trigger=2", InvalidParameter, "at most 1"),
        ("summary:summary_placement=top", InvalidParameter, "one of"),
        ("summary:summary_note=maybe", InvalidParameter, "must be a true or false"),
    ],
)
def test_bad_choices_say_what_is_wrong(text, error, message):
    with pytest.raises(error, match=message):
        parse_spec(text)


def test_a_choice_creates_its_strategy_with_its_parameters(counter):
    window = parse_spec("window:k=1").create("Be brief.", counter=counter)
    for i in range(3):
        window.prepare(f"turn {i}")
        window.commit(f"turn {i}", "ok")
    request = window.prepare("last")
    assert window.name == "window" and request.system == "Be brief."
    assert [m.content for m in request.messages] == ["turn 2", "ok", "last"]  # k=1 kept
    with pytest.raises(InvalidParameter, match="at least 0"):
        LaneSpec("window", {"k": -1}).create("x", counter=counter)
