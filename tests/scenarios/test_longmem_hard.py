"""The harder long-conversation generator: questions worded away from their evidence."""

from __future__ import annotations

import datetime as dt

import pytest

from memory.bm25 import terms
from memory.timeref import date_in, window
from scenarios.longmem import parse_conversation
from scenarios.longmem_hard import generate


@pytest.fixture(scope="module", params=[0, 1, 2])
def conv(request):
    return generate(request.param)


def evidence_text(conv, q) -> list[str]:
    return [conv.turns[e - 1][0] for e in q.evidence]


def test_it_is_long_dated_labelled_and_deterministic(conv):
    assert len(conv.sessions) >= 20 and len(conv.turns) >= 550
    dates = [dt.date.fromisoformat(s.date) for s in conv.sessions]
    assert dates == sorted(dates) and len(set(dates)) == len(dates)
    assert generate(7) == generate(7) and generate(7) != generate(8) != conv
    kinds = {q.kind for q in conv.questions}
    assert kinds == {"single-hop", "multi-hop", "inferred", "temporal"}
    assert len(conv.questions) >= 24
    assert parse_conversation(conv.to_json()) == conv


def test_every_session_says_its_date_in_its_first_turn(conv):
    first = 1
    for session in conv.sessions:
        assert date_in(conv.turns[first - 1][0]) == dt.date.fromisoformat(session.date)
        assert all(date_in(u) is None for u, _ in session.turns[1:])
        first += len(session.turns)


def test_paraphrased_questions_share_no_term_with_their_evidence(conv):
    for q in (q for q in conv.questions if q.kind == "single-hop"):
        (text,) = evidence_text(conv, q)
        assert not set(terms(q.question)) & set(terms(text)), q.question
        assert q.answer in text


def test_bridges_share_only_an_entity(conv):
    for q in (q for q in conv.questions if q.kind == "multi-hop"):
        first, second = evidence_text(conv, q)
        asked = set(terms(q.question))
        assert not asked & set(terms(second)), q.question  # the answer's turn: no word asked
        shared = set(terms(first)) & set(terms(second))
        assert len(shared) >= 1 and all(t[0].isalpha() for t in shared)
        assert q.answer in second
        assert len(asked & set(terms(first))) >= 1  # the person's name, at least


def test_inferred_answers_need_several_mentions_none_worded_as_asked(conv):
    for q in (q for q in conv.questions if q.kind == "inferred"):
        texts = evidence_text(conv, q)
        assert len(texts) == 3
        sessions = {next(i for i, s in enumerate(ends(conv)) if e <= s) for e in q.evidence}
        assert len(sessions) == 3  # in three different sessions
        assert all(not set(terms(q.question)) & set(terms(t)) for t in texts), q.question


def ends(conv) -> list[int]:
    out, total = [], 0
    for s in conv.sessions:
        total += len(s.turns)
        out.append(total)
    return out


def test_relative_time_picks_one_of_several_near_duplicates(conv):
    relative = [q for q in conv.questions if q.kind == "temporal" and q.after_turn]
    assert relative
    turns = conv.turns
    for q in relative:
        (e,) = q.evidence
        line = turns[e - 1][0]
        marker = "cinema" if "cinema" in line else "dinner party"  # the recurring events
        twins = [
            i for i, (u, _) in enumerate(turns, 1) if i != e and marker in u and u[:6] == line[:6]
        ]
        assert len(twins) >= 3  # near-duplicates at other times
        # "today" is the date of the session the question is asked in
        today = max(date_in(u) or dt.date.min for u, _ in turns[: q.after_turn])
        days = window(q.question, today)
        assert days is not None, q.question
        when = session_date(conv, e)
        assert days[0] <= when <= days[1]
        assert all(not days[0] <= session_date(conv, t) <= days[1] for t in twins), q.question


def session_date(conv, turn: int) -> dt.date:
    for session, end in zip(conv.sessions, ends(conv), strict=True):
        if turn <= end:
            return dt.date.fromisoformat(session.date)
    raise AssertionError(turn)


def test_occasions_and_dates_are_said_where_the_evidence_is(conv):
    for q in (q for q in conv.questions if q.kind == "temporal" and not q.after_turn):
        header, event = sorted(q.evidence)
        assert date_in(conv.turns[header - 1][0]) is not None
        assert session_date(conv, header) == session_date(conv, event)
        if q.question.startswith("When"):
            assert not set(terms(q.question)) & set(terms(conv.turns[event - 1][0]))


def test_planted_lines_have_look_alikes(conv):
    turns = [u for u, _ in conv.turns]
    for q in conv.questions:
        if q.kind in ("single-hop", "multi-hop"):
            line = turns[q.evidence[-1] - 1]
            words = set(terms(line)) - set(terms(q.answer))
            near = [u for u in turns if u != line and len(words & set(terms(u))) >= 2]
            assert near, q.question
