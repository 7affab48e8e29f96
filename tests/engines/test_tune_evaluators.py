"""The tuner on any conversation: facts on an imported transcript and the long-memory questions.

For each evaluator the winner is re-checked by the engine the evaluator wraps (the survival
lab's payload verdict, the recall benchmark's evidence count), no tried setting that met the
target is cheaper, the bisection agrees with trying values one by one, the same seed gives
the same trials, cancelling stops it, and bad inputs get messages that say what to fix."""

from __future__ import annotations

import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.recall import run_recall, run_setting, summarise
from engines.survival import SurvivalConfig, SurvivalConfigError
from engines.tune import (
    EVIDENCE,
    STOP_CANCELLED,
    STOP_DONE,
    STOP_TIME,
    FactsEvaluator,
    QuestionsEvaluator,
    Target,
    TranscriptFactsEvaluator,
    tune,
)
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.tokens import TokenCounter
from scenarios.longmem import LongMemFormatError
from scenarios.longmem_world import generate
from scenarios.transcripts import TranscriptError

COUNTER = TokenCounter()


def transcript_text(turns: int = 30, *, rent_at: int = 3, raise_at: int = 12, fund_at: int = 5):
    """A plain-text transcript: rent stated at `rent_at`, raised at `raise_at`, and the
    assistant naming an emergency fund at `fund_at`; small talk everywhere else."""
    topics = ("the weather", "a film I saw", "my commute", "a recipe", "the cricket match")
    lines = ["System: You are a careful money coach."]
    for t in range(1, turns + 1):
        user = f"Let's talk about {topics[t % len(topics)]} for a bit, turn {t}."
        reply = f"Happy to chat about {topics[t % len(topics)]}."
        if t == rent_at:
            user = "My rent is ₹25,000 a month, paid on the first."
        elif t == raise_at:
            user = "Bad news: my landlord raised the rent to ₹28,000."
        elif t == fund_at:
            user = "How big should my emergency fund be?"
            reply = "Aim for an emergency fund of ₹3,60,000, six months of expenses."
        lines += [f"User: {user}", f"Assistant: {reply}"]
    return "\n".join(lines) + "\n"


def facts_json(*, rent_at: int = 3, raise_at: int = 12, fund_at: int = 5) -> str:
    return json.dumps(
        {
            "facts": [
                {
                    "key": "rent",
                    "turn": rent_at,
                    "probe": "How much is my rent now?",
                    "answer": "₹25,000",
                    "updates": [{"turn": raise_at, "answer": "₹28,000"}],
                },
                {
                    "key": "fund",
                    "turn": fund_at,
                    "speaker": "assistant",
                    "probe": "How big did you say my emergency fund should be?",
                    "answer": ["₹3,60,000"],
                },
            ]
        }
    )


def transcript_evaluator(probe_turns=(10, 20, 31), **where) -> TranscriptFactsEvaluator:
    return TranscriptFactsEvaluator.from_files(
        transcript_text(**where), facts_json(**where), probe_turns, name="chat.txt", counter=COUNTER
    )


def window(ev, k):
    return ev.measure(LaneSpec("window", {"k": k}))


def assert_winner_is_cheapest_that_met(result):
    winner = result.winner
    assert winner is not None and winner.meets and winner.share >= result.target.share
    assert all(t.tokens_per_turn >= winner.tokens_per_turn for t in result.trials if t.meets)
    assert not any(t.meets for t in result.trials if t.share < result.target.share)


# -- facts on an imported transcript ----------------------------------------------------------


def test_transcript_facts_winner_meets_the_target_by_the_survival_verdict():
    ev = transcript_evaluator()
    result = tune(ev, Target(1.0), strategies=("window", "token_window"))
    assert_winner_is_cheapest_that_met(result)
    assert result.stop_reason == STOP_DONE and result.what == "facts"
    assert "on chat.txt (30 turns)" in result.conversation
    again = ev.measure(result.winner.choice)  # the survival lab's rows, measured afresh
    assert again.points and all(p.kept == 1 for p in again.points)


