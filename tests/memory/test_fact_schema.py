"""The fact-extraction reply shape: the schema the request carries, and the parser reading it."""

from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.maintenance import FACT_UPDATE_SCHEMA, extraction_request, parse_fact_update
from memory.tokens import TokenCounter
from memory.types import Turn

keys = st.text(max_size=30)
values = st.one_of(
    st.text(max_size=60),
    st.integers(min_value=-(10**15), max_value=10**15),
    st.floats(allow_nan=False, allow_infinity=False),
)
replies = st.fixed_dictionaries(
    {"set": st.dictionaries(keys, values, max_size=8), "delete": st.lists(keys, max_size=6)}
)
layouts = st.sampled_from(
    [
        {},  # json.dumps' default: ", " and ": "
        {"separators": (",", ":")},  # compact
        {"indent": 2},  # what SmolLM2 writes under the grammar: a newline per key
        {"ensure_ascii": False},
    ]
)


def test_the_extraction_request_carries_the_reply_schema():
    turn = Turn(1, "I'm Chiru.", "Hello Chiru.")
    request = extraction_request(TokenCounter("o200k_base"), {}, turn)
    assert request.reply_schema == FACT_UPDATE_SCHEMA
    jsonschema.Draft202012Validator.check_schema(FACT_UPDATE_SCHEMA)


@settings(max_examples=300, deadline=None)
@given(replies, layouts)
def test_every_reply_the_schema_allows_parses_to_what_it_says(reply, layout):
    jsonschema.validate(reply, FACT_UPDATE_SCHEMA)  # the generator makes only valid replies
    text = json.dumps(reply, **layout)
    to_set, to_delete = parse_fact_update(text)
    assert to_delete == reply["delete"]
    assert to_set == {k.strip(): v for k, v in reply["set"].items()}


@pytest.mark.parametrize(
    "reply",
    [
        # text the old parser took for the reply: a fence, or braces, inside a value
        {"set": {"note": "```json\n{}\n```"}, "delete": []},
        {"set": {"a": "}", "b": "{"}, "delete": ["}"]},
        {"set": {}, "delete": []},
        {"set": {"monthly_salary": 120000, "name": "Chiru"}, "delete": ["fd"]},
    ],
)
def test_replies_with_json_text_inside_their_values_parse_whole(reply):
    jsonschema.validate(reply, FACT_UPDATE_SCHEMA)
    assert parse_fact_update(json.dumps(reply)) == (reply["set"], reply["delete"])


@pytest.mark.parametrize(
    "reply",
    [
        {"set": {"a": [1]}, "delete": []},  # a list value
        {"set": {"a": True}, "delete": []},  # a boolean is not a number here
        {"set": {}, "delete": [], "note": "hi"},  # free text beside the update
        {"set": {}},  # delete missing
        {"set": {}, "delete": "a"},
    ],
)
def test_the_schema_refuses_what_a_constrained_model_cannot_write(reply):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(reply, FACT_UPDATE_SCHEMA)


def test_replies_with_text_around_the_json_still_parse():
    assert parse_fact_update('Sure:\n```json\n{"set": {"a": 1}, "delete": []}\n```') == (
        {"a": 1},
        [],
    )
    assert parse_fact_update('Here: {"name": "Chiru"} done') == ({"name": "Chiru"}, [])
    with pytest.raises(ValueError):
        parse_fact_update('{"set": {"a": 1}, "delete": [')
