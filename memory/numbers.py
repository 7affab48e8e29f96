"""Finding facts in text: amounts in any common Indian or Western form, names case-insensitively.

₹1,20,000 = 1,20,000 = 120,000 = 120000 = Rs. 120000 = 1.2 lakh = 1.2L = one lakh twenty
thousand: all read as the amount 120000. `amounts_in(text)` returns every amount a text
states; `find_answer(text, answers)` says which accepted answer (an amount or a phrase)
a text contains. Phrases match case-insensitively on word boundaries ("Chiru" is found in
"chiru's plan", not in "Chirurgeon").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache

Amount = Decimal

UNITS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen".split()
    )
}
TENS: dict[str, int] = {
    w: 10 * (i + 2)
    for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())
}
# Scales that close a group ("one lakh twenty thousand" = 1 x lakh + 20 x thousand).
SCALES: dict[str, int] = {
    "thousand": 1_000,
    "thousands": 1_000,
    "k": 1_000,
    "lakh": 100_000,
    "lakhs": 100_000,
    "lac": 100_000,
    "lacs": 100_000,
    "lakh's": 100_000,
    "l": 100_000,
    "million": 1_000_000,
    "millions": 1_000_000,
    "mn": 1_000_000,
    "crore": 10_000_000,
    "crores": 10_000_000,
    "cr": 10_000_000,
    "billion": 1_000_000_000,
    "bn": 1_000_000_000,
}
# Abbreviations that are a scale only right after a figure ("50k", "1.2 L", "2 cr").
ABBREVIATIONS = frozenset({"k", "l", "mn", "cr", "bn"})
CURRENCY_WORDS = frozenset({"rs", "inr", "rupee", "rupees", "usd", "dollars", "dollar", "eur"})
CURRENCY_SYMBOLS = "₹$€£"

_TOKEN = re.compile(
    r"(?P<num>\d+(?:,\d+)*(?:\.\d+)?)"  # a figure, commas and decimals included
    r"|(?P<word>[a-z]+(?:'s)?)"  # a word (number words, scales, anything else)
    r"|(?P<gap>[\s\-\u2010\u2011\u2012\u2013\u00a0]+)"  # what may sit inside one amount
    r"|(?P<other>.)",
    re.S,
)
_INDIAN = re.compile(r"^\d{1,2}(?:,\d{2})*,\d{3}$")
_WESTERN = re.compile(r"^\d{1,3}(?:,\d{3})+$")


def fold(text: str) -> str:
    """Text for matching: NFKC, accents removed, case-folded, whitespace collapsed."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.casefold().split())


def _figures(raw: str) -> list[Decimal]:
    """One figure, or several if its commas are not thousands/lakh separators ("1,2,3")."""
    whole, _, decimals = raw.partition(".")
    if "," in whole and not (_INDIAN.match(whole) or _WESTERN.match(whole)):
        parts = [p for p in raw.split(",") if p]
        return [Decimal(p) for p in parts]
    try:
        return [Decimal(raw.replace(",", ""))]
    except InvalidOperation:  # pragma: no cover - the regex only lets digits through
        return []


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) pairs: 'num', 'word', 'gap' (joins an amount) or 'stop' (ends one)."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        value = m.group(kind)
        if kind == "other":
            if value in CURRENCY_SYMBOLS or value == ".":
                kind = "currency" if value in CURRENCY_SYMBOLS else "stop"
            else:
                kind = "stop"
        out.append((kind, value))
    return out


class _Run:
    """An amount being read: whole groups closed by scales, plus the open group."""

    def __init__(self) -> None:
        self.total = Decimal(0)
        self.current: Decimal | None = None
        self.last_scale: int | None = None
        self.active = False

    def value(self) -> Decimal | None:
        if not self.active:
            return None
        return self.total + (self.current or 0)


def _next_word(tokens: Sequence[tuple[str, str]], i: int) -> str | None:
    """The next word after position i, skipping gaps (None if something else comes first)."""
    j = i + 1
    while j < len(tokens) and tokens[j][0] == "gap":
        j += 1
    if j < len(tokens) and tokens[j][0] == "word":
        return tokens[j][1]
    return None


def _glued(tokens: Sequence[tuple[str, str]], i: int) -> bool:
    """A figure written against letters that are not a scale or a currency."""
    allowed = SCALES.keys() | CURRENCY_WORDS | {"hundred"}
    before = tokens[i - 1] if i > 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if before and before[0] == "word" and before[1] not in allowed:
        return True
    return bool(after and after[0] == "word" and after[1] not in allowed)


def _full_scale(word: str | None) -> bool:
    """A scale spelt out ("a lakh", "a hundred"), not an abbreviation ("a k")."""
    return word is not None and (
        word == "hundred" or (word in SCALES and word not in ABBREVIATIONS)
    )


