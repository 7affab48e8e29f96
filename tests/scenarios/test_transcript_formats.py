"""Every importer parses its fixture into exactly the expected turns (byte-exact text), with
what it skipped and what became a placeholder; the fixtures are written from each format's
documented schema (tests/scenarios/fixtures/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.transcripts import REGISTRY, list_conversations, parse, parse_all

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str, **kw):
    return parse(FIXTURES / name, name=name, **kw)


def test_chatgpt_export_keeps_only_the_active_branch():
    t = load("chatgpt_export.json", conversation=1)
    assert t.format == "chatgpt" and t.title == "Budget plan" and t.id == "c1-budget"
    assert t.created == "2024-06-01T10:00:00+00:00"
    assert t.turns == (
        (
            "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.",
            "Nice to meet you, Chiru.",
        ),
        (
            "[image: file-service://file-abc, 800x600]\n"
            "Here is my spending chart. Can you sum it up?",
            "Your chart shows ₹60,000 of monthly expenses, mostly rent.",
        ),
    )
    # the regenerated first try ("First try: ...") is a sibling branch: not in the turns
    assert not any("First try" in (r or "") for _, r in t.turns)
    assert dict(t.skipped) == {
        "empty nodes": 1,
        "hidden system nodes": 1,
        "nodes on other branches": 1,
        "reasoning nodes": 1,
        "tool nodes": 2,
    }
    assert "shown as text placeholders: 1 images" in t.notes


def test_chatgpt_edited_prompt_follows_current_node():
    t = load("chatgpt_export.json", conversation="c3-edit")
    assert t.turns == (
        ("What is a good SIP amount?", "It depends on your goals; ₹10,000 a month is common."),
        ("I prefer index funds.", None),
    )
    assert dict(t.skipped)["nodes on other branches"] == 1


def test_chatgpt_export_is_a_pick_list():
    listed = list_conversations(FIXTURES / "chatgpt_export.json", name="chatgpt_export.json")
    assert [(c.number, c.id, c.title, c.turns) for c in listed] == [
        (1, "c1-budget", "Budget plan", 2),
        (2, "c2-goa", "Trip to Goa", 1),
        (3, "c3-edit", "Edited prompt", 2),
    ]
    assert [c.created[:10] for c in listed] == ["2024-06-01", "2024-06-02", "2024-06-03"]
    with pytest.raises(Exception, match="several conversations: pick one"):
        load("chatgpt_export.json")


def test_claude_export():
    t = load("claude_export.json", conversation="cl-1")
    assert t.format == "claude" and t.title == "Rent question"
    assert t.created == "2024-06-01T10:00:00.000000Z"
    assert t.turns == (
        (
            "My rent is ₹25,000 a month.",
            "That is about 21% of your salary.\n"
            '[tool call: calculator {"expr": "25000/120000"}]\n'
            "[tool result: 0.208]",
        ),
        ("See my lease.\n[file: lease.pdf]", "The lease runs for 11 months."),
    )
    assert dict(t.skipped) == {"reasoning blocks": 1}
    listed = list_conversations(FIXTURES / "claude_export.json")
    assert [c.turns for c in listed] == [2, 0, 1]
    assert listed[1].error and "conversation 2 'Empty' (id cl-2)" in listed[1].error
    assert "empty conversation" in listed[1].error
    assert load("claude_export.json", conversation=3).turns == (
        ("Name a liquid fund.", "An overnight fund is one example."),
    )


@pytest.mark.parametrize("name", ["sharegpt.json", "sharegpt.jsonl"])
def test_sharegpt_json_and_jsonl(name):
    first, second = parse_all(FIXTURES / name, name=name)
    assert first.format == second.format == "sharegpt"
    assert first.id == "sg-1" and first.system == "You are a helpful assistant."
    assert first.turns == (
        ("What is PPF?", "A Public Provident Fund is a 15-year savings scheme."),
        ("Can I withdraw early?", "Partly, from the seventh year."),
    )
    assert second.turns == (
        (
            "Weather in Pune?",
            '[tool call: {"name": "weather", "arguments": {"city": "Pune"}}]\n\n'
            '[tool result: {"temp": 31}]\n\n'
            "It is 31 °C in Pune.",
        ),
    )
    assert any("joined" in n for n in second.notes)


def test_openai_chat_jsonl():
    a, b, c = parse_all(FIXTURES / "openai_chat.jsonl", name="openai_chat.jsonl")
    assert a.format == "openai_jsonl" and a.system == "You are FinCoach."
    assert a.turns == (("Hi, I'm Asha.", "Hello Asha!"),)
    assert b.turns == (
        ("What's 2+2?", '[tool call: add {"a": 2, "b": 2}]\n\n[tool result: 4]\n\nIt is 4.'),
    )
    assert c.title == "line 4"  # the blank line 3 is not a conversation
    assert c.turns == (("What is in this picture?\n[image: inline image/png]", "A bar chart."),)


def test_openai_batch_input():
    ts = parse_all(FIXTURES / "openai_batch.jsonl", name="openai_batch.jsonl")
    assert [(t.format, t.id, t.system, t.turns) for t in ts] == [
        ("openai_batch", "request-1", "Be brief.", (("What is an index fund?", None),)),
        ("openai_batch", "request-2", "Be brief.", (("What is a bond?", None),)),
    ]


LANGCHAIN_TURNS = (
    (
        "My FD of ₹50,000 matures in 3 months.",
        'Good to know.\n[tool call: calendar {"months": 3}]\n\n'
        "[tool result: calendar reminder set]\n\n"
        "I set a reminder for when it matures.",
    ),
    ("Thanks!", None),
)


def test_langchain_messages_to_dict_fixture():
    t = load("langchain_messages.json")
    assert t.format == "langchain" and t.system == "You are FinCoach."
    assert t.turns == LANGCHAIN_TURNS


def test_langchain_dump_made_by_langchain_itself(tmp_path):
    """The same conversation written by langchain-core's own messages_to_dict."""
    messages = pytest.importorskip("langchain_core.messages")
    dumped = messages.messages_to_dict(
        [
            messages.SystemMessage("You are FinCoach."),
            messages.HumanMessage("My FD of ₹50,000 matures in 3 months."),
            messages.AIMessage(
                "Good to know.",
                tool_calls=[{"name": "calendar", "args": {"months": 3}, "id": "t1"}],
            ),
            messages.ToolMessage("reminder set", tool_call_id="t1", name="calendar"),
            messages.AIMessage("I set a reminder for when it matures."),
            messages.HumanMessage("Thanks!"),
        ]
    )
    t = parse(json.dumps(dumped, ensure_ascii=False), name="dump.json")
    assert t.format == "langchain" and t.turns == LANGCHAIN_TURNS
    # and the fixture is what langchain writes, field for field
    assert dumped == json.loads((FIXTURES / "langchain_messages.json").read_text())


