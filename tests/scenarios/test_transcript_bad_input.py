"""Every importer's bad input: an error naming the conversation and the place (node id, line,
span or run id, message index), never a traceback or a silent drop."""

from __future__ import annotations

import codecs
import copy
import json
from pathlib import Path

import pytest

from scenarios.transcripts import MAX_TURNS, TranscriptError, list_conversations, parse, parse_all

FIXTURES = Path(__file__).parent / "fixtures"
EXPORT = json.loads((FIXTURES / "chatgpt_export.json").read_text(encoding="utf-8"))


def chatgpt(edit) -> str:
    data = copy.deepcopy(EXPORT)
    edit(data)
    return json.dumps(data, ensure_ascii=False)


def fails(text, match, **kw):
    with pytest.raises(TranscriptError) as caught:
        parse(text, **kw)
    message = str(caught.value)
    for part in [match] if isinstance(match, str) else match:
        assert part in message, message
    return caught.value


def test_chatgpt_cycle_names_the_node():
    def cycle(d):
        d[1]["mapping"]["r"]["parent"] = "b2"

    error = fails(
        chatgpt(cycle), ["conversation 2 'Trip to Goa' (id c2-goa)", "cycle"], conversation=2
    )
    assert error.node in ("r", "b1", "b2")


def test_chatgpt_missing_parent_names_the_node():
    def orphan(d):
        d[0]["mapping"]["u1"]["parent"] = "gone"
        del d[0]["mapping"]["sys"]

    fails(
        chatgpt(orphan),
        ["conversation 1 'Budget plan'", "node 'u1'", "'gone' is missing"],
        conversation=1,
    )


def test_chatgpt_unknown_content_type_names_node_and_type():
    def odd(d):
        d[1]["mapping"]["b1"]["message"]["content"]["content_type"] = "hologram"

    fails(chatgpt(odd), ["conversation 2", "node 'b1'", "'hologram'"], conversation="c2-goa")


def test_chatgpt_empty_conversation():
    def empty(d):
        d[1]["mapping"] = {"r": {"id": "r", "message": None, "parent": None, "children": []}}
        d[1]["current_node"] = "r"

    fails(chatgpt(empty), ["conversation 2", "empty conversation"], conversation=2)
    # the pick list still lists the others, and this one with its reason
    listed = list_conversations(chatgpt(empty))
    assert [c.error is None for c in listed] == [True, False, True]


def test_chatgpt_truncated_export_names_the_line():
    text = json.dumps(EXPORT, indent=1)
    cut = text[: len(text) // 2]
    error = fails(cut, "not valid JSON", name="conversations.json")
    assert error.line is not None and error.line > 1
    with pytest.raises(TranscriptError, match="ends too soon|not valid JSON"):
        list_conversations(cut)


def test_claude_bad_sender_and_block():
    data = json.loads((FIXTURES / "claude_export.json").read_text())
    data[0]["chat_messages"][1]["sender"] = "robot"
    fails(
        json.dumps(data),
        ["conversation 1 'Rent question' (id cl-1)", "chat_messages[1] (uuid m2)", "'robot'"],
        conversation=1,
    )
    data = json.loads((FIXTURES / "claude_export.json").read_text())
    data[0]["chat_messages"][1]["content"][1] = {"type": "hologram"}
    fails(
        json.dumps(data),
        ["conversation 1", "chat_messages[1]", "content[1]", "'hologram'"],
        conversation=1,
    )


def test_claude_empty_conversation():
    fails(
        (FIXTURES / "claude_export.json").read_bytes(),
        ["conversation 2 'Empty'", "empty"],
        conversation=2,
    )


def test_sharegpt_bad_speaker_and_empty():
    line = {
        "id": "x1",
        "conversations": [{"from": "human", "value": "hi"}, {"from": "narrator", "value": "?"}],
    }
    text = (
        json.dumps({"id": "ok", "conversations": [{"from": "human", "value": "a"}]})
        + "\n"
        + json.dumps(line)
        + "\n"
    )
    fails(
        text, ["conversation 2 (id x1) (line 2)", "conversations[1]", "'narrator'"], conversation=2
    )
    fails(json.dumps({"conversations": []}), "empty conversation")


def test_truncated_jsonl_line_is_named_and_the_rest_kept_when_asked():
    lines = (FIXTURES / "openai_chat.jsonl").read_text().splitlines()
    lines[1] = lines[1][:40]  # cut mid-line, as a copy that stopped early
    text = "\n".join(lines) + "\n"
    fails(text, ["line 2", "cut short", "--skip-bad-lines"], name="chat.jsonl", conversation=2)
    with pytest.raises(TranscriptError, match="line 2"):
        list_conversations(text, name="chat.jsonl")
    kept = parse_all(text, name="chat.jsonl", keep_bad_lines=True)
    assert [t.title for t in kept] == ["line 1", "line 4"]
    t = parse(text, name="chat.jsonl", conversation=2, keep_bad_lines=True)
    assert t.title == "line 4" and any("line 2 skipped" in n for n in t.notes)


def test_openai_jsonl_empty_and_bad_role_name_the_line():
    text = '{"messages": [{"role": "user", "content": "a"}]}\n{"messages": []}\n'
    fails(text, ["conversation 2 (line 2)", "empty conversation"], conversation=2)
    text = '{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [{"role": "user", "content": "b"}, {"role": "oracle", "content": "c"}]}\n'
    fails(text, ["conversation 2 (line 2)", "messages[1]", "'oracle'"], conversation=2)


def test_batch_line_without_messages():
    text = json.dumps(
        {"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m"}}
    )
    fails(
        text + "\n" + text.replace("r1", "r2") + "\n",
        ["conversation 1 (line 1) (custom_id 'r1')", "no 'messages'"],
        conversation=1,
    )