def test_transcript_facts_use_the_transcript_turns_not_the_filler_bank():
    ev = transcript_evaluator()
    # window k=1 at N=31 holds turn 30 only: the fund (turn 5) and rent (12) are gone
    small = ev.measure(LaneSpec("window", {"k": 1}))
    assert [p.kept for p in small.points if p.turn == 31] == [0, 0]
    # k=19 at N=31 keeps turns 12..30: the raised rent, not the fund
    mid = ev.measure(LaneSpec("window", {"k": 19}))
    assert [p.kept for p in mid.points if p.turn == 31] == [1, 0]
    # the stale rent alone (k=6 at N=10 keeps turns 4..9: no rent at all; k=9 keeps turn 3)
    early = ev.measure(LaneSpec("window", {"k": 7}))
    assert [p.kept for p in early.points if p.turn == 10] == [1, 1]


def test_transcript_bisection_finds_the_smallest_window_that_trying_every_k_finds():
    ev = transcript_evaluator(probe_turns=(20, 31))
    result = tune(ev, Target(1.0), strategies=("window",))
    tried = range(0, 31)
    every = [k for k in tried if all(p.kept for p in window(ev, k).points)]
    assert result.winner.choice.params.get("k", 3) == min(every) == 26  # turn 5 at N = 31
    assert len(result.trials) < len(tried) / 3  # a search, not a grid dump


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rent_at=st.integers(1, 8),
    gap=st.integers(1, 15),
    fund_at=st.integers(1, 25),
    share=st.sampled_from([0.5, 0.75, 1.0]),
)
def test_any_fact_placement_gives_a_winner_that_truly_meets_the_target(
    rent_at, gap, fund_at, share
):
    raise_at = rent_at + gap
    if fund_at in (rent_at, raise_at):
        fund_at = 26
    ev = transcript_evaluator(rent_at=rent_at, raise_at=raise_at, fund_at=fund_at)
    result = tune(ev, Target(share), strategies=("window", "token_window"))
    assert_winner_is_cheapest_that_met(result)
    points = ev.measure(result.winner.choice).points
    assert sum(p.kept for p in points) / len(points) >= share
    found = result.winner.choice
    if found.name == "window" and found.params.get("k", 3) > 0:  # one less misses
        less = ev.measure(LaneSpec("window", {"k": found.params.get("k", 3) - 1}))
        assert sum(p.kept for p in less.points) / len(less.points) < share


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rent_turn": 40}, "fact 'rent' is stated at turn 40, but chat.txt has 30 turns"),
        ({"rent_turn": 4}, "fact 'rent': none of its values (₹25,000) is in turn 4"),
        ({"fund_speaker": "user"}, "fact 'fund': none of its values (₹3,60,000) is in turn 5"),
        ({"update_turn": 31}, "fact 'rent', update 1 is stated at turn 31"),
        ({"probe": "What is my rent?", "no_answer": True}, "'answer' (the expected answer)"),
    ],
)
def test_transcript_facts_that_do_not_match_the_transcript_are_refused(change, message):
    data = json.loads(facts_json())
    rent, fund = data["facts"]
    rent["turn"] = change.get("rent_turn", 3)
    rent["updates"][0]["turn"] = change.get("update_turn", 12)
    fund["speaker"] = change.get("fund_speaker", "assistant")
    if change.get("no_answer"):
        del rent["answer"]
    with pytest.raises(SurvivalConfigError) as caught:
        TranscriptFactsEvaluator.from_files(
            transcript_text(), json.dumps(data), (31,), name="chat.txt"
        )
    assert message in str(caught.value)


def test_transcript_probe_turns_and_files_that_cannot_be_read_are_refused():
    with pytest.raises(SurvivalConfigError, match=r"probe turn N=45 needs turns 1..44, but"):
        TranscriptFactsEvaluator.from_files(transcript_text(), facts_json(), (10, 45))
    with pytest.raises(SurvivalConfigError, match=r"the facts file is not valid JSON \(line 1"):
        TranscriptFactsEvaluator.from_files(transcript_text(), "{facts:", (10,))
    with pytest.raises(SurvivalConfigError, match=r"the facts file is not UTF-8 text \(byte 1\)"):
        TranscriptFactsEvaluator.from_files(transcript_text(), b"[\xff]", (10,))
    with pytest.raises(TranscriptError, match="line 1"):
        TranscriptFactsEvaluator.from_files("hello there\n", facts_json(), (10,))


# -- long-memory questions --------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_world():
    """A short generated long conversation (6 sessions, about 130 turns)."""
    return QuestionsEvaluator(generate(4, sessions=6), counter=COUNTER, name="seed 4")


