"""Dates said in a turn, and the stretch of days a question's relative time points at.

`date_in(text)` finds a full date as people write it ("Saturday, 6 January 2024",
"January 6, 2024", "2024-01-06"); the retrieval index takes a turn that says one as the start
of a session on that day. `window(question, today)` maps relative time in a question
("yesterday", "last week", "about 3 weeks ago", "last month", "two months ago", "back in
March", "last year", "earlier this month") to a closed range of days before `today`, or None
when the question has none. Plain functions, no model. May import: nothing from the project.
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = "|".join(MONTHS)
_DMY = re.compile(rf"\b(\d{{1,2}}) ({_MONTH}),? (\d{{4}})\b", re.IGNORECASE)
_MDY = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a few": 3, "couple of": 2, "few": 3,
}  # fmt: skip
_COUNT = r"(\d{1,2}|a couple of|couple of|a few|few|an?|one|two|three|four|five|six|seven|" \
    r"eight|nine|ten|eleven|twelve)"  # fmt: skip
_AGO = re.compile(rf"\b{_COUNT} (day|week|month|year)s? ago\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\b(?:in|back in|during|early|late|last) ({_MONTH})\b", re.IGNORECASE)
Window = tuple[dt.date, dt.date]


def date_in(text: str) -> dt.date | None:
    """The first full date written in `text` (day, month name and year; or ISO), or None."""
    found: list[tuple[int, dt.date]] = []
    for match in _DMY.finditer(text):
        day, month, year = int(match[1]), MONTHS.index(match[2].lower()) + 1, int(match[3])
        found += _valid(match.start(), year, month, day)
    for match in _MDY.finditer(text):
        month, day, year = MONTHS.index(match[1].lower()) + 1, int(match[2]), int(match[3])
        found += _valid(match.start(), year, month, day)
    for match in _ISO.finditer(text):
        found += _valid(match.start(), int(match[1]), int(match[2]), int(match[3]))
    return min(found)[1] if found else None


def _valid(at: int, year: int, month: int, day: int) -> list[tuple[int, dt.date]]:
    try:
        return [(at, dt.date(year, month, day))]
    except ValueError:
        return []


def _month(today: dt.date, back: int) -> Window:
    """The calendar month `back` months before today's."""
    index = today.year * 12 + today.month - 1 - back
    first = dt.date(index // 12, index % 12 + 1, 1)
    following = dt.date((index + 1) // 12, (index + 1) % 12 + 1, 1)
    return first, following - dt.timedelta(days=1)


def window(question: str, today: dt.date) -> Window | None:
    """The days a relative time phrase in `question` points at, seen from `today`."""
    text = question.lower()
    day = dt.timedelta(days=1)
    if "yesterday" in text:
        return today - day, today - day
    match = _AGO.search(text)
    if match:
        n, unit = NUMBERS.get(match[1]) or int(match[1]), match[2]
        if unit == "day":
            return today - (n + 1) * day, today - (n - 1) * day
        if unit == "week":
            centre = today - 7 * n * day
            return centre - 5 * day, centre + 5 * day
        if unit == "month":
            return _month(today, n)
        return dt.date(today.year - n, 1, 1), dt.date(today.year - n, 12, 31)
    if "last weekend" in text:
        return today - 9 * day, today - day
    if "last week" in text:
        return today - 14 * day, today - 3 * day
    if "earlier this month" in text or "this month" in text:
        return today.replace(day=1), today
    if "last month" in text:
        return _month(today, 1)
    if "last year" in text:
        return dt.date(today.year - 1, 1, 1), dt.date(today.year - 1, 12, 31)
    match = _IN_MONTH.search(text)
    if match:
        month = MONTHS.index(match[1]) + 1
        back = (today.month - month) % 12
        return _month(today, back)
    return None
