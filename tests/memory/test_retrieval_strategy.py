"""The retrieval strategy and hybrid's retrieved block: budget, order, account, state."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.errors import InvalidParameter
from tests.memory.conftest import with_fakes

SYSTEM = "You are a helpful assistant."
TOPICS = ["rent", "gym locker code", "Priya's dog", "salary", "the lease", "weekend plans"]


def make(name, counter, **params):
    return with_fakes(name, SYSTEM, counter, **params)


def users(request):
    return [m.content for m in request.messages if m.role == "user"]


def test_retrieved_turns_come_in_conversation_order_before_the_recent_ones(counter):
    s = make("retrieval", counter, k=1, recall_budget=0, top_k=5, neighbours=0.0)
    s.commit("My gym locker code is 4471", "Noted")
    for i in range(6):
        s.commit(f"Small talk number {i} about weather", "ok")
    s.commit("The gym moved the lockers, code still works", "Good")
    s.commit("Anything else?", "No")
    r = s.prepare("What is my gym locker code?")
    assert r.account.retrieved_turns == (1, 8)
    assert r.account.kept_turns == (1, 8, 9)
    assert users(r)[:2] == [
        "My gym locker code is 4471",
        "The gym moved the lockers, code still works",
    ]
    assert r.account.dropped_turns == tuple(range(2, 8))
    assert any(n.startswith("turn 1: retrieved, score") for n in r.account.notes)


def test_the_retrieved_block_stays_within_its_token_budget(counter):
    s = make("retrieval", counter, k=0, recall_budget=60, top_k=200)
    for i in range(30):
        s.commit(
            f"{'My rent' if i % 3 == 0 else 'Other'} note {i}: " + counter.text_of_tokens(15),
            "ok " + counter.text_of_tokens(5),
        )
    r = s.prepare("rent")
    kept = r.account.retrieved_turns
    assert kept and s.history.tokens(list(kept)) <= 60
    assert s.history.tokens(list(kept)) + s.history.tokens([1]) > 60  # and it is filled
    assert all(t % 3 == 1 for t in kept)  # only the rent notes
    assert f"retrieved block: {s.history.tokens(list(kept))} of 60 tokens" in r.account.notes


def test_new_parameters_are_checked(counter):
    with pytest.raises(InvalidParameter, match="recall_budget"):
        make("retrieval", counter, recall_budget=-1)
    with pytest.raises(InvalidParameter, match="neighbours"):
        make("retrieval", counter, neighbours=2)
    with pytest.raises(InvalidParameter, match="recall_share"):
        make("hybrid", counter, recall_share=0.95)


conversations = st.lists(
    st.tuples(st.sampled_from(TOPICS), st.text(max_size=30), st.integers(0, 40)).map(
        lambda t: (f"About {t[0]}: {t[1]}".strip() or "x", "reply " * t[2])
    ),
    min_size=0,
    max_size=25,
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    turns=conversations,
    k=st.integers(0, 4),
    top_k=st.integers(1, 30),
    recall_budget=st.integers(0, 400),
    neighbours=st.sampled_from([0.0, 0.25, 1.0]),
    query=st.sampled_from(TOPICS),
)
def test_retrieval_request_is_consistent_and_replays(
    counter, turns, k, top_k, recall_budget, neighbours, query
):
    s = make(
        "retrieval", counter, k=k, top_k=top_k, recall_budget=recall_budget, neighbours=neighbours
    )
    for user, reply in turns:
        s.commit(user, reply)
    before = s.snapshot()
    r = s.prepare(query)
    a = r.account
    n = len(turns)
    recent = tuple(range(max(1, n - k + 1), n + 1)) if k else ()
    assert a.kept_turns == tuple(sorted(a.kept_turns)) == tuple(a.retrieved_turns) + recent
    assert len(a.retrieved_turns) <= top_k
    assert all(t < (recent[0] if recent else n + 1) for t in a.retrieved_turns)
    if recall_budget:
        assert s.history.tokens(list(a.retrieved_turns)) <= recall_budget
    assert a.dropped_turns == tuple(t for t in range(1, n + 1) if t not in a.kept_turns)
    assert [m.role for m in r.messages] == ["user", "assistant"] * len(a.kept_turns) + ["user"]
    assert s.snapshot() == before
    # replay == live: a strategy restored from the snapshot sends the same request
    again = make(
        "retrieval", counter, k=k, top_k=top_k, recall_budget=recall_budget, neighbours=neighbours
    )
    again.restore(before)
    assert again.prepare(query) == r


def test_hybrid_retrieves_old_turns_inside_its_one_budget(counter):
    budget = counter.count(SYSTEM) + 220
    s = make("hybrid", counter, budget=budget, recall_share=0.4)
    s.commit("My gym locker code is 4471", "Noted")
    for i in range(12):
        s.commit(f"filler {i} " + counter.text_of_tokens(12), "ok " + counter.text_of_tokens(8))
    r = s.prepare("What is my gym locker code?")
    assert r.account.retrieved_turns[0] == 1  # (and maybe its neighbour, turn 2)
    assert r.account.kept_turns[0] == 1 and r.account.kept_turns[-1] == 13
    assert users(r)[0] == "My gym locker code is 4471"
    assert r.tokens.content <= budget
    plain = make("hybrid", counter, budget=budget, recall_share=0.0)
    for t in s.history.turns:
        plain.commit(t.user, t.assistant)
    p = plain.prepare("What is my gym locker code?")
    assert p.account.retrieved_turns == () and 1 not in p.account.kept_turns


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    turns=conversations,
    extra=st.integers(60, 600),
    share=st.sampled_from([0.0, 0.2, 0.5, 0.9]),
    query=st.sampled_from(TOPICS),
)
def test_hybrid_never_exceeds_its_budget_and_replays(counter, turns, extra, share, query):
    budget = counter.count(SYSTEM) + extra
    s = make("hybrid", counter, budget=budget, recall_share=share)
    for user, reply in turns:
        s.commit(user, reply)
    snap = s.snapshot()
    r = s.fork().prepare(query)
    assert r.tokens.content <= budget
    a = r.account
    assert a.kept_turns == tuple(sorted(set(a.kept_turns)))
    assert set(a.retrieved_turns) <= set(a.kept_turns)
    if a.retrieved_turns and len(a.retrieved_turns) < len(a.kept_turns):
        assert max(a.retrieved_turns) < min(set(a.kept_turns) - set(a.retrieved_turns))
    again = make("hybrid", counter, budget=budget, recall_share=share)
    again.restore(snap)
    assert again.prepare(query) == s.prepare(query)


DINNERS = [
    ("Hi again, it's 6 January 2024. Busy week.", "Hello!"),
    ("Hosted a dinner party tonight, I made lasagne.", "Yum."),
    ("Hi again, it's 10 February 2024. Cold out.", "Brr."),
    ("Hosted a dinner party tonight, I made ramen.", "Yum."),
    ("Hi again, it's 3 March 2024. Spring soon.", "Nice."),
    ("Hosted a dinner party tonight, I made paella.", "Yum."),
    ("Anyway, how was your day?", "Good."),
    ("And the weather?", "Sunny."),
]
LAST_MONTH = "What did I cook at the dinner party last month?"


def test_retrieval_hybrid_and_a_composition_rank_through_one_retrieval(counter):
    """The ranking is the retrieved block's: the default bridges relative time for all three
    (February's party seen from March); "bm25" ranks the three parties by words alone."""
    from memory.compose import Block, Composition
    from memory.registry import register_composition, unregister_composition

    comp = Composition("one_retrieved", (Block("retrieved", top_k=1), Block("recent", count=1)))
    register_composition(comp)
    try:
        lanes = {
            "retrieval": make("retrieval", counter, k=1, top_k=1, recall_budget=0),
            "hybrid": make("hybrid", counter, budget=110, recall_share=0.2),
            "one_retrieved": make("one_retrieved", counter),
        }
        for s in lanes.values():
            for user, reply in DINNERS:
                s.commit(user, reply)
        for name, s in lanes.items():
            assert s.prepare(LAST_MONTH).account.retrieved_turns == (4,), name
        plain = make("retrieval", counter, k=1, top_k=1, recall_budget=0, ranking="bm25")
        for user, reply in DINNERS:
            plain.commit(user, reply)
        assert plain.prepare(LAST_MONTH).account.retrieved_turns != (4,)
    finally:
        unregister_composition("one_retrieved")


def test_an_unknown_ranking_is_refused(counter):
    with pytest.raises(InvalidParameter, match="ranking"):
        make("retrieval", counter, ranking="magic")