def test_questions_winner_meets_the_evidence_target_by_the_recall_benchmark(small_world):
    result = tune(small_world, Target(0.9), strategies=("window", "token_window", "retrieval"))
    assert_winner_is_cheapest_that_met(result)
    assert result.what == EVIDENCE and "90% of the evidence turns" in result.summary()
    conv = small_world.conversation
    row = summarise("w", result.winner.choice.name, run_setting(conv, result.winner.choice,
                                                               counter=COUNTER))  # fmt: skip
    assert row.evidence_kept >= 0.9
    assert row.evidence_kept == pytest.approx(result.winner.share)
    assert row.mean_tokens == pytest.approx(result.winner.tokens_per_turn)


def test_questions_share_is_the_recall_benchmarks_evidence_kept(small_world):
    choice = LaneSpec("token_window", {"budget": 3000})
    measure = small_world.measure(choice)
    (row,) = run_recall([small_world.conversation], [LaneSpec("token_window", choice.params)])
    kept = sum(p.kept for p in measure.points) / sum(p.total for p in measure.points)
    assert kept == pytest.approx(row.evidence_kept) and 0 < kept < 1


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), share=st.sampled_from([0.3, 0.6, 0.9]))
def test_for_any_generated_world_the_budget_found_is_within_1_percent_of_the_smallest(seed, share):
    ev = QuestionsEvaluator(generate(seed, sessions=6, turns_per_session=8), counter=COUNTER)
    result = tune(ev, Target(share), strategies=("token_window",))
    assert_winner_is_cheapest_that_met(result)
    budget = result.winner.choice.params.get("budget", 600)
    step = max(1, budget // 100)  # token amounts are bisected to within 1 %
    less = ev.measure(LaneSpec("token_window", {"budget": budget - step}))
    assert sum(p.kept for p in less.points) / sum(p.total for p in less.points) < share


def test_questions_from_files_read_a_transcript_and_a_questions_file():
    text = transcript_text()
    questions = json.dumps(
        [{"id": "rent", "question": "How much is my rent now?", "evidence": [12]},
         {"id": "fund", "question": "How big is my fund?", "evidence": [5], "after_turn": 20}]
    )  # fmt: skip
    ev = QuestionsEvaluator.from_files(text, questions, name="chat.txt", counter=COUNTER)
    assert ev.judged_turns == (20, 30) and ev.last_turn == 30
    result = tune(ev, Target(1.0), strategies=("window",))
    # at turn 20 the fund (turn 5) needs k=16; at 30 the rent (turn 12) needs k=19
    assert result.winner.choice.params == {"k": 19}
    at_20 = tune(ev, Target(1.0, at=(20,)), strategies=("window",))
    assert at_20.winner.choice.params == {"k": 16}


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ("[{", "the questions file is not valid JSON (line 1"),
        ("[]", "'questions' must be a non-empty list"),
        ('[{"question": "Q?", "evidence": []}]', "questions[0].evidence must be a non-empty"),
        ('[{"question": "Q?", "evidence": [99]}]', "questions[0].evidence[0] is turn 99, but"),
        ('[{"question": "Q?", "evidence": [9], "after_turn": 4}]', "evidence turn 9 comes after"),
        ('[{"evidence": [2]}]', "questions[0].question must be text"),
    ],
)
def test_a_malformed_questions_file_says_what_is_wrong(questions, message):
    with pytest.raises(LongMemFormatError) as caught:
        QuestionsEvaluator.from_files(transcript_text(), questions)
    assert message in str(caught.value)


# -- every evaluator: reproducible, bounded, cancellable ---------------------------------------


@pytest.mark.parametrize("which", ["transcript", "questions"])
def test_same_seed_same_trials_and_cancel_and_time_limit_stop(which, small_world):
    ev = transcript_evaluator() if which == "transcript" else small_world
    names = ("window", "retrieval")
    a = tune(ev, Target(0.75), strategies=names, seed=5, refine=3)
    b = tune(ev, Target(0.75), strategies=names, seed=5, refine=3)
    assert [t.as_dict() for t in a.trials] == [t.as_dict() for t in b.trials]
    assert any(t.stage == "refine" for t in a.trials)
    cancel = threading.Event()
    seen = []

    def stop_after_three(p):
        seen.append(p.tried)
        if p.tried == 3:
            cancel.set()

    stopped = tune(ev, Target(0.75), strategies=names, cancel=cancel, on_progress=stop_after_three)
    assert stopped.stop_reason == STOP_CANCELLED and len(stopped.trials) == 3 and seen == [1, 2, 3]
    late = tune(ev, Target(0.75), strategies=names, time_limit_s=0.0)
    assert late.stop_reason == STOP_TIME and late.trials == []


