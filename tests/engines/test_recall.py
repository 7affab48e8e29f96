"""The recall engine: evidence in the payload, token shares, per kind, pooled settings."""

from __future__ import annotations

import pytest

from engines.recall import (
    answer_present,
    default_settings,
    full_tokens,
    run_recall,
    run_setting,
)
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from memory.tokens import TokenCounter
from scenarios.longmem import LongConversation, Question, Session
from scenarios.longmem_world import generate


@pytest.fixture(scope="module")
def counter():
    return TokenCounter()


def small() -> LongConversation:
    turns = [("My gym locker code is 4471.", "Noted.")]
    turns += [(f"Let's chat about the weather, day {i}.", "Sure, it is sunny.") for i in range(8)]
    turns += [("I moved to Pune last week.", "Nice city!")]
    questions = (
        Question("q1", "single-hop", "What is my gym locker code?", (1,), "4471"),
        Question("q2", "multi-hop", "Locker code and city?", (1, 10), "4471, Pune"),
        Question("q3", "single-hop", "What was the weather on day 2?", (4,), after_turn=5),
    )
    return LongConversation("Be brief.", (Session("2024-01-01", tuple(turns)),), questions)


def test_each_question_is_checked_against_the_request_it_would_get(counter):
    conv = small()
    window = run_setting(conv, LaneSpec("window", {"k": 1}), counter=counter)
    assert [r.question for r in window] == ["q3", "q1", "q2"]  # in the order they are asked
    # q3 is asked after turn 5, when the window holds turn 5 only
    assert [r.found for r in window] == [(), (), (10,)]
    assert [r.answer_in_payload for r in window] == [None, False, False]
    full = run_setting(conv, LaneSpec("full"), counter=counter)
    assert all(r.share == 1 for r in full)
    assert full[1].prompt_tokens == full[1].full_tokens
    assert full[0].full_tokens < full[1].full_tokens  # asked earlier, less history
    retrieval = run_setting(
        conv, LaneSpec("retrieval", {"k": 1, "neighbours": 0.0}), counter=counter
    )
    assert retrieval[1].found == (1,) and retrieval[1].answer_in_payload


def test_rows_pool_questions_and_split_by_kind(counter):
    conv = small()
    (row,) = run_recall([conv, conv], [LaneSpec("window", {"k": 1})], counter=counter)
    assert row.label == "window (k=1)"
    assert row.evidence_kept == pytest.approx(2 / 8)  # per conversation: 1 of 4 evidence turns
    assert row.all_evidence == 0
    assert row.by_kind == {"single-hop": 0.0, "multi-hop": 0.5}
    assert 0 < row.full_share < 1


def test_budget_shares_resolve_per_conversation(counter):
    setting = LaneSpec("token_window", shares={"budget": 0.1})
    assert setting.sized_label == "token_window (budget=10.0% of full)"
    assert setting.resolve(50_000) == LaneSpec("token_window", {"budget": 5000})
    assert setting.resolve(100).params == {"budget": 200}  # never below a usable floor


def test_answers_match_in_any_case_and_all_parts():
    assert answer_present("Pune, 4471", "I live in PUNE; code 4471")
    assert not answer_present("Pune, 4471", "I live in Pune")


def test_on_the_generated_conversation_retrieval_beats_recency_at_the_same_tokens(counter):
    conv = generate(3)
    full = full_tokens(conv, counter)
    settings = [
        LaneSpec("token_window", shares={"budget": 0.05}),
        LaneSpec("retrieval", {"k": 2, "neighbours": 0.25}, shares={"recall_budget": 0.045}),
    ]
    window, retrieval = run_recall([conv], settings, counter=counter)
    assert window.full_share <= 0.051 and retrieval.full_share <= 0.051
    assert retrieval.evidence_kept > window.evidence_kept + 0.3
    assert full > 20_000
    # every registered strategy runs with the stand-ins, no model
    assert {s.name for s in default_settings()} == set(REGISTRY)


def test_a_model_answers_each_question_graded_by_the_expected_answer(counter):
    from memory.standins import StaticReply
    from providers import ProviderError

    conv = small()
    replies = {"What is my gym locker code?": "It is 4471.", "Locker code and city?": "4471 only"}

    def send(request, on_delta):
        question = request.messages[-1].content
        if question.startswith("What was the weather"):
            return StaticReply("", complete=False, error=ProviderError("boom"))
        return StaticReply(replies[question])

    results = run_setting(conv, LaneSpec("full"), counter=counter, send=send)
    by_id = {r.question: r for r in results}
    assert by_id["q1"].answered is True and by_id["q1"].reply == "It is 4471."
    assert by_id["q2"].answered is False  # "Pune" is missing from the reply
    assert by_id["q3"].answered is None and by_id["q3"].error  # the call failed
    (row,) = run_recall([conv], [LaneSpec("full")], counter=counter, send=send, model="m")
    assert row.answered == pytest.approx(1 / 2) and row.errors == 1 and row.model == "m"
    (quiet,) = run_recall([conv], [LaneSpec("full")], counter=counter)
    assert quiet.answered is None and quiet.model == ""


def test_every_setting_holds_the_defaults_and_every_registered_strategy():
    from engines.recall import every_setting

    every = every_setting()
    assert {s.sized_label for s in default_settings()} <= set(every)
    assert {s.name for s in every.values()} == set(REGISTRY)
    assert all(label == s.sized_label for label, s in every.items())