def _read_amounts(text: str) -> list[Decimal]:
    tokens = _tokens(fold(text))
    found: list[Decimal] = []
    run = _Run()

    def close() -> None:
        nonlocal run
        value = run.value()
        if value is not None:
            found.append(value)
        run = _Run()

    for i, (kind, value) in enumerate(tokens):
        if kind == "gap" or kind == "currency":
            continue
        if kind == "stop":
            close()
            continue
        if kind == "num":
            if _glued(tokens, i):  # "120000th", "A4", "v1.2": a label, not an amount
                close()
                continue
            figures = _figures(value)
            if len(figures) != 1:
                close()
                found.extend(figures)
                continue
            figure = figures[0]
            if run.active and (run.current is not None or run.total == 0):
                close()  # two figures in a row are two amounts
            elif run.active:
                # "1 lakh 20 thousand" joins; "1.2 lakh 3 months" does not
                nxt = _next_word(tokens, i)
                scale = SCALES.get(nxt or "")
                if scale is None or run.last_scale is None or scale >= run.last_scale:
                    close()
            run.active = True
            run.current = figure
            continue
        # a word
        word = value
        if word in SCALES:
            attached = run.active and run.current is not None
            if word in ABBREVIATIONS and not attached:
                close()
                continue
            scale = SCALES[word]
            if run.last_scale is not None and scale >= run.last_scale:
                # "five thousand six thousand": the first amount is complete
                carry = run.current
                found.append(run.total)
                run = _Run()
                run.active = carry is not None
                run.current = carry
            if not run.active:
                continue  # a bare "thousand" states no amount
            run.total += (run.current if run.current is not None else Decimal(1)) * scale
            run.current = None
            run.last_scale = scale
        elif word == "hundred":
            if not run.active:
                continue
            run.current = (run.current if run.current is not None else Decimal(1)) * 100
        elif word in UNITS or word in TENS:
            number = UNITS.get(word, TENS.get(word, 0))
            if run.active and run.current is not None:
                # "twenty five" adds; "five six" are two numbers
                if run.current % 100 >= 20 and run.current % 10 == 0 and number < 10:
                    run.current += number
                    continue
                if run.current >= 100 and run.current % 100 == 0 and number < 100:
                    run.current += number
                    continue
                close()
            run.active = True
            run.current = (run.current or Decimal(0)) + number
        elif word == "a" and _full_scale(_next_word(tokens, i)):
            if run.active:
                close()
            run.active = True
            run.current = Decimal(1)
        elif word == "and" and run.active or word in CURRENCY_WORDS:
            continue
        else:
            close()
    close()
    return found


def _clean(value: Decimal) -> Decimal:
    """120000.0 -> 120000; 1.50 -> 1.5 (equal either way; this is for display)."""
    if value == value.to_integral_value():
        return value.quantize(Decimal(1))
    return value.normalize()


@lru_cache(maxsize=65536)
def amounts_in(text: str) -> frozenset[Decimal]:
    """Every amount `text` states, as exact decimals (cached: payloads repeat across probes)."""
    return frozenset(_clean(v) for v in _read_amounts(text))


def parse_amount(text: str) -> Decimal | None:
    """The one amount `text` consists of ("₹1,20,000", "1.2 lakh", "50k"), else None.

    Anything besides the amount, a currency and scale words means it is not an amount.
    """
    folded = fold(text)
    amounts = _read_amounts(folded)
    if len(amounts) != 1:
        return None
    leftover = [
        v
        for k, v in _tokens(folded)
        if k == "word"
        and v not in SCALES
        and v not in CURRENCY_WORDS
        and v not in UNITS
        and v not in TENS
        and v not in ("hundred", "and", "a", "only")
    ]
    others = [v for k, v in _tokens(folded) if k == "stop" and v not in "./-"]
    if leftover or others:
        return None
    return _clean(amounts[0])


def contains_amount(text: str, amount: Decimal | int | float | str) -> bool:
    """True if `text` states `amount` in any form."""
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    return value in amounts_in(text)


@lru_cache(maxsize=4096)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in fold(phrase).split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)")


def contains_phrase(text: str, phrase: str) -> bool:
    """True if `phrase` occurs in `text` as whole words, ignoring case, accents and spacing."""
    if not fold(phrase):
        return False
    return _phrase_pattern(phrase).search(fold(text)) is not None


class Answer:
    """One accepted answer: an amount (matched in any form) or a phrase (matched as words)."""

    __slots__ = ("amount", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.amount = parse_amount(text)

    def __repr__(self) -> str:
        return f"Answer({self.text!r})"

    def found_in(self, text: str) -> bool:
        if self.amount is not None:
            return contains_amount(text, self.amount)
        return contains_phrase(text, self.text)


def find_answer(text: str, answers: Iterable[str | Answer]) -> str | None:
    """The first accepted answer that `text` contains (its original spelling), or None."""
    for answer in answers:
        a = answer if isinstance(answer, Answer) else Answer(answer)
        if a.found_in(text):
            return a.text
    return None


def format_inr(amount: Decimal | int) -> str:
    """An amount in Indian grouping with the rupee sign: 120000 -> '₹1,20,000'."""
    value = Decimal(amount)
    whole = int(value)
    digits = str(abs(whole))
    if len(digits) > 3:
        head, tail = digits[:-3], digits[-3:]
        groups: list[str] = []
        while len(head) > 2:
            groups.insert(0, head[-2:])
            head = head[:-2]
        if head:
            groups.insert(0, head)
        digits = ",".join([*groups, tail])
    frac = value - whole
    text = f"₹{digits}"
    if frac:
        text += str(abs(frac))[1:]
    return text