def test_langchain_unknown_type_names_the_index():
    data = json.loads((FIXTURES / "langchain_messages.json").read_text())
    data[2]["type"] = "wizard"
    fails(json.dumps(data), ["message index 2", "'wizard'"])


def test_langsmith_run_without_output_names_the_run():
    runs = json.loads((FIXTURES / "langsmith_runs.json").read_text())
    runs[0]["outputs"] = {"weird": 1}
    fails(json.dumps(runs), ["thread thread-a", "run 'run-2'", "no generation"], conversation=1)


def test_otel_span_with_broken_messages_names_the_span():
    lines = (FIXTURES / "otel_spans.jsonl").read_text().splitlines()
    data = json.loads(lines[0])
    attrs = data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    for a in attrs:
        if a["key"] == "gen_ai.input.messages":
            a["value"]["stringValue"] = (
                '[{"role": "user", "parts": [{"type": "text", "content": "x"'
            )
    fails(
        json.dumps(data) + "\n" + lines[1],
        ["conversation conv-1", "span '00f067aa0ba902b7'", "not valid JSON"],
        name="s.jsonl",
    )


def test_otel_file_without_genai_spans():
    data = json.loads((FIXTURES / "otel_spans.jsonl").read_text().splitlines()[0])
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    data["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
        s for s in spans if s["name"].startswith("execute_tool")
    ]
    fails(json.dumps(data), "no GenAI spans")


def test_5000_turns_are_accepted_and_5001_refused_with_the_limit_named():
    def convo(n):
        return [
            m
            for i in range(n)
            for m in (
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": f"a{i}"},
            )
        ]

    assert len(parse(json.dumps(convo(MAX_TURNS))).turns) == MAX_TURNS == 5000
    line = json.dumps({"messages": convo(MAX_TURNS + 1)})
    fails(
        line + "\n" + line + "\n",
        ["conversation 2 (line 2)", "5,001 turns", "at most 5,000"],
        conversation=2,
    )


def test_nul_bytes_binary_files_and_encodings():
    fails(b"User: hi\x00there\nAssistant: ok", "NUL")
    fails(b"\x00\x01\x02\x03binary", "binary file")
    fails(b"PK\x03\x04\x14\x00\x00\x00", "ZIP archive (unzip the export")
    fails(b"\x89PNG\r\n\x1a\n....", "PNG image")
    fails("User: café\nAssistant: oui".encode("latin-1"), ["line 1", "not UTF-8", "offset 9"])
    big = ("User: hello\nAssistant: hi\n" * 400_000).encode() + b"User: caf\xe9\n"
    error = fails(big, ["not UTF-8"])
    assert error.line == 800_001  # found in a later chunk, still on the right line
    utf16 = codecs.BOM_UTF16_LE + "User: café\nAssistant: oui".encode("utf-16-le")
    assert parse(utf16).turns == (("café", "oui"),)


def test_a_json_file_that_is_not_json():
    fails("User: hi", ["line 1", "not valid JSON"], name="t.json")
    fails('{"hello": 1}', ["line 1", "its keys: hello"])
    fails("[]", "empty list")
    fails('{"a": 1}\n{"b": 2}\n', ["line 1", "none of the formats read"])


def test_an_imported_message_over_the_limit_names_its_turn():
    from memory.strategies.base import MAX_MESSAGE_CHARS

    huge = "y" * (MAX_MESSAGE_CHARS + 1)
    fails(f"User: hi\nAssistant: hello\nUser: {huge}\n", ["turn 2", "100,000 characters"])
    assert parse(f"User: {'y' * MAX_MESSAGE_CHARS}\n").turns  # the limit itself imports
