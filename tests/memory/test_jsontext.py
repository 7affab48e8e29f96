"""Reading user-given JSON: the value, or the caller's own error with a specific message."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.jsontext import decoded, parse_json


class FileError(ValueError):
    pass


@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_any_input_gives_the_json_value_or_the_callers_error(text):
    try:
        value = parse_json(text, "the file", FileError)
    except FileError as exc:
        assert str(exc).startswith("the file ")
        return
    source = text.decode("utf-8-sig") if isinstance(text, bytes) else text
    # compared as JSON text: NaN (which json reads from 'NaN') is not equal to itself
    assert json.dumps(value) == json.dumps(json.loads(source))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", r"^the file is not valid JSON \(line 1, column 2\): Expecting"),
        ("[1,\n 2,,]", r"^the file is not valid JSON \(line 2, column 4\)"),
        (b"caf\xe9", r"^the file is not UTF-8 text \(byte 3\): save it as UTF-8$"),
        ("[" * 100_000 + "]" * 100_000, r"^the file nests too deeply to read$"),
    ],
)
def test_each_problem_has_its_message(text, message):
    with pytest.raises(FileError, match=message):
        parse_json(text, "the file", FileError)


def test_a_byte_order_mark_is_dropped_and_text_passes_through():
    assert parse_json('\ufeff{"a": 1}'.encode(), "x", FileError) == {"a": 1}
    assert decoded("as is", "x", FileError) == "as is"
