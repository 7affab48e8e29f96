"""Long multi-session conversations with questions whose evidence turns are known.

`generate(seed)` (in scenarios/longmem_world.py) builds one deterministically; this module
holds the types and the file format, which is also how users bring their own logs.

File format (JSON, UTF-8) — one file with the conversation and its questions::

    {
      "system": "optional system prompt",
      "sessions": [
        {"date": "2024-01-06",
         "turns": [{"user": "...", "assistant": "..."}, ...]},
        ...
      ],
      "questions": [
        {"id": "q1", "kind": "single-hop", "question": "What is ...?",
         "evidence": [12, 140], "answer": "optional expected answer",
         "after_turn": 530}
      ]
    }

* Turns are numbered from 1 across all sessions, in order; ``date`` is free text (optional).
* ``kind`` is one of single-hop, multi-hop, temporal, update, open (any other text is kept
  as its own kind); ``evidence`` lists the turns holding the answer (at least one, each at
  most ``after_turn``); ``after_turn`` (optional, default: the last turn) is when it is asked.

A questions file on its own (``{"questions": [...]}`` or a bare list) pairs with a
transcript in any format the Sessions page imports; turns are numbered the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.jsontext import parse_json

KINDS: tuple[str, ...] = ("single-hop", "multi-hop", "temporal", "update", "open")


class LongMemFormatError(ValueError):
    """A conversation or questions file that cannot be used; says where and what is wrong."""


@dataclass(frozen=True)
class Session:
    """One dated session of (user, assistant) turns."""

    date: str
    turns: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Question:
    """A question asked after turn `after_turn` whose answer is in the `evidence` turns."""

    id: str
    kind: str
    question: str
    evidence: tuple[int, ...]
    answer: str = ""
    after_turn: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "evidence": list(self.evidence),
        }
        if self.answer:
            out["answer"] = self.answer
        if self.after_turn is not None:
            out["after_turn"] = self.after_turn
        return out


@dataclass(frozen=True)
class LongConversation:
    """A long conversation and its questions."""

    system: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[tuple[str, str]]:
        return [t for s in self.sessions for t in s.turns]

    def asked_at(self, question: Question) -> int:
        """The turn after which `question` is asked."""
        total = sum(len(s.turns) for s in self.sessions)
        return total if question.after_turn is None else question.after_turn

    def to_json(self) -> str:
        data = {
            "system": self.system,
            "sessions": [
                {"date": s.date, "turns": [{"user": u, "assistant": a} for u, a in s.turns]}
                for s in self.sessions
            ],
            "questions": [q.as_dict() for q in self.questions],
        }
        return json.dumps(data, ensure_ascii=False, indent=1)


def _load(text: str | bytes, what: str) -> Any:
    return parse_json(text, f"the {what}", LongMemFormatError)


def _text(value: Any, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise LongMemFormatError(f"{where} must be text, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise LongMemFormatError(f"{where} is empty")
    return value


def parse_conversation(text: str | bytes) -> LongConversation:
    """A conversation file (format above); LongMemFormatError names the first bad field."""
    data = _load(text, "conversation file")
    if not isinstance(data, Mapping):
        raise LongMemFormatError("the conversation file must be a JSON object with 'sessions'")
    system = _text(data.get("system", ""), "system", allow_empty=True)
    raw_sessions = data.get("sessions")
    if not isinstance(raw_sessions, list) or not raw_sessions:
        raise LongMemFormatError("'sessions' must be a non-empty list")
    sessions = []
    for i, raw in enumerate(raw_sessions):
        where = f"sessions[{i}]"
        if not isinstance(raw, Mapping):
            raise LongMemFormatError(f"{where} must be an object with 'turns'")
        date = _text(raw.get("date", ""), f"{where}.date", allow_empty=True)
        turns = raw.get("turns")
        if not isinstance(turns, list) or not turns:
            raise LongMemFormatError(f"{where}.turns must be a non-empty list")
        pairs = []
        for j, turn in enumerate(turns):
            tw = f"{where}.turns[{j}]"
            if not isinstance(turn, Mapping):
                raise LongMemFormatError(f"{tw} must be an object with 'user' and 'assistant'")
            pairs.append(
                (
                    _text(turn.get("user"), f"{tw}.user"),
                    _text(turn.get("assistant", ""), f"{tw}.assistant", allow_empty=True),
                )
            )
        sessions.append(Session(date, tuple(pairs)))
    total = sum(len(s.turns) for s in sessions)
    questions = parse_questions_data(data.get("questions"), total)
    return LongConversation(system, tuple(sessions), questions)


def parse_questions(text: str | bytes, turns: int) -> tuple[Question, ...]:
    """A questions file for a conversation of `turns` turns."""
    data = _load(text, "questions file")
    if isinstance(data, Mapping):
        data = data.get("questions")
    return parse_questions_data(data, turns)


def _int(value: Any, where: str, turns: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LongMemFormatError(f"{where} must be a turn number, got {value!r}")
    if not 1 <= value <= turns:
        raise LongMemFormatError(f"{where} is turn {value}, but turns run from 1 to {turns}")
    return value


def parse_questions_data(data: Any, turns: int) -> tuple[Question, ...]:
    """Questions from parsed JSON (a list of objects) for a conversation of `turns` turns."""
    if not isinstance(data, list) or not data:
        raise LongMemFormatError("'questions' must be a non-empty list")
    out: list[Question] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        where = f"questions[{i}]"
        if not isinstance(raw, Mapping):
            raise LongMemFormatError(f"{where} must be an object")
        qid = str(raw.get("id", f"q{i + 1}"))
        if qid in seen:
            raise LongMemFormatError(f"{where}.id {qid!r} is used twice")
        seen.add(qid)
        kind = _text(raw.get("kind", "single-hop"), f"{where}.kind")
        question = _text(raw.get("question"), f"{where}.question")
        evidence = raw.get("evidence")
        if not isinstance(evidence, list) or not evidence:
            raise LongMemFormatError(f"{where}.evidence must be a non-empty list of turn numbers")
        ev = tuple(
            sorted({_int(e, f"{where}.evidence[{j}]", turns) for j, e in enumerate(evidence)})
        )
        after = raw.get("after_turn")
        if after is not None:
            after = _int(after, f"{where}.after_turn", turns)
            if ev[-1] > after:
                raise LongMemFormatError(
                    f"{where}: evidence turn {ev[-1]} comes after the question (turn {after})"
                )
        answer = _text(raw.get("answer", ""), f"{where}.answer", allow_empty=True)
        out.append(Question(qid, kind, question, ev, answer, after))
    return tuple(out)


def from_turns(
    turns: Sequence[tuple[str, str]], questions: Sequence[Question], system: str = ""
) -> LongConversation:
    """A one-session conversation from plain turns (an imported transcript)."""
    return LongConversation(system, (Session("", tuple(turns)),), tuple(questions))
