"""The long-conversation generator and its file format."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from scenarios.longmem import (
    KINDS,
    LongMemFormatError,
    parse_conversation,
    parse_questions,
)
from scenarios.longmem_world import generate


@pytest.fixture(scope="module")
def conv():
    return generate(0)


def test_it_is_long_dated_and_deterministic(conv):
    assert len(conv.sessions) >= 20 and len(conv.turns) >= 500
    dates = [dt.date.fromisoformat(s.date) for s in conv.sessions]
    assert dates == sorted(dates) and len(set(dates)) == len(dates)
    assert generate(0) == conv and generate(1) != conv
    assert {q.kind for q in conv.questions} == set(KINDS)
    assert len(conv.questions) >= 30


def test_each_answer_is_in_its_evidence_turns(conv):
    turns = conv.turns
    for q in conv.questions:
        text = " ".join(f"{turns[e - 1][0]} {turns[e - 1][1]}" for e in q.evidence)
        for part in q.answer.split(", "):
            assert part in text, (q.id, part)
        if q.kind == "multi-hop":
            assert len(q.evidence) == 2
        if q.kind == "temporal":  # the date is said in the session's first turn
            assert any(turns[e - 1][0].startswith("Hi again, it's ") for e in q.evidence)


def test_updated_facts_leave_stale_values_behind(conv):
    turns = conv.turns
    for q in (q for q in conv.questions if q.kind == "update"):
        (latest,) = q.evidence
        topic = turns[latest - 1][0]
        key = next(w for w in ("rent", "team", "gym", "driving") if w in topic)
        earlier = [i for i, (u, _) in enumerate(turns[: latest - 1], 1) if key in u]
        assert earlier, q.question  # an earlier, stale statement exists


def test_question_words_recur_in_turns_that_are_not_evidence(conv):
    """Look-alike turns: each question's person or topic also appears away from its evidence."""
    turns = conv.turns
    for q in conv.questions:
        if q.kind not in ("single-hop", "multi-hop"):
            continue
        names = [w.rstrip("'s?") for w in q.question.split() if w[:1].isupper()][1:]
        for name in names:
            others = [i for i, (u, _) in enumerate(turns, 1) if name in u and i not in q.evidence]
            assert others, (q.id, name)


def test_the_file_format_round_trips(conv):
    assert parse_conversation(conv.to_json()) == conv
    assert parse_conversation(conv.to_json().encode()) == conv


def test_a_questions_file_pairs_with_any_transcript(conv):
    text = json.dumps({"questions": [q.as_dict() for q in conv.questions]})
    assert parse_questions(text, len(conv.turns)) == conv.questions
    bare = json.dumps([{"question": "What is my rent?", "evidence": [2]}])
    (q,) = parse_questions(bare, 3)
    assert (q.id, q.kind, q.evidence, q.after_turn) == ("q1", "single-hop", (2,), None)


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ([], "'questions' must be a non-empty list"),
        ([{"evidence": [1]}], r"questions\[0\].question must be text"),
        ([{"question": "x", "evidence": []}], r"questions\[0\].evidence must be a non-empty"),
        (
            [{"question": "x", "evidence": [9]}],
            r"evidence\[0\] is turn 9, but turns run from 1 to 3",
        ),
        ([{"question": "x", "evidence": ["2"]}], r"evidence\[0\] must be a turn number"),
        (
            [{"question": "x", "evidence": [3], "after_turn": 2}],
            "evidence turn 3 comes after the question",
        ),
        (
            [
                {"id": "a", "question": "x", "evidence": [1]},
                {"id": "a", "question": "y", "evidence": [1]},
            ],
            "'a' is used twice",
        ),
    ],
)
def test_bad_questions_are_named(questions, message):
    with pytest.raises(LongMemFormatError, match=message):
        parse_questions(json.dumps({"questions": questions}), 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", r"not valid JSON \(line 1, column 2\)"),
        ("[]", "must be a JSON object"),
        ('{"sessions": []}', "'sessions' must be a non-empty list"),
        (
            '{"sessions": [{"turns": [{"assistant": "hi"}]}]}',
            r"sessions\[0\].turns\[0\].user must be text",
        ),
        (b"\xff\xfe", "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "nests too deeply"),  # not a RecursionError
    ],
)
def test_bad_conversation_files_are_named(text, message):
    with pytest.raises(LongMemFormatError, match=message):
        parse_conversation(text)