def test_a_target_at_turns_nothing_is_judged_at_is_refused(small_world):
    with pytest.raises(ValueError, match="nothing is judged there"):
        tune(small_world, Target(0.9, at=(3,)), strategies=("window",))


# -- compositions -------------------------------------------------------------------------------


def test_a_composition_is_tuned_like_the_built_in_it_equals(register):
    from dataclasses import replace

    from memory.registry import builtin_composition

    name = register(replace(builtin_composition("token_window"), name="tuned_tw")).name
    ev = FactsEvaluator.from_config(SurvivalConfig(probe_turns=(12,)), counter=COUNTER)
    result = tune(ev, Target(1.0), strategies=("token_window", name))
    assert_winner_is_cheapest_that_met(result)
    best = {
        n: min(
            (t for t in result.trials if t.meets and t.choice.name == n),
            key=lambda t: t.tokens_per_turn,
        )  # fmt: skip
        for n in ("token_window", name)
    }
    assert best[name].choice.params["budget"] == best["token_window"].choice.params["budget"]
    assert best[name].tokens_per_turn == best["token_window"].tokens_per_turn


def test_a_composition_of_pinned_and_recent_turns_is_searched_on_every_size(register):
    from memory.compose import Block, Composition

    name = register(
        Composition("pin_recent", (Block("pinned", first=3), Block("recent", count=5)))
    ).name
    ev = FactsEvaluator.from_config(SurvivalConfig(probe_turns=(12, 30)), counter=COUNTER)
    result = tune(ev, Target(1.0), strategies=("window", name))
    assert_winner_is_cheapest_that_met(result)
    # FinCoach's facts are all stated at turn 1: pin it, keep no recent turns
    assert result.winner.choice.name == name
    assert result.winner.choice.params == {"pinned_first": 1, "recent_k": 0}
    window = min((t for t in result.trials if t.meets and t.choice.name == "window"),
                 key=lambda t: t.tokens_per_turn)  # fmt: skip
    assert result.winner.tokens_per_turn < window.tokens_per_turn


def test_a_first_size_that_misses_at_its_most_room_is_retried_with_the_others_roomy(register):
    from memory.compose import Block, Composition

    # 50 tokens of recent turns hold nothing, whatever recent_k is: the budget must grow too
    name = register(Composition("tight_recent", (Block("recent", count=5, budget=50),))).name
    ev = FactsEvaluator.from_config(SurvivalConfig(probe_turns=(12,)), counter=COUNTER)
    result = tune(ev, Target(1.0), strategies=(name,))
    assert_winner_is_cheapest_that_met(result)
    params = result.winner.choice.params
    assert params["recent_k"] == 11 and params["recent_budget"] > 50
    every_k = [t for t in result.trials if t.choice.params.get("recent_budget", 50) == 50]
    assert every_k and not any(t.meets for t in every_k)


def test_questions_cost_adds_a_summary_strategys_upkeep_per_turn(small_world):
    from memory.registry import create
    from memory.standins import ExtractiveSummariser

    conv = small_world.conversation
    choice = LaneSpec("summary_buffer", {"budget": 1500})
    row = summarise("s", "summary_buffer", run_setting(conv, choice, counter=COUNTER))
    strategy = create("summary_buffer", conv.system, counter=COUNTER,
                      upkeep=Upkeep(ExtractiveSummariser()), params=choice.params)  # fmt: skip
    upkeep = sum(
        call.request.tokens.content for user, reply in conv.turns
        for call in strategy.commit(user, reply)
    )  # fmt: skip
    assert upkeep > 0
    cost = small_world.measure(choice).cost
    assert cost >= row.mean_tokens + upkeep / len(conv.turns) - 1e-9
    plain = LaneSpec("token_window", {"budget": 1500})  # no upkeep: the mean tokens alone
    assert small_world.measure(plain).cost == pytest.approx(
        summarise("t", "token_window", run_setting(conv, plain, counter=COUNTER)).mean_tokens
    )
