"""The filler bank and transcript import."""

from __future__ import annotations

import json

import pytest

from engines.survival import DEFAULT_FACTS
from memory.numbers import Answer
from scenarios.filler import (
    BANK,
    TOPICS,
    FillerTurn,
    TranscriptError,
    builtin,
    cycle,
    load_transcript,
    parse_transcript,
)


def test_the_bank_holds_at_least_200_distinct_turns_on_several_topics():
    assert len(BANK) >= 200
    assert len({t.user for t in BANK}) == len(BANK)
    assert len(TOPICS) >= 6
    for topic in TOPICS:
        assert sum(t.topic == topic for t in BANK) >= 15


def test_no_filler_turn_states_a_default_fact():
    # otherwise a fact "found in the payload" could have come from filler, not the plant
    for fact in DEFAULT_FACTS:
        answers = [Answer(a) for a in fact.answers]
        leaks = [t.user for t in BANK if any(a.found_in(t.user) for a in answers)]
        assert leaks == [], f"{fact.key} appears in filler: {leaks}"


def test_builtin_is_reproducible_and_cycles():
    assert builtin(30, seed=1) == builtin(30, seed=1)
    assert builtin(30, seed=1) != builtin(30, seed=2)
    many = builtin(len(BANK) + 5)
    assert many[: len(BANK)] != list(BANK)  # shuffled
    assert many[len(BANK) :] == many[:5]  # then cycled
    assert builtin(0) == []


def test_builtin_topics_and_errors():
    assert {t.topic for t in builtin(40, topics=["cooking"])} == {"cooking"}
    with pytest.raises(ValueError, match="unknown filler topic"):
        builtin(3, topics=["astrology"])
    with pytest.raises(ValueError, match="negative"):
        builtin(-1)


def test_cycle():
    turns = [FillerTurn("a"), FillerTurn("b")]
    assert [t.user for t in cycle(turns, 5)] == ["a", "b", "a", "b", "a"]
    with pytest.raises(ValueError):
        cycle([], 1)


def test_plain_text_one_message_a_line():
    turns = parse_transcript("first question\n\n  second one  \n", name="t.txt")
    assert [t.user for t in turns] == ["first question", "second one"]
    assert all(t.reply is None for t in turns)


def test_json_role_content_messages_pair_user_with_reply():
    data = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "two users"},
        {"role": "user", "content": "in a row"},
    ]
    turns = parse_transcript(json.dumps(data), name="x.json")
    # the app's importer (engines/transcripts.py) joins consecutive user messages into one turn
    assert [(t.user, t.reply) for t in turns] == [("hi", "hello"), ("two users\n\nin a row", None)]


def test_the_apps_transcript_formats_are_accepted():
    labelled = "User: how do I budget?\nAssistant: Start with your fixed costs.\nUser: thanks\n"
    turns = parse_transcript(labelled, name="chat.txt")
    assert [(t.user, t.reply) for t in turns] == [
        ("how do I budget?", "Start with your fixed costs."),
        ("thanks", None),
    ]
    anthropic = {
        "system": "s",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}],
    }
    assert [t.user for t in parse_transcript(json.dumps(anthropic), name="a.json")] == ["q"]


def test_json_shapes():
    assert [t.user for t in parse_transcript('["a", "b"]')] == ["a", "b"]
    lane_export = {"turns": [{"user": "q1", "reply": "r1"}, {"user": "q2", "reply": ""}]}
    turns = parse_transcript(json.dumps(lane_export), name="s.json")
    assert [(t.user, t.reply) for t in turns] == [("q1", "r1"), ("q2", None)]


def test_csv_with_user_and_reply_columns():
    text = "user,reply\nhow much rent?,about a third\nnext,\n"
    turns = parse_transcript(text, name="t.csv")
    assert [(t.user, t.reply) for t in turns] == [
        ("how much rent?", "about a third"),
        ("next", None),
    ]


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        ("", "x.txt", "empty"),
        ("{not json", "x.json", "not valid JSON"),
        ('{"foo": 1}', "x.json", "none of the keys"),
        ("question,answer\na,b\n", "x.csv", "'user' column"),
        ('[{"role": "assistant", "content": "only me"}]', "x.json", "no user messages"),
    ],
)
def test_bad_transcripts_say_why(text, name, message):
    with pytest.raises(TranscriptError, match=message):
        parse_transcript(text, name=name)


def test_load_transcript_from_a_file(tmp_path):
    path = tmp_path / "chat.txt"
    path.write_text("one\ntwo\n", encoding="utf-8")
    assert [t.user for t in load_transcript(path)] == ["one", "two"]
    with pytest.raises(TranscriptError, match="cannot read"):
        load_transcript(tmp_path / "missing.txt")
