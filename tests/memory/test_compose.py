"""Compositions: validation, the JSON form, block budgets, give-way rules and the registry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.compose import KINDS, Block, Composition
from memory.errors import ContextOverflow, DuplicateStrategy, InvalidParameter
from memory.maintenance import Upkeep
from memory.registry import (
    REGISTRY,
    SPARE_COLORS,
    builtin_composition,
    create,
    register_composition,
    unregister_composition,
)
from memory.standins import RuleExtractor, SizedExtractor, SizedSummariser
from memory.strategies.composed import Composed, compose_strategy
from memory.tokens import TokenCounter
from memory.types import Request
from tests.memory.compositions import MINE
from tests.memory.conftest import FakeSummariser

COUNTER = TokenCounter("o200k_base")
SYSTEM = "You are FinCoach, a careful personal finance assistant."


def run(comp: Composition, **models: Any) -> Composed:
    models.setdefault("summarize", FakeSummariser())
    models.setdefault("extract", RuleExtractor())
    return compose_strategy(comp, SYSTEM, counter=COUNTER, upkeep=Upkeep(**models))


def words(n: int, word: str = " la") -> str:
    return COUNTER.text_of_tokens(n, word=word)


def parts(request: Request) -> dict[str, Any]:
    assert request.account is not None
    return {p.name: p for p in request.account.parts}


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Block("memories"), "unknown block kind 'memories'"),
        (lambda: Block("recent", count=-1), "count cannot be below 0"),
        (lambda: Block("recent", budget=-5), "budget cannot be below 0"),
        (lambda: Block("recent", top_k=3), "takes no 'top_k'"),
        (lambda: Block("pinned"), "pins nothing"),
        (lambda: Block("pinned", turns=(0,)), "turn numbers from 1"),
        (lambda: Block("summary", policy="sometimes"), "policy is one of every_turn, threshold"),
        (lambda: Block("summary", trigger=0.4, fold_to=0.6), "fold_to (0.6) must be at most"),
        (lambda: Block("retrieved", share=0.95), "share is a number in [0.0, 0.9]"),
        (
            lambda: Composition("x", (Block("recent"), Block("recent", count=2))),
            "two 'recent' blocks",
        ),
        (lambda: Composition("x", ()), "has no blocks"),
        (lambda: Composition("Bad Name", (Block("recent"),)), "lowercase letters"),
        (lambda: Composition("x", (Block("recent"),), budget=-1), "budget cannot be below 1"),
        (
            lambda: Composition(
                "x", (Block("pinned", first=1), Block("recent")), give_way=("pinned",)
            ),
            "pinned turns never give way",
        ),
        (
            lambda: Composition("x", (Block("recent"),), give_way=("summary",)),
            "give_way names 'summary', which is not one of its blocks",
        ),
        (
            lambda: Composition("x", (Block("summary", policy="threshold"), Block("recent"))),
            "a 'threshold' summary folds at a share of the overall budget",
        ),
        (
            lambda: Composition("x", (Block("retrieved", share=0.3),)),
            "share is of the overall budget",
        ),
    ],
)
def test_invalid_compositions_are_refused_with_a_specific_message(make, message):
    with pytest.raises(InvalidParameter) as info:
        make()
    assert message in str(info.value)


def test_a_budget_below_the_system_prompt_is_refused_when_it_runs():
    comp = Composition("tiny", (Block("recent"),), budget=COUNTER.count(SYSTEM))
    with pytest.raises(InvalidParameter, match="not larger than the system prompt"):
        run(comp)


def test_a_summary_block_needs_a_summariser_and_a_facts_block_an_extractor():
    with pytest.raises(InvalidParameter, match="needs a summariser"):
        compose_strategy(Composition("s", (Block("summary"),)), SYSTEM, counter=COUNTER)
    with pytest.raises(InvalidParameter, match="needs an extractor"):
        compose_strategy(Composition("f", (Block("facts"),)), SYSTEM, counter=COUNTER)


# --- the JSON form -----------------------------------------------------------------------------


@st.composite
def compositions(draw: st.DrawFn) -> Composition:
    """Any valid composition: a random set of blocks, options, budgets and give-way order."""
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5, unique=True))
    budget = draw(st.none() | st.integers(40, 3000))
    blocks = []
    small = st.none() | st.integers(0, 600)
    for kind in kinds:
        options: dict[str, Any] = {"budget": draw(small)}
        if kind == "pinned":
            options["turns"] = tuple(draw(st.lists(st.integers(1, 8), max_size=3, unique=True)))
            options["first"] = draw(st.integers(0 if options["turns"] else 1, 3))
        elif kind == "summary":
            threshold = budget is not None and draw(st.booleans())
            options["policy"] = "threshold" if threshold else "every_turn"
            options["trigger"] = draw(st.floats(0.1, 1.0))
            options["fold_to"] = draw(st.floats(0.05, options["trigger"]))
            options["placement"] = draw(st.sampled_from(("system", "message")))
            options["note"] = draw(st.booleans())
            if options["budget"] == 0:
                options["budget"] = 1
        elif kind == "retrieved":
            options["top_k"] = draw(st.none() | st.integers(0, 5))
            options["share"] = draw(st.none() | st.floats(0.0, 0.9)) if budget else None
            options["neighbours"] = draw(st.floats(0.0, 1.0))
        elif kind == "recent":
            options["count"] = draw(st.none() | st.integers(0, 5))
        blocks.append(Block(kind, **options))
    movable = [k for k in kinds if k != "pinned"]
    give_way = draw(
        st.permutations(movable).flatmap(lambda p: st.integers(0, len(p)).map(lambda n: p[:n]))
    )
    return Composition("generated", tuple(blocks), budget=budget, give_way=tuple(give_way))


@given(comp=compositions())
def test_json_round_trips_every_composition(comp):
    text = comp.to_json()
    assert json.loads(text)["format"] == 1
    assert Composition.from_json(text) == comp


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "the composition nests too deeply"),  # no RecursionError
        ("[]", "a composition is a JSON object, got list"),
        ('{"name": "x", "blocks": []}', "this version reads format 1, got None"),
        ('{"format": 2, "name": "x", "blocks": []}', "got 2"),
        ('{"format": 1, "blocks": []}', "'name' field is missing"),
        ('{"format": 1, "name": "x", "blocks": {}}', "composition blocks: a list"),
        ('{"format": 1, "name": "x", "colour": "red", "blocks": []}', "unknown field 'colour'"),
        ('{"format": 1, "name": "x", "blocks": [{"kind": "nope"}]}', "blocks[0].kind"),
        (
            '{"format": 1, "name": "x", "blocks": [{"kind": "recent", "top_k": 2}]}',
            "blocks[0] (recent): unknown field 'top_k'",
        ),
        (
            '{"format": 1, "name": "x", "blocks": [{"kind": "recent", "count": "3"}]}',
            "blocks[0]: the 'recent' block: count is a whole number, got '3'",
        ),
        (
            '{"format": 1, "name": "x", "blocks": [{"kind": "pinned", "turns": 1}]}',
            "blocks[0].turns: a list of turn numbers",
        ),
        ('{"format": 1, "name": "x", "give_way": "recent", "blocks": []}', "give_way: a list"),
    ],
)
def test_malformed_json_names_the_field(text, message):
    before = dict(REGISTRY)
    with pytest.raises(InvalidParameter) as info:
        Composition.from_json(text)
    assert message in str(info.value)
    assert before == REGISTRY  # nothing registered


# --- block budgets and the overall budget --------------------------------------------------------

conversations = st.lists(
    st.tuples(
        st.builds(
            lambda head, n, word: head + words(n, word),
            st.sampled_from(["I'm Asha. ", "My rent is ₹25,000. ", "loan ", "", "SIP "]),
            st.integers(1, 300),
            st.sampled_from([" rent", " loan", " la", " fund"]),
        ),
        st.builds(words, st.integers(0, 200)),
    ),
    min_size=1,
    max_size=9,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    comp=compositions(),
    conversation=conversations,
    summary_tokens=st.integers(1, 300),
    fact_tokens=st.integers(0, 200),
)
def test_no_block_exceeds_its_budget_and_the_total_never_exceeds_the_overall(
    comp, conversation, summary_tokens, fact_tokens
):
    try:
        strategy = run(
            comp,
            summarize=SizedSummariser(COUNTER, summary_tokens),
            extract=SizedExtractor(COUNTER, fact_tokens),
        )
    except InvalidParameter:
        assume(False)
        return
    for user, reply in conversation:
        try:
            request = strategy.prepare(user)
        except ContextOverflow as overflow:
            assert comp.budget is not None and overflow.needed > comp.budget
            continue
        got = parts(request)
        for block in comp.blocks:
            if block.budget is None:
                continue
            if block.kind == "summary":
                summary = request.account.summary if request.account else None
                assert COUNTER.count(summary or "") <= block.budget
            else:
                assert got[block.kind].tokens <= block.budget, block.kind
        if comp.budget is not None:
            assert request.tokens.content <= comp.budget
        strategy.commit(user, reply)


# --- give-way rules ------------------------------------------------------------------------------


def two_ways(give_way: tuple[str, ...]) -> Request:
    """A retrieved + recent composition in a budget too tight for both; the message matches
    turn 1 (about a loan), the later turns are filler."""
    comp = Composition(
        "tight",
        (Block("retrieved", neighbours=0.0), Block("recent")),
        budget=COUNTER.count(SYSTEM) + 260,
        give_way=give_way,
    )
    strategy = run(comp)
    strategy.commit("My home loan EMI is 31,000 rupees." + words(80, " loan"), "Noted.")
    for _ in range(4):
        strategy.commit("Tell me something." + words(80), "Sure." + words(5))
    return strategy.prepare("What is my loan EMI?")


def test_the_block_named_first_gives_way_first():
    recent_first = parts(two_ways(("recent", "retrieved")))
    retrieved_first = parts(two_ways(("retrieved", "recent")))
    # when recent turns give way first, the loan turn is retrieved and fewer recent turns fit
    assert recent_first["retrieved"].turns == (1,)
    assert len(recent_first["recent"].turns) < len(retrieved_first["recent"].turns)
    # when retrieved turns give way first, the recent turns fill the budget
    assert retrieved_first["retrieved"].turns == ()
    assert retrieved_first["recent"].turns == (4, 5)  # two filler turns fit


def facts_or_summary(give_way: tuple[str, ...]) -> Request:
    comp = Composition(
        "crowded",
        # grounded=False: the sized extractor writes filler, not values the turn states
        (Block("facts", grounded=False), Block("summary"), Block("recent")),
        budget=COUNTER.count(SYSTEM) + 200,
        give_way=give_way,
    )
    strategy = run(
        comp, summarize=SizedSummariser(COUNTER, 120), extract=SizedExtractor(COUNTER, 120)
    )
    strategy.commit("I'm Asha.", "Hello Asha.")
    return strategy.prepare("What do you know about me?")


@pytest.mark.parametrize(("first", "kept"), [("facts", "summary"), ("summary", "facts")])
def test_summary_and_facts_give_way_in_the_order_named(first, kept):
    request = facts_or_summary((first, "recent"))
    got = parts(request)
    assert got[first].tokens == 0
    assert got[kept].tokens > 0
    assert request.account is not None
    assert any(f"the {first} block gave way" in n for n in request.account.notes)


def test_pinned_turns_never_give_way_and_overflow_names_them():
    comp = Composition(
        "pinned_first",
        (Block("pinned", first=1), Block("recent")),
        budget=COUNTER.count(SYSTEM) + 150,
    )
    strategy = run(comp)
    strategy.commit("My goal:" + words(100, " fund"), "ok")
    strategy.commit("filler" + words(50), "ok")
    request = strategy.prepare("and?")
    assert request.messages[0].content.startswith("My goal:")
    assert parts(request)["pinned"].turns == (1,)
    assert parts(request)["recent"].turns == ()  # turn 2 gave way, turn 1 did not
    before = strategy.snapshot()
    with pytest.raises(ContextOverflow, match="the system prompt, the pinned turns and the new"):
        strategy.prepare("why?" + words(60))
    assert strategy.snapshot() == before


def test_every_turn_summary_spares_the_last_k_turns_of_a_recent_block():
    comp = Composition("notes", (Block("summary"), Block("recent", count=2)))
    strategy = run(comp)
    for i in range(1, 6):
        strategy.commit(f"message {i}", f"reply {i}")
    request = strategy.prepare("next")
    assert request.account is not None
    assert request.account.summarised_turns == (1, 2, 3)
    assert parts(request)["recent"].turns == (4, 5)


# --- the registry --------------------------------------------------------------------------------


def test_a_registered_composition_is_a_strategy_like_any_other(register):
    spec = register(MINE)
    assert REGISTRY["my_memory"] is spec and spec.composition == MINE
    names = [p.name for p in spec.params]
    assert names == [
        "budget",
        "pinned_first",
        "summary_budget",
        "summary_placement",
        "summary_note",
        "recent_k",
    ]
    assert spec.defaults()["recent_k"] == 3
    assert spec.label() == "my_memory (budget=900, recent_k=3)"
    assert spec.needs_model and spec.title == "My memory"
    builtin_colors = {s.color for s in REGISTRY.values() if s.composition is None}
    assert spec.color in SPARE_COLORS and spec.color not in builtin_colors
    strategy = create(
        "my_memory",
        SYSTEM,
        counter=COUNTER,
        upkeep=Upkeep(FakeSummariser()),
        params={"recent_k": 1},
    )
    assert isinstance(strategy, Composed) and strategy.comp.block("recent").count == 1
    with pytest.raises(InvalidParameter, match="has no parameter top_k"):
        create(
            "my_memory",
            SYSTEM,
            counter=COUNTER,
            upkeep=Upkeep(FakeSummariser()),
            params={"top_k": 1},
        )
    with pytest.raises(DuplicateStrategy, match="already registered"):
        register_composition(MINE)


def test_a_composition_cannot_take_a_builtin_name_nor_unregister_one():
    with pytest.raises(DuplicateStrategy):
        register_composition(Composition("window", (Block("recent"),)))
    with pytest.raises(InvalidParameter, match="built-in"):
        unregister_composition("window")
    assert "window" in REGISTRY


def test_builtin_compositions_take_the_builtins_parameters():
    comp = builtin_composition("hybrid", {"budget": 1000, "recall_share": 0.2})
    assert comp.budget == 1000
    assert comp.block("retrieved") == Block("retrieved", share=0.2)
    assert comp.yield_order() == ("recent", "retrieved", "summary", "facts")
    assert builtin_composition("window", {"k": 5}).block("recent") == Block("recent", count=5)


def test_snapshot_restore_and_fork_keep_a_composition_state():
    comp = Composition("keeps", (Block("retrieved", top_k=1), Block("recent", count=1)))
    strategy = run(comp)
    strategy.commit("My SIP is 5,000 rupees", "ok")
    strategy.commit("weather", "sunny")
    strategy.commit("cricket", "fun")
    restored = run(comp)
    restored.restore(strategy.snapshot())
    question = "How much is my SIP?"
    assert restored.prepare(question).messages == strategy.prepare(question).messages
    fork = strategy.fork()
    fork.commit("My SIP is now 9,000", "ok")
    assert parts(strategy.prepare(question))["retrieved"].turns == (1,)


@pytest.mark.parametrize("summary_first", [True, False])
def test_a_summary_named_before_the_recent_turns_gives_way_before_they_shrink(summary_first):
    comp = Composition(
        "order",
        (Block("summary"), Block("recent", count=2)),
        budget=COUNTER.count(SYSTEM) + 260,
        give_way=("summary", "recent") if summary_first else ("recent", "summary"),
    )
    strategy = run(comp, summarize=SizedSummariser(COUNTER, 100))
    for _ in range(3):
        strategy.commit("tell me more" + words(90), "ok")
    got = parts(strategy.prepare("and?"))
    # summary (~106 tokens) + two recent turns (~190) + message do not fit together
    if summary_first:
        assert got["summary"].tokens == 0 and got["recent"].turns == (2, 3)
    else:
        assert got["summary"].tokens > 0 and got["recent"].turns == (3,)


def test_a_single_composition_file_round_trips_and_bad_files_say_why():
    from memory.compose import read_composition

    assert read_composition(MINE.to_json().encode("utf-8")) == MINE
    assert read_composition("\ufeff" + MINE.to_json()) == MINE
    for data, message in [
        (b"\xff\xfe{", "x.json is not UTF-8 text (byte 0)"),
        (b"  ", "x.json is empty"),
        (b'{"format": 1, "name": "x", "blocks": [{"kind": "recent", "count": -2}]}', "count"),
    ]:
        with pytest.raises(InvalidParameter) as info:
            read_composition(data, source="x.json")
        assert message in str(info.value) and "x.json" in str(info.value)


def test_the_readme_example_is_a_valid_composition():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## Composer.*?```jsonc\n(.*?)\n```", text, re.S)
    assert found, "the README lost its Composer example"
    comp = Composition.from_json(found.group(1))
    assert [b.kind for b in comp.blocks] == ["pinned", "summary", "retrieved", "recent"]
    strategy = run(comp)
    strategy.commit("My plan: retire at 50.", "Noted.")
    assert strategy.prepare("What was my plan?").messages[0].content == "My plan: retire at 50."
