"""Facts in text: amounts in Indian and Western forms, words and abbreviations; names as words."""

from __future__ import annotations

from decimal import Decimal

import pytest

from memory.numbers import (
    Answer,
    amounts_in,
    contains_amount,
    contains_phrase,
    find_answer,
    format_inr,
    parse_amount,
)

SALARY_FORMS = [
    "₹1,20,000",
    "120000",
    "1.2 lakh",
    "1,20,000",
    "120,000",
    "Rs. 120000",
    "Rs.1,20,000/-",
    "1.2L",
    "1.2 L",
    "₹1.2L",
    "1.20 lakhs",
    "1.2 lac",
    "INR 1,20,000.00",
    "120k",
    "120 K",
    "120 thousand",
    "one lakh twenty thousand",
    "1 lakh 20 thousand",
    "one hundred and twenty thousand",
    "₹ 1,20,000",
    "0.12 million",
]


@pytest.mark.parametrize("form", SALARY_FORMS)
def test_every_form_of_the_salary_reads_as_120000(form):
    assert parse_amount(form) == 120000
    assert contains_amount(f"Your salary is {form} a month.", 120000)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("50k", 50000),
        ("₹50,000", 50000),
        ("fifty thousand rupees", 50000),
        ("0.5 lakh", 50000),
        ("₹60K per month", 60000),
        ("sixty thousand", 60000),
        ("a lakh", 100000),
        ("12 lakh", 1200000),
        ("2 cr", 20000000),
        ("1.5 crore", 15000000),
        ("twenty-five thousand", 25000),
        ("12,34,567", 1234567),
        ("1,234,567", 1234567),
        ("$3.5 million", 3500000),
    ],
)
def test_amount_forms(text, value):
    assert contains_amount(text, value)


def test_a_sentence_states_several_amounts_and_they_stay_apart():
    text = "Aim for a reserve of ₹1.8 L‑₹3.6 L, plus ₹12,000 – ₹15,000 from this month."
    assert amounts_in(text) >= {Decimal(180000), Decimal(360000), Decimal(12000), Decimal(15000)}
    assert not contains_amount(text, 120000)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have 2 kids and 3 dogs", {2, 3}),
        ("₹1.2 lakh for 3 months", {120000, 3}),  # "3 months" does not join the lakh
        ("five thousand six thousand", {5000, 6000}),
        ("1,2,3", {1, 2, 3}),  # not a thousands separator: three numbers
        ("20-30 minutes", {20, 30}),
    ],
)
def test_numbers_that_must_not_merge(text, expected):
    assert amounts_in(text) == {Decimal(v) for v in expected}


@pytest.mark.parametrize(
    "text",
    [
        "1200000",  # 12 lakh, not 1.2 lakh
        "12,000",
        "₹1,20,00",  # malformed grouping is not read as 1,20,000
        "1.2 litres of milk",  # an L that starts a word is not lakh
        "The 120000th visitor",  # a figure glued to letters is not an amount
        "version 1.2 later",
    ],
)
def test_near_misses_are_not_the_salary(text):
    assert not contains_amount(text, 120000)


def test_scale_words_alone_state_nothing():
    assert amounts_in("thousands of people, lakhs of rupees") == frozenset()


def test_parse_amount_refuses_text_that_is_more_than_an_amount():
    assert parse_amount("3 months") is None
    assert parse_amount("Chiru") is None
    assert parse_amount("₹1,20,000 and ₹60,000") is None
    assert parse_amount("₹1,20,000 only") == 120000


def test_amounts_are_clean_for_display():
    assert str(parse_amount("1.2 lakh")) == "120000"
    assert str(parse_amount("1.50")) == "1.5"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Your name is Chiru.", True),
        ("your name is chiru", True),
        ("CHIRU, here is your plan", True),
        ("Chiru's plan", True),
        ("Hi  Chiru!", True),
        ("Chirurgeon", False),
        ("Achiru", False),
        ("chir u", False),
        ("Chíru", True),  # accents folded
    ],
)
def test_names_match_as_whole_words_ignoring_case(text, found):
    assert contains_phrase(text, "Chiru") is found


def test_multi_word_phrases_tolerate_spacing_and_case():
    assert contains_phrase("I live in   new\nDelhi now", "New Delhi")
    assert not contains_phrase("New Delhiite", "New Delhi")
    assert not contains_phrase("anything", "   ")


def test_find_answer_returns_the_accepted_answer_found():
    assert find_answer("You earn 1.2L a month", ["₹1,20,000"]) == "₹1,20,000"
    assert find_answer("You earn ₹12,000 a month", ["₹1,20,000"]) is None
    assert find_answer("I think it's chiru", ["Kira", "Chiru"]) == "Chiru"
    assert Answer("₹50,000").amount == 50000
    assert Answer("Chiru").amount is None


def test_answers_inside_json_fact_blocks():
    block = '{"monthly_salary": "₹1,20,000", "name": "Chiru", "fd": 50000}'
    assert contains_amount(block, 120000)
    assert contains_amount(block, 50000)
    assert contains_phrase(block, "chiru")


@pytest.mark.parametrize(
    ("value", "text"),
    [(120000, "₹1,20,000"), (999, "₹999"), (12345678, "₹1,23,45,678"), (1000, "₹1,000")],
)
def test_format_inr(value, text):
    assert format_inr(value) == text
    assert parse_amount(text) == value
