"""The fact-survival page's settings as data (ui/survival_form.py): what an applied form
becomes, the plan line and the results table, without Streamlit."""

from __future__ import annotations

import json

from engines.survival import DEFAULT_FACTS, EXAMPLE_FACTS, SurvivalConfig, run_survival
from memory.lane_spec import LaneSpec
from ui.survival_form import (
    MAIN_MODEL,
    NO_MODEL,
    OWN,
    FormValues,
    apply,
    build_config,
    default_settings,
    facts_rows,
    lane_choices,
    plan_line,
    results_table,
)

LANES = [LaneSpec("window", {"k": 3}), LaneSpec("full")]


def form(settings, **changes) -> FormValues:
    values = {
        "edited": facts_rows(settings["facts"]),
        "facts_file": None,
        "add_examples": False,
        "use_facts": list(settings["use_facts"]),
        "probe_turns": "2, 4",
        "strategies": list(settings["strategies"]),
        "variants": "",
        "system_prompt": "You help.",
        "filler": "builtin",
        "transcript": None,
        "replies": "fixed",
        "seed": 3,
        "model": NO_MODEL,
        "probe_tokens": 32,
        "parallel": False,
    }
    return FormValues(**{**values, **changes})


def test_the_main_page_lanes_come_first_then_every_other_strategy():
    choices = lane_choices(LANES)
    assert choices[:2] == LANES
    names = [c.name for c in choices]
    assert len(names) == len(set(names)) and "summary" in names
    settings = default_settings(LANES, parallel=True)
    assert settings["strategies"] == [c.label for c in LANES] and settings["parallel"]


def test_an_applied_form_becomes_the_settings_and_a_config():
    settings = default_settings(LANES, parallel=True)
    new, errors, warnings = apply(settings, form(settings, add_examples=True))
    assert errors == warnings == []
    assert new["probe_turns"] == "2, 4" and new["seed"] == 3 and new["parallel"] is False
    added = [f.key for f in EXAMPLE_FACTS]
    assert [f["key"] for f in new["facts"]][-len(added) :] == added
    assert new["use_facts"][-len(added) :] == added  # new facts are probed at once
    choices = {c.label: c for c in lane_choices(LANES)}
    config = build_config(new, choices)
    assert config.probe_turns == (2, 4) and len(config.facts) == len(DEFAULT_FACTS) + 2


def test_a_file_that_cannot_be_read_is_named_and_the_rest_is_kept():
    settings = default_settings(LANES, parallel=True)
    bad = form(
        settings,
        facts_file=("facts <b>.json", b"{not json"),
        transcript=("talk.txt", b"\xff\xfe\x00bad"),
        probe_turns="5",
    )
    new, errors, _ = apply(settings, bad)
    assert len(errors) == 2
    assert errors[0].startswith("Could not read facts <b>.json") and "talk.txt" in errors[1]
    assert new["facts"] == settings["facts"] and new["probe_turns"] == "5"
    assert new["filler_turns"] is None


def test_a_transcript_is_filler_except_in_own_log_mode():
    settings = default_settings(LANES, parallel=True)
    text = b"Hi there\nWhat about SIPs?\n"
    new, errors, warnings = apply(settings, form(settings, filler="import",
                                                 transcript=("t.txt", text)))  # fmt: skip
    assert errors == warnings == []
    assert [t["user"] for t in new["filler_turns"]] == ["Hi there", "What about SIPs?"]
    assert new["filler_name"] == "t.txt"
    _, _, warnings = apply(settings, form(settings, filler=OWN, transcript=("t.txt", text)))
    assert warnings and "own log" in warnings[0]


def test_the_plan_line_and_the_results_table():
    settings = {**default_settings(LANES, parallel=False), "model": MAIN_MODEL}
    config = SurvivalConfig(probe_turns=(2, 4)).validate()
    est = {**json.loads(json.dumps(_estimate(config))), "rough_s": 600.0}
    assert "roughly 14 min on the embedded model" in plan_line(config, est, settings,
                                                               embedded=True)  # fmt: skip
    assert "embedded" not in plan_line(config, est, settings, embedded=False)
    result = run_survival(config)
    table = results_table(result)
    assert len(table) == len(result.rows) and {"verdict", "N", "fact"} <= set(table.columns)


def _estimate(config):
    from engines.survival import estimate

    return estimate(config, with_model=True, assumed_reply_tokens=64).as_dict()
