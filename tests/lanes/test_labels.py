"""Lane labels: unique in a session, saying what differs; the bare name when nothing does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lanes.labels import LABEL_LIMIT, LaneIdentity, lane_labels, strategy_of
from memory.registry import DEFAULT_LANES, REGISTRY


def test_lanes_of_different_strategies_keep_their_strategy_names():
    assert lane_labels([LaneIdentity(n) for n in DEFAULT_LANES]) == list(DEFAULT_LANES)


def test_a_strategy_twice_is_labelled_with_what_differs():
    labels = lane_labels(
        [
            LaneIdentity("summary_buffer", {"budget": 370}),
            LaneIdentity("summary_buffer", {"budget": 370}, "gpt-4o-mini", "openai"),
            LaneIdentity("summary_buffer", {"budget": 900}, "gpt-4o-mini", "openai"),
        ]
    )
    assert labels == [
        "summary_buffer (budget=370)",
        "summary_buffer (budget=370) · gpt-4o-mini",
        "summary_buffer (budget=900) · gpt-4o-mini",
    ]


def test_the_same_model_on_two_endpoints_names_the_endpoint():
    labels = lane_labels(
        [
            LaneIdentity("full", model="llama3", endpoint="ollama"),
            LaneIdentity("full", model="llama3", endpoint="vllm"),
        ]
    )
    assert labels == ["full · llama3 (ollama)", "full · llama3 (vllm)"]


def test_two_identical_lanes_are_refused_with_a_clear_message():
    with pytest.raises(ValueError, match=r"would be identical \(window · m\)"):
        lane_labels([LaneIdentity("window", model="m"), LaneIdentity("window", model="m")])


lane = st.builds(
    LaneIdentity,
    st.sampled_from(sorted(REGISTRY)),
    st.fixed_dictionaries({}),
    st.one_of(st.none(), st.sampled_from(["gpt-4o", "gpt-4o-mini", "x" * 80])),
    st.sampled_from(["openai", "groq"]),
)


@given(st.lists(lane, min_size=1, max_size=8))
def test_labels_are_unique_fit_the_store_and_name_their_strategy(lanes):
    try:
        labels = lane_labels(lanes)
    except ValueError as exc:
        assert "would be identical" in str(exc)
        return
    assert len(set(labels)) == len(labels) == len(lanes)
    for label, one in zip(labels, lanes, strict=True):
        assert len(label) <= LABEL_LIMIT
        assert strategy_of(label, REGISTRY) == one.strategy
