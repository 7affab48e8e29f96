"""Probes planted from the user's own log: the facts it states, probed in place."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engines.survival import (
    SurvivalConfig,
    SurvivalConfigError,
    conversation_config,
    default_probe_turns,
    run_survival,
    script,
    suggest_facts,
)
from engines.transcripts import parse
from memory.lane_spec import LaneSpec
from memory.standins import stated_facts

LOG = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "own_log.json"


def log():
    return parse(LOG, name=LOG.name)


def test_the_matcher_finds_names_amounts_dates_numbers_and_preferences():
    found = [(f.kind, f.key, f.value) for f in stated_facts(
        "Hi! I'm Ravi. I earn ₹90,000 a month and my rent is $2,400. My flight is on "
        "March 14, 2025 and I have 3 kids. I prefer window seats. My favourite city is Kyoto."
    )]  # fmt: skip
    assert found == [
        ("name", "name", "Ravi"),
        ("amount", "monthly_salary", "₹90,000"),
        ("amount", "rent", "$2,400"),
        ("date", "date", "March 14, 2025"),
        ("number", "number", "3"),
        ("preference", "prefers", "window seats"),
        ("preference", "favourite_city", "Kyoto"),
    ]


def test_bare_number_words_and_capitalised_verbs_are_not_facts():
    assert stated_facts("I'm Going to miss one EMI, maybe two.") == []


def test_suggestions_name_the_turn_each_fact_was_stated_at():
    got = [(s.fact.plant_turn, s.kind, s.fact.answers, s.fact.probe) for s in suggest_facts(log())]
    assert got[:3] == [
        (1, "name", ("Meera",), "What is my name?"),
        (2, "amount", ("₹1,45,000",), "What is my salary?"),
        (4, "amount", ("₹32,000",), "How much is my rent?"),
    ]
    assert (6, "preference", ("low-risk investments",)) in [g[:3] for g in got]
    assert (7, "date", ("14 February 2026",)) in [g[:3] for g in got]
    for s in suggest_facts(log()):  # the probe never gives the answer away
        assert s.fact.answers[0] not in s.fact.probe
        assert s.fact.answers[0] in s.fact.plant


def test_the_log_is_played_in_place_with_its_own_replies():
    t = log()
    config = conversation_config(t, [s.fact for s in suggest_facts(t)])
    turns = script(config)
    assert [st.user for st in turns] == [u for u, _ in t.turns[: config.last_turn - 1]]
    assert [st.fixed_reply for st in turns] == [r for _, r in t.turns[: config.last_turn - 1]]
    assert [st.turn for st in turns if st.kind == "plant"] == [1, 2, 4, 6, 7, 9]
    assert config.probe_turns == default_probe_turns(12, config.facts) == (2, 5, 8, 10, 13)
    again = SurvivalConfig.from_dict(config.to_dict())
    assert again.in_place and script(again) == turns


def test_a_window_loses_the_early_facts_of_the_log_and_full_keeps_them():
    t = log()
    config = conversation_config(
        t,
        [s.fact for s in suggest_facts(t)],
        strategies=(LaneSpec("full"), LaneSpec("window", {"k": 3})),
    )
    rows = {(r.strategy, r.fact, r.probe_turn): r.in_payload for r in run_survival(config).rows}
    assert all(v for (s, _, _), v in rows.items() if s == "full")
    assert rows[("window (k=3)", "name", 2)] and not rows[("window (k=3)", "name", 5)]
    assert rows[("window (k=3)", "date", 10)] and not rows[("window (k=3)", "date", 13)]


def test_a_fact_at_the_wrong_turn_or_a_probe_past_the_log_is_refused():
    t = log()
    name = suggest_facts(t)[0].fact
    with pytest.raises(SurvivalConfigError, match="turn 3 of the conversation"):
        conversation_config(t, [replace(name, plant_turn=3)])
    with pytest.raises(SurvivalConfigError, match="the conversation has 12 turns"):
        conversation_config(t, [name], probe_turns=(20,))


def test_with_a_model_the_log_keeps_its_recorded_replies_and_probes_are_answered():
    from memory.standins import StaticReply

    sent = []

    def echo(request, on_delta=None):
        sent.append(request)
        said = [m.content for m in request.messages[:-1] if m.role == "user"]
        return StaticReply(" ".join(said) or "I don't know.", model="echo")

    t = log()
    config = conversation_config(
        t,
        [s.fact for s in suggest_facts(t)][:3],
        probe_turns=(5,),
        strategies=(LaneSpec("window", {"k": 2}),),
        replies="generated",
    )
    result = run_survival(config, send=echo)
    rows = {r.fact: (r.in_payload, r.recalled) for r in result.rows}
    assert rows == {"name": (False, False), "monthly_salary": (False, False), "rent": (True, True)}
    assert result.mode == "model"
    probe = next(r for r in sent if r.messages[-1].content == "How much is my rent?")
    replies = [m.content for m in probe.messages if m.role == "assistant"]
    assert replies == [r for _, r in t.turns[2:4]]  # the log's own replies, not generated ones
