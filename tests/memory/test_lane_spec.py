"""The one lane spec: its three label rules, its saved forms, and no second type beside it.

Session labels are unique in a session, say what differs, and are the bare name when
nothing does."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.errors import InvalidParameter
from memory.lane_spec import LABEL_LIMIT, LaneSpec, labelled, lane_labels, strategy_of
from memory.registry import DEFAULT_LANES, REGISTRY

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Own:
    """A lane's own provider as labels see it: a model on an endpoint."""

    model: str
    endpoint: str = "openai"

    def lane_model(self) -> tuple[str, str]:
        return self.model, self.endpoint


def spec_on(name, params=None, model=None, endpoint="openai"):
    return LaneSpec(name, params or {}, provider=Own(model, endpoint) if model else None)


def test_lanes_of_different_strategies_keep_their_strategy_names():
    assert lane_labels([LaneSpec(n) for n in DEFAULT_LANES]) == list(DEFAULT_LANES)


def test_a_strategy_twice_is_labelled_with_what_differs():
    labels = lane_labels(
        [
            spec_on("summary_buffer", {"budget": 370}),
            spec_on("summary_buffer", {"budget": 370}, "gpt-4o-mini"),
            spec_on("summary_buffer", {"budget": 900}, "gpt-4o-mini"),
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
            spec_on("full", model="llama3", endpoint="ollama"),
            spec_on("full", model="llama3", endpoint="vllm"),
        ]
    )
    assert labels == ["full · llama3 (ollama)", "full · llama3 (vllm)"]


def test_two_identical_lanes_are_refused_with_a_clear_message():
    with pytest.raises(ValueError, match=r"would be identical \(window · m\)"):
        lane_labels(
            [spec_on("window", model="m", endpoint=""), spec_on("window", model="m", endpoint="")]
        )


lane = st.builds(
    spec_on,
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
        assert strategy_of(label, REGISTRY) == one.name


def test_the_three_labels_of_one_spec():
    window = LaneSpec("window", {"k": 5})
    assert window.label == "window (k=5)"  # the registry's: tables, charts, the CLI
    assert window.sized_label == "window (k=5)"  # what differs from the defaults
    assert LaneSpec("window", {"k": REGISTRY["window"].defaults()["k"]}).sized_label == "window"
    budget = LaneSpec("token_window", shares={"budget": 0.05})
    assert budget.sized_label == "token_window (budget=5.0% of full)"  # recall rows
    assert lane_labels([window]) == ["window"]  # alone in its session: the bare name


def test_a_share_is_sized_from_the_full_buffer_never_below_the_floor():
    budget = LaneSpec("token_window", shares={"budget": 0.05})
    assert budget.resolve(10_000) == LaneSpec("token_window", {"budget": 500})
    assert budget.resolve(100).params == {"budget": 200}


@pytest.mark.parametrize(
    ("saved", "expected"),
    [
        # a sweep plan's or benchmark's setting
        (
            {"name": "hybrid", "params": {"recall_share": 0.5}, "shares": {"budget": 0.1}},
            LaneSpec("hybrid", {"recall_share": 0.5}, shares={"budget": 0.1}),
        ),
        # a tuner's or composer's choice
        (
            {"name": "window", "params": {"k": 3}, "label": "window (k=3)"},
            LaneSpec("window", {"k": 3}),
        ),
        # a saved session's lane: its label in the session is kept, its provider is not read
        (
            {"strategy": "full", "params": {}, "label": "full · m", "provider": {"model": "m"}},
            LaneSpec("full", lane_label="full · m"),
        ),
    ],
)
def test_every_saved_form_reads_back(saved, expected):
    assert LaneSpec.from_dict(saved) == expected


@given(st.sampled_from(sorted(REGISTRY)), st.sampled_from([{}, {"budget": 0.25}]))
def test_the_saved_form_round_trips_for_every_strategy(name, shares):
    one = LaneSpec(name, REGISTRY[name].defaults(), shares=shares)
    assert LaneSpec.from_dict(one.as_dict()) == one


def test_a_saved_lane_without_a_strategy_is_refused_by_name():
    with pytest.raises(InvalidParameter, match="names no strategy"):
        LaneSpec.from_dict({"params": {"k": 3}})


def test_labelled_keeps_given_labels_and_refuses_a_foreign_one():
    out = labelled([LaneSpec("full", lane_label="full (mine)"), LaneSpec("window")])
    assert [s.lane_label for s in out] == ["full (mine)", "window"]
    with pytest.raises(ValueError, match="starts with its strategy's name"):
        labelled([LaneSpec("full", lane_label="window")])


OLD_TYPES = {"StrategyChoice", "LaneIdentity", "LaneChoice", "Setting"}


def test_no_second_lane_spec_type_is_defined_in_production_code():
    """'Which strategy, with which parameters, on which model' is LaneSpec alone."""
    found = []
    for path in sorted(ROOT.glob("*/**/*.py")) + sorted(ROOT.glob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in {".venv", "tests", "test-artifacts", "data"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name in OLD_TYPES | {"LaneSpec"}:
                found.append(f"{rel}:{node.name}")
            elif isinstance(node, ast.Name) and node.id in OLD_TYPES:
                found.append(f"{rel}:{node.id}")
    assert found == ["memory/lane_spec.py:LaneSpec"]
    assert not (ROOT / "memory" / "choices.py").exists()
    assert not (ROOT / "lanes" / "labels.py").exists()
