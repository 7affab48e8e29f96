"""Facts for the survival lab, and the facts-file format that page, CLI and saved runs share.

A facts file is JSON: a list of facts, or an object with a "facts" list. Each fact:

    {
      "key": "rent",                          unique id (required)
      "text": "My rent is ₹25,000 a month.",  the sentence that states it (required)
      "probe": "How much is my rent?",        the question asked at each probe turn (required)
      "answer": "₹25,000",                    expected answer: text or list of texts (required)
      "turn": 1,                              the turn it is stated at (default 1)
      "speaker": "user",                      "user" says it, or "assistant" says it in a reply
      "ask": "What rent can I afford?",       with speaker "assistant": the user's message then
      "label": "Rent (₹25,000)",              how tables name it (default: the key)
      "updates": [                            later changes, at increasing turns after "turn"
        {"turn": 9, "text": "My rent went up to ₹28,000.", "answer": "₹28,000",
         "speaker": "user"}
      ]
    }

Older saved runs spell "text", "answer" and "turn" as "plant", "answers" and "plant_turn";
both spellings load. Every malformed field gets its own error naming the fact and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.jsontext import parse_json

SPEAKERS = ("user", "assistant")
DEFAULT_ASK = "What would you suggest?"
MAX_TEXT = 20_000  # characters in one statement: a paragraph, not a book


class SurvivalConfigError(ValueError):
    """A survival run that cannot be set up as asked; the message says what to change."""


@dataclass(frozen=True)
class Update:
    """A later statement that changes a fact: from `turn` on, `answers` are the right ones."""

    turn: int
    text: str
    answers: tuple[str, ...]
    speaker: str = "user"
    ask: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"turn": self.turn, "text": self.text}
        data["answer"] = list(self.answers)
        data["speaker"] = self.speaker
        if self.ask:
            data["ask"] = self.ask
        return data


@dataclass(frozen=True)
class Fact:
    """A fact to state and probe: what is said (by whom, when), what we ask, what is right."""

    key: str
    plant: str
    probe: str
    answers: tuple[str, ...]
    label: str = ""
    plant_turn: int = 1
    speaker: str = "user"
    ask: str = ""
    updates: tuple[Update, ...] = ()

    @property
    def title(self) -> str:
        return self.label or self.key

    def statements(self) -> tuple[Update, ...]:
        """The first statement and every update, in turn order."""
        first = Update(self.plant_turn, self.plant, self.answers, self.speaker, self.ask)
        return (first, *self.updates)

    def expected_at(self, n: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(current answers, stale answers) for a probe at turn `n` (which sees turns < n)."""
        said = [s for s in self.statements() if s.turn < n]
        if not said:
            return (), ()
        current = said[-1].answers
        folded = {a.casefold() for a in current}
        stale: list[str] = []
        for s in said[:-1]:
            stale += [a for a in s.answers if a.casefold() not in folded and a not in stale]
        return current, tuple(stale)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "text": self.plant,
            "probe": self.probe,
            "answer": list(self.answers),
            "turn": self.plant_turn,
            "speaker": self.speaker,
            "label": self.label,
        }
        if self.ask:
            data["ask"] = self.ask
        if self.updates:
            data["updates"] = [u.to_dict() for u in self.updates]
        return data

    as_dict = to_dict

    @classmethod
    def from_dict(cls, data: Any, where: str = "the fact") -> Fact:
        """A Fact from one facts-file entry; SurvivalConfigError names the malformed field."""
        if not isinstance(data, Mapping):
            raise SurvivalConfigError(f"{where} must be a JSON object, got {_kind(data)}")
        key = _text(data, ("key",), where, required=True)
        where = f"fact {key!r}"
        turn = _turn(data, ("turn", "plant_turn"), where, default=1)
        speaker = _speaker(data, where)
        updates_raw = data.get("updates", [])
        if not isinstance(updates_raw, list):
            raise SurvivalConfigError(f"{where}: updates must be a list, got {_kind(updates_raw)}")
        updates = []
        previous = turn
        for i, item in enumerate(updates_raw, start=1):
            u_where = f"{where}, update {i}"
            if not isinstance(item, Mapping):
                raise SurvivalConfigError(f"{u_where} must be a JSON object, got {_kind(item)}")
            u_turn = _turn(item, ("turn",), u_where, default=None)
            if u_turn <= previous:
                raise SurvivalConfigError(
                    f"{u_where}: turn {u_turn} must come after turn {previous} "
                    "(updates follow the fact, in order)"
                )
            previous = u_turn
            updates.append(
                Update(
                    turn=u_turn,
                    text=_text(item, ("text", "plant"), u_where, required=True),
                    answers=_answers(item, u_where),
                    speaker=_speaker(item, u_where),
                    ask=_text(item, ("ask",), u_where),
                )
            )
        return cls(
            key=key,
            plant=_text(data, ("text", "plant"), where, required=True),
            probe=_text(data, ("probe",), where, required=True),
            answers=_answers(data, where),
            label=_text(data, ("label",), where),
            plant_turn=turn,
            speaker=speaker,
            ask=_text(data, ("ask",), where),
            updates=tuple(updates),
        )


