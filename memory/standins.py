"""Model-free stand-ins: fixed replies, rule-based summaries and fact extraction, sized texts.

They let the survival lab run with no model ("payload only"), estimate a run before it
starts, and let the growth simulator project summary strategies. They are deterministic and
honest about being stand-ins: the UI and the CLI say when they were used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from memory.numbers import amounts_in, format_inr
from memory.tokens import TokenCounter
from memory.types import Completion, Request, Usage

# Short, neutral replies for filler turns: no fact, no number, no name.
FIXED_REPLIES: tuple[str, ...] = (
    "Got it, thanks for letting me know.",
    "Understood. Happy to help with that.",
    "Noted. Is there anything else you'd like to go over?",
    "Thanks, that's useful context.",
    "Okay, let's keep that in mind.",
    "Sure, that makes sense.",
)


def fixed_reply(turn: int, replies: Sequence[str] = FIXED_REPLIES) -> str:
    """The fixed reply for `turn` (cycled, so the same turn always gets the same text)."""
    return replies[(turn - 1) % len(replies)]


@dataclass(frozen=True)
class StaticReply:
    """A reply that needed no model, shaped like providers.Reply."""

    text: str
    usage: Usage | None = None
    body: Mapping[str, Any] | None = None
    complete: bool = True
    error: Exception | None = None
    latency_s: float | None = 0.0
    ttft_s: float | None = 0.0
    model: str | None = "fixed"


def fixed_sender(text: str) -> Callable[[Request, Callable[[str], None] | None], StaticReply]:
    """A sender that answers any request with `text` (no model, no tokens billed)."""

    def send(request: Request, on_delta: Callable[[str], None] | None = None) -> StaticReply:
        if on_delta is not None:
            on_delta(text)
        return StaticReply(text)

    return send


_WORDS = re.compile(r"at most (\d+) words")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"\b(?:I'm|I am|my name is|call me)\s+([A-Z][a-z]+)\b", re.I)
_NAME_CASE = re.compile(r"\b(?:I'm|I am|[Mm]y name is|[Cc]all me)\s+([A-Z][a-z]+)\b")
_LINE = re.compile(r"^(User|Assistant): (.*)$", re.M)
# A bare number word ("miss one EMI", "two years ago") is not an amount; with a scale word
# ("one lakh twenty thousand") it is. Possessive, so a run is never cut short to dodge a scale.
_NUMBER_WORDS = (
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|and|a"
)
_BARE_NUMBER_WORDS = re.compile(
    rf"\b(?:(?:{_NUMBER_WORDS})\b[\s-]*)++(?!(?:thousand|lakh|lac|crore|million|billion|rupee|dollar|k\b))",
    re.I,
)


def stated_amounts(text: str) -> frozenset[Decimal]:
    """The amounts a text states in figures or with a scale word; bare number words
    ("one EMI", "two years") are not amounts, so a stand-in never invents one from them."""
    return amounts_in(_BARE_NUMBER_WORDS.sub(" ", text))


def _has_signal(sentence: str) -> bool:
    """A sentence worth keeping: it states an amount or figure, or introduces a name."""
    return bool(stated_amounts(sentence)) or _NAME_CASE.search(sentence) is not None


class ExtractiveSummariser:
    """A stand-in summariser: keeps the sentences either side stated with names or figures,
    attributed ("The user said: ...", "The assistant said: ...").

    Earlier sentences are kept first and the summary stops at the word limit the summary
    prompt asks for, as a careful human note-taker would. It is optimistic on purpose:
    it shows what survives when summaries keep facts, not what a given model does.
    """

    def __call__(self, request: Request) -> Completion:
        content = request.messages[-1].content
        m = _WORDS.search(request.system)
        limit = int(m.group(1)) if m else 120
        previous = ""
        if content.startswith("Current summary:\n"):
            previous = content.split("\n\n", 1)[0].removeprefix("Current summary:\n").strip()
        sentences = [s for s in _SENTENCE.split(previous) if s.strip()] if previous else []
        for speaker, line in _LINE.findall(content):
            for sentence in _SENTENCE.split(line):
                sentence = sentence.strip()
                if sentence and _has_signal(sentence):
                    sentences.append(f"The {speaker.lower()} said: {sentence}")
        kept: list[str] = []
        words = 0
        for sentence in sentences:
            n = len(sentence.split())
            if words + n > limit:
                break
            kept.append(sentence)
            words += n
        return Completion(" ".join(kept) or "The user has not stated any names or amounts yet.")


_KEYS: tuple[tuple[str, str], ...] = (
    (r"emergency fund", "emergency_fund"),
    (r"salary|take-home|income", "monthly_salary"),
    (r"expense", "monthly_expenses"),
    (r"\bfd\b|fixed deposit", "fd_amount"),
    (r"\brent\b", "rent"),
    (r"\bsip\b", "sip_amount"),
    (r"\bemi\b|loan", "loan"),
    (r"policy", "policy_number"),
)
_MONEY = re.compile(r"[₹$€£]|\b(?:rs|inr|rupees?|lakhs?|lacs?|crores?|thousand|\d+k)\b", re.I)


class RuleExtractor:
    """A stand-in fact extractor: a name from "I'm X" / "my name is X", and figures from
    sentences about salary, expenses, an FD, rent, a SIP, a loan, an emergency fund or a
    policy. Facts the assistant states are kept too, under keys starting "assistant_"."""

    def __call__(self, request: Request) -> Completion:
        lines = _LINE.findall(request.messages[-1].content)
        found: dict[str, str] = {}
        for speaker, line in lines[-2:]:
            prefix = "" if speaker == "User" else "assistant_"
            name = _NAME_CASE.search(line)
            if name and speaker == "User":
                found["name"] = name.group(1)
            for sentence in _SENTENCE.split(line):
                amounts = sorted(stated_amounts(sentence))
                if not amounts:
                    continue
                for pattern, key in _KEYS:
                    if re.search(pattern, sentence, re.I):
                        value = max(amounts)
                        # a figure stated as money reads as rupees; any other stays as written
                        found[prefix + key] = (
                            format_inr(value) if _MONEY.search(sentence) else str(value)
                        )
                        break
        return Completion(json.dumps({"set": found, "delete": []}, ensure_ascii=False))


class SizedSummariser:
    """A stand-in summariser whose every summary is exactly `tokens` tokens long."""

    def __init__(self, counter: TokenCounter, tokens: int) -> None:
        self.text = counter.text_of_tokens(tokens) if tokens > 0 else "la"

    def __call__(self, request: Request) -> Completion:
        return Completion(self.text)


class SizedExtractor:
    """A stand-in extractor whose fact store holds one value of about `tokens` tokens."""

    def __init__(self, counter: TokenCounter, tokens: int) -> None:
        facts = {"notes": counter.text_of_tokens(tokens)} if tokens > 0 else {}
        self.reply = json.dumps({"set": facts, "delete": []})

    def __call__(self, request: Request) -> Completion:
        return Completion(self.reply)


# ---- facts a user stated, for probes planted from their own log ---------------------------

KINDS = ("name", "amount", "date", "number", "preference")

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}"  # 2024-03-05
    rf"|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}"  # 05/03/2024
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\.?(?:,?\s+\d{{4}})?"  # 3rd of March 2024
    rf"|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"  # March 3, 2024
    rf"|{_MONTHS}\s+\d{{4}})\b",  # March 2024
    re.I,
)
_FIGURE = re.compile(
    r"(?:[₹$€£]\s?|\b(?:rs\.?|inr|usd)\s?)?\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:k|l|lakhs?|lacs?|crores?|cr|thousand|million|mn|billion|bn)\b)?",
    re.I,
)
_PREFERENCE = re.compile(
    r"\bI\s+(?:really\s+|much\s+|always\s+)?"
    r"(prefer|like|love|enjoy|hate|dislike|avoid|can't stand|am allergic to|don't eat)\s+"
    r"([^.,;!?\n]{2,60})",
    re.I,
)
_FAVOURITE = re.compile(
    r"\bmy\s+favou?rite\s+([a-z]+(?:\s[a-z]+)?)\s+is\s+([^.,;!?\n]{2,60})", re.I
)
_NOT_NAMES = frozenset(
    "Not Just So Really Sorry Also Still Looking Going Thinking Trying Here Fine Good Back "
    "Done Sure Okay Happy In On At From Planning Currently A An The Very Glad".split()
)
_KEY_PROBES: dict[str, str] = {
    "emergency_fund": "How big is my emergency fund?",
    "monthly_salary": "What is my salary?",
    "monthly_expenses": "How much are my expenses?",
    "fd_amount": "How much money do I have in my FD?",
    "rent": "How much is my rent?",
    "sip_amount": "How much is my SIP?",
    "loan": "How much is my loan or EMI?",
    "policy_number": "What is my policy number?",
}


@dataclass(frozen=True)
class StatedFact:
    """A fact a user's sentence states: its kind, a key, the value as written, the sentence
    and a probe question that asks for the value without giving it away."""

    kind: str  # one of KINDS
    key: str
    value: str
    sentence: str
    probe: str


_CLAUSE = re.compile(r"[,;:]\s+|\s+(?:and|but|while|whereas)\s+", re.I)


def _key_of(sentence: str) -> str | None:
    """The finance key (salary, rent, ...) a clause's figure is about, as RuleExtractor
    files it (and "earn" as salary); None if it names none."""
    for pattern, key in (*_KEYS, (r"\bearn", "monthly_salary")):
        if re.search(pattern, sentence, re.I):
            return key
    return None


def _figure_text(sentence: str, value: Decimal) -> str:
    """`value` as the sentence spells it ("$2,400", "1.2 lakh"), else in figures."""
    from memory.numbers import parse_amount

    for m in _FIGURE.finditer(sentence):
        if parse_amount(m.group(0).strip()) == value:
            return m.group(0).strip()
    return format(value.normalize(), "f")


def _cloze(sentence: str, value: str) -> str:
    blanked = sentence.replace(value, "___", 1)
    return f'Fill in the blank from what I told you: "{blanked}"'


def _phrase(text: str) -> str:
    words = text.strip().split()
    while words and words[0].lower() in ("to", "a", "an", "the", "my"):
        words = words[1:]
    return " ".join(words[:6]).strip(" '\"")


def stated_facts(text: str) -> list[StatedFact]:
    """The facts a user message states, sentence by sentence, by the same rules as the
    stand-in extractor (a name from "I'm X", a figure about salary, rent, an FD, ...) and a
    few more: any amount of money, a date, another number, a stated preference. Rule-based:
    it proposes, the user chooses."""
    found: list[StatedFact] = []
    for raw in _SENTENCE.split(text):
        sentence = " ".join(raw.split())
        if not sentence:
            continue
        name = _NAME_CASE.search(sentence)
        if name and name.group(1) not in _NOT_NAMES:
            found.append(StatedFact("name", "name", name.group(1), sentence, "What is my name?"))
        dates = [m.group(0) for m in _DATE.finditer(sentence)]
        for d in dates:
            found.append(StatedFact("date", "date", d, sentence, _cloze(sentence, d)))
        for clause in _CLAUSE.split(_DATE.sub(" ", sentence)):
            key = _key_of(clause)
            money = _MONEY.search(clause) is not None
            amounts = sorted(stated_amounts(clause))
            for value in amounts:
                shown = _figure_text(clause, value)
                own_money = _MONEY.search(shown) is not None
                if own_money or ((money or key) and value >= 100):
                    probe = _KEY_PROBES.get(key, "") if key and value == amounts[-1] else ""
                    found.append(StatedFact("amount", key or "amount", shown, sentence,
                                            probe or _cloze(sentence, shown)))  # fmt: skip
                else:
                    found.append(StatedFact("number", "number", shown, sentence,
                                            _cloze(sentence, shown)))  # fmt: skip
        for m in _PREFERENCE.finditer(sentence):
            verb, what = m.group(1).lower(), _phrase(m.group(2))
            if what:
                probe = f"What did I say I {verb}?"
                found.append(StatedFact("preference", f"{verb.replace(' ', '_')}s", what,
                                        sentence, probe))  # fmt: skip
        for m in _FAVOURITE.finditer(sentence):
            thing, what = m.group(1).lower(), _phrase(m.group(2))
            if what:
                found.append(StatedFact("preference", f"favourite_{thing.replace(' ', '_')}",
                                        what, sentence, f"What is my favourite {thing}?"))  # fmt: skip
    return found
