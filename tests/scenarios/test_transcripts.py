"""One transcript parser: the strict formats and the loose filler shapes, one error class."""

from __future__ import annotations

import pytest

from engines import transcripts as engine_transcripts
from scenarios import filler
from scenarios.transcripts import TranscriptError, parse, simple_turns


def test_one_error_class_everywhere():
    assert engine_transcripts.TranscriptError is TranscriptError
    assert filler.TranscriptError is TranscriptError


@pytest.mark.parametrize(
    ("text", "name", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "t.json", "nests too deeply"),
        ('{"messages": [{"role": "narrator", "content": "x"}]}', "t.json", "role 'narrator'"),
        ("hello there", "t.txt", "line 1: expected a line starting with 'User:'"),
    ],
)
def test_strict_parser_names_the_problem(text, name, message):
    with pytest.raises(TranscriptError, match=message):
        parse(text, name=name)


def test_loose_shapes_for_filler():
    assert simple_turns("first\n\nsecond\n") == [("first", None), ("second", None)]
    assert simple_turns('[{"user": "a", "reply": "b"}, "c"]', name="t.json") == [
        ("a", "b"),
        ("c", None),
    ]
    assert simple_turns("user,reply\nhi,hello\n", name="t.csv") == [("hi", "hello")]
    assert simple_turns("User: hi\nAssistant: hello") == [("hi", "hello")]
    with pytest.raises(TranscriptError, match="nests too deeply"):
        simple_turns("[" * 100_000 + "]" * 100_000, name="t.json")
    with pytest.raises(TranscriptError, match="no user messages"):
        simple_turns("[]", name="t.json")