def _kind(value: Any) -> str:
    """A short, safe description of a value for an error message (never a huge repr)."""
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:37] + "...")
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    names: dict[type, str] = {dict: "an object", list: "a list"}
    return names.get(type(value), type(value).__name__)


def _pick(data: Mapping[str, Any], names: Sequence[str]) -> tuple[str, Any]:
    for name in names:
        if name in data:
            return name, data[name]
    return names[0], None


def _text(
    data: Mapping[str, Any], names: Sequence[str], where: str, *, required: bool = False
) -> str:
    name, value = _pick(data, names)
    if value is None:
        if required:
            raise SurvivalConfigError(f"{where}: {name!r} is missing")
        return ""
    if not isinstance(value, str):
        raise SurvivalConfigError(f"{where}: {name!r} must be text, got {_kind(value)}")
    if required and not value.strip():
        raise SurvivalConfigError(f"{where}: {name!r} is empty")
    if len(value) > MAX_TEXT:
        raise SurvivalConfigError(f"{where}: {name!r} is over {MAX_TEXT:,} characters")
    return value.strip()


def _turn(data: Mapping[str, Any], names: Sequence[str], where: str, *, default: int | None) -> int:
    name, value = _pick(data, names)
    if value is None:
        if default is None:
            raise SurvivalConfigError(f"{where}: {name!r} is missing")
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise SurvivalConfigError(
            f"{where}: {name} is a whole number of turns (1 or more), got {_kind(value)}"
        )
    if value < 1:
        raise SurvivalConfigError(f"{where}: {name!r} counts from 1, got {value}")
    return value


def _speaker(data: Mapping[str, Any], where: str) -> str:
    value = data.get("speaker", "user")
    if value not in SPEAKERS:
        raise SurvivalConfigError(
            f'{where}: \'speaker\' is "user" or "assistant", got {_kind(value)}'
        )
    return str(value)


def _answers(data: Mapping[str, Any], where: str) -> tuple[str, ...]:
    name, value = _pick(data, ("answer", "answers", "expected"))
    if value is None:
        raise SurvivalConfigError(f"{where}: 'answer' (the expected answer) is missing")
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not all(isinstance(a, str) for a in values):
        raise SurvivalConfigError(
            f"{where}: {name!r} is a text or a list of texts, got {_kind(value)}"
        )
    answers = tuple(a.strip() for a in values if a.strip())
    if not answers:
        raise SurvivalConfigError(f"{where}: {name!r} needs at least one non-empty answer")
    return answers


def load_facts(data: Any) -> tuple[Fact, ...]:
    """Facts from parsed JSON: a list of facts, or {"facts": [...]} (see the module docstring)."""
    if isinstance(data, Mapping) and "facts" in data:
        data = data["facts"]
    if not isinstance(data, list) or not data:
        raise SurvivalConfigError(
            f"facts must be a non-empty JSON list of objects, got {_kind(data)}"
        )
    return tuple(Fact.from_dict(item, f"fact {i}") for i, item in enumerate(data, start=1))


def parse_facts_json(text: str | bytes) -> tuple[Fact, ...]:
    """Facts from a facts file's contents (text or bytes); SurvivalConfigError for a file that
    is not UTF-8, not JSON, nested too deeply, or not facts."""
    return load_facts(parse_json(text, "the facts file", SurvivalConfigError))


def facts_json(facts: Sequence[Fact]) -> str:
    """Facts as a facts file (the inverse of parse_facts_json)."""
    return json.dumps({"facts": [f.to_dict() for f in facts]}, ensure_ascii=False, indent=2)


DEFAULT_FACTS: tuple[Fact, ...] = (
    Fact("name", "Hi! I'm Chiru.", "What is my name?", ("Chiru",), "Name (Chiru)"),
    Fact(
        "salary",
        "My monthly take-home salary is ₹1,20,000.",
        "What is my monthly take-home salary?",
        ("₹1,20,000",),
        "Salary (₹1,20,000)",
    ),
    Fact(
        "expenses",
        "I have monthly expenses of about ₹60,000: rent, groceries, transport, and utilities.",
        "How much are my monthly expenses?",
        ("₹60,000",),
        "Expenses (₹60,000)",
    ),
    Fact(
        "fd",
        "I currently have no investments except a small FD of ₹50,000 that matures in 3 months.",
        "How much money do I have in my FD?",
        ("₹50,000",),
        "FD (₹50,000)",
    ),
)

# Two facts the first lab could not state: one the assistant gives, one that changes late.
EXAMPLE_FACTS: tuple[Fact, ...] = (
    Fact(
        "emergency_fund",
        "Aim for an emergency fund of ₹3,60,000: six months of your expenses.",
        "How big did you say my emergency fund should be?",
        ("₹3,60,000",),
        "Emergency fund (assistant said ₹3,60,000)",
        plant_turn=2,
        speaker="assistant",
        ask="How big should my emergency fund be?",
    ),
    Fact(
        "rent",
        "My rent is ₹25,000 a month.",
        "How much is my rent now?",
        ("₹25,000",),
        "Rent (₹25,000, then ₹28,000)",
        updates=(Update(9, "My landlord raised my rent to ₹28,000 a month.", ("₹28,000",)),),
    ),
)
