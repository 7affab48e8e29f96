"""Dates said in a turn, and relative time in a question mapped to days."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.timeref import date_in, window

D = dt.date


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("Hi again, it's Saturday, 6 January 2024. How are you?", D(2024, 1, 6)),
        ("Morning! 29 February 2024 today.", D(2024, 2, 29)),
        ("It's March 3rd, 2025 and sunny", D(2025, 3, 3)),
        ("logged on 2024-07-20 at noon", D(2024, 7, 20)),
        ("31 February 2024 is not a day; 2 March 2024 is", D(2024, 3, 2)),
        ("I ran 10 km in 52 minutes", None),
        ("back in March we moved", None),
    ],
)
def test_a_full_date_is_found_as_written(text, day):
    assert date_in(text) == day


TODAY = D(2024, 5, 20)


@pytest.mark.parametrize(
    ("question", "days"),
    [
        ("What did I eat yesterday?", (D(2024, 5, 19), D(2024, 5, 19))),
        ("Who called me 3 days ago?", (D(2024, 5, 16), D(2024, 5, 18))),
        ("What did I cook about 3 weeks ago?", (D(2024, 4, 24), D(2024, 5, 4))),
        ("What did I see a couple of weeks ago?", (D(2024, 5, 1), D(2024, 5, 11))),
        ("What did I cook for guests last month?", (D(2024, 4, 1), D(2024, 4, 30))),
        ("Where was I two months ago?", (D(2024, 3, 1), D(2024, 3, 31))),
        ("Which film did I see back in February?", (D(2024, 2, 1), D(2024, 2, 29))),
        ("What happened in December?", (D(2023, 12, 1), D(2023, 12, 31))),
        ("What did I buy last year?", (D(2023, 1, 1), D(2023, 12, 31))),
        ("What did I do last week?", (D(2024, 5, 6), D(2024, 5, 17))),
        ("Which book did I finish earlier this month?", (D(2024, 5, 1), D(2024, 5, 20))),
        ("What is my pet called?", None),
        ("When did I move house?", None),
    ],
)
def test_relative_time_maps_to_days_before_today(question, days):
    assert window(question, TODAY) == days


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    today=st.dates(D(2001, 1, 1), D(2090, 12, 31)),
    phrase=st.sampled_from(
        ["yesterday", "last week", "last weekend", "last month", "last year", "this month"]
        + [f"{n} {u}s ago" for n in (2, 3, 5, 11) for u in ("day", "week", "month")]
        + [f"back in {m}" for m in ("January", "June", "December")]
    ),
)
def test_every_window_is_ordered_and_never_after_today_for_the_past(today, phrase):
    days = window(f"What did I do {phrase}?", today)
    assert days is not None
    first, last = days
    assert first <= last
    if "weeks ago" in phrase:  # a centre +- 5 days
        assert (last - first).days == 10
    elif "this month" not in phrase:
        assert last < today or phrase.startswith("back in") and last.month == today.month