def test_langsmith_runs_one_conversation_per_thread_in_time_order():
    a, b = parse_all(FIXTURES / "langsmith_runs.json")
    assert a.format == "langsmith" and a.id == "thread-a" and a.system == "You are FinCoach."
    assert a.turns == (
        ("I'm Ravi.", "Hi Ravi!"),
        ("I earn ₹90,000 a month.", "Noted: ₹90,000 a month."),
    )
    assert [(u.input_tokens, u.output_tokens) for u in a.usage] == [(20, 4), (41, 9)]
    assert dict(a.skipped) == {"chain runs": 1}
    assert a.created == "2024-06-01T10:00:00.000000"  # the earliest run, not the first listed
    assert b.id == "tr-9" and b.turns == (
        ("Is gold a good hedge?", "Sometimes, in small amounts."),
    )


def test_otel_genai_spans_grouped_by_conversation_id_in_time_order():
    a, b = parse_all(FIXTURES / "otel_spans.jsonl", name="otel_spans.jsonl")
    assert a.format == "otel" and a.id == "conv-1" and a.system == "You are FinCoach."
    assert a.turns == (
        ("I'm Meera.", "Hello Meera!"),
        ("Remind me my SIP is ₹8,000.", "Your SIP is ₹8,000 a month."),
    )
    assert [(u.input_tokens, u.output_tokens) for u in a.usage] == [(17, 4), (38, 9)]
    # the older gen_ai.prompt.N / gen_ai.completion.N attributes
    assert b.system == "Be brief."
    assert b.turns == (
        ("What is an ELSS fund?", "A tax-saving equity fund with a 3-year lock-in."),
    )
    assert [(u.input_tokens, u.output_tokens) for u in b.usage] == [(15, 11)]


def test_otel_sdk_console_spans_are_read_too():
    span = {
        "name": "chat gpt-4o",
        "context": {"trace_id": "0xabc", "span_id": "0x01", "trace_state": "[]"},
        "kind": "SpanKind.CLIENT",
        "start_time": "2024-06-01T10:00:00.000000Z",
        "attributes": {
            "gen_ai.conversation.id": "c9",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "Hello"}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "Hi!"}]}]
            ),
        },
    }
    text = json.dumps(span, indent=4) + "\n" + json.dumps({**span, "start_time": "2024-06-01T10:00:05Z",
        "attributes": {**span["attributes"], "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Hello"}]},
             {"role": "assistant", "parts": [{"type": "text", "content": "Hi!"}]},
             {"role": "user", "parts": [{"type": "text", "content": "Bye"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Bye!"}]}])}}, indent=4)  # fmt: skip
    t = parse(text, name="spans.json")
    assert t.format == "otel" and t.turns == (("Hello", "Hi!"), ("Bye", "Bye!"))


def test_every_registered_format_has_a_fixture_test():
    tested = {"chatgpt", "chatgpt_one", "claude", "claude_one", "sharegpt", "openai_batch",
              "openai_jsonl", "langsmith", "otel", "langchain", "anthropic", "openai",
              "openai_list"}  # fmt: skip
    assert set(REGISTRY) == tested


def test_single_chatgpt_and_claude_conversations():
    export = json.loads((FIXTURES / "chatgpt_export.json").read_text())
    t = parse(json.dumps(export[1]), name="one.json")
    assert t.format == "chatgpt" and t.turns[0][0] == "Plan a four-day trip to Goa in December."
    claude = json.loads((FIXTURES / "claude_export.json").read_text())
    t = parse(json.dumps(claude[2]), name="one.json")
    assert t.format == "claude" and t.turns == (
        ("Name a liquid fund.", "An overnight fund is one example."),
    )
