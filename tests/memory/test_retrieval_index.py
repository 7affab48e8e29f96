"""BM25 tokenising, scoring, neighbour scoring and packing, against brute-force references."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.bm25 import BM25Index, terms, tokens
from memory.strategies.recall import pack

# --- tokenising -------------------------------------------------------------------------------


def test_contractions_stay_whole_and_their_stopwords_match():
    assert tokens("What's my name? I’m Chiru, don't forget") == [
        "what's",
        "my",
        "name",
        "i'm",
        "chiru",
        "don't",
        "forget",
    ]
    # "what's", "my", "i'm", "don't" are stopwords: no stray "s", "m" or "t" terms
    assert terms("What's my name? I’m Chiru, don't forget") == ["name", "chiru", "forget"]
    assert terms("I'm hungry") == ["hungri"]


def test_words_are_stemmed_and_possessives_match_the_name():
    assert terms("Priya's salaries") == terms("priya salary")
    assert terms("running runs") == ["run", "run"]


def test_numbers_keep_their_separators_and_drop_the_currency_sign():
    assert terms("₹1,20,000 and $12.50 in 2024") == ["120000", "12.50", "2024"]


def test_single_letters_and_underscores_are_not_terms():
    assert terms("a b c x_y z") == []


def test_whats_my_name_does_not_retrieve_a_turn_on_s_alone():
    index = BM25Index()
    index.add(1, "My name is Chiru")
    index.add(2, "That's the bus's stop; it's five minutes away")
    index.add(3, "Tomorrow I will cook dinner for friends")
    assert [d for d, _ in index.ranked("What's my name?")] == [1]


# --- a brute-force reference --------------------------------------------------------------------


def reference_scores(
    docs: list[str], query: str, max_id: int, *, common: float = 0.5, k1=1.2, b=0.75
) -> dict[int, float]:
    """BM25 from scratch: every document, every term, nothing incremental."""
    doc_terms = [terms(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in doc_terms) / n or 1.0
    out: dict[int, float] = {}
    for term in dict.fromkeys(terms(query)):
        df = sum(1 for t in doc_terms if term in t)
        if df == 0 or df > common * n:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, t in enumerate(doc_terms[:max_id], start=1):
            tf = t.count(term)
            if tf:
                norm = tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avg))
                out[i] = out.get(i, 0.0) + idf * norm
    return out


def reference_ranked(docs, query, max_id, neighbours):
    own = reference_scores(docs, query, max_id)
    smoothed = {}
    for d in range(1, max_id + 1):
        s = own.get(d, 0.0) + neighbours * (own.get(d - 1, 0.0) + own.get(d + 1, 0.0))
        if s > 0:
            smoothed[d] = s
    return smoothed


VOCAB = ["rent", "salary", "Priya", "dog", "what's", "I'm", "the", "gym", "₹2,000", "city"]
words = st.lists(st.sampled_from(VOCAB), max_size=8).map(" ".join)


def assert_same_ranking(got: list[tuple[int, float]], expected: dict[int, float]) -> None:
    assert {d for d, _ in got} == set(expected)
    for d, s in got:
        assert s == pytest.approx(expected[d], rel=1e-9, abs=1e-12)
    for (d1, s1), (d2, s2) in zip(got, got[1:], strict=False):  # best first, ties older first
        assert s1 > s2 - 1e-9 and (abs(s1 - s2) > 1e-9 or d1 < d2)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    docs=st.lists(words, min_size=1, max_size=25),
    query=words,
    cut=st.floats(0, 1),
    neighbours=st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)
def test_index_matches_the_brute_force_reference(docs, query, cut, neighbours):
    index = BM25Index()
    for i, d in enumerate(docs, start=1):
        index.add(i, d)
    max_id = max(0, round(cut * len(docs)))
    got = index.ranked(query, max_id=max_id, neighbours=neighbours)
    assert_same_ranking(got, reference_ranked(docs, query, max_id, neighbours))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(docs=st.lists(words, min_size=2, max_size=20), query=words)
def test_incremental_index_and_its_copies_match_a_rebuilt_one(docs, query):
    index = BM25Index()
    for i, d in enumerate(docs, start=1):
        index.add(i, d)
        index.ranked(query)  # queries in between change nothing
        rebuilt = BM25Index()
        for j, e in enumerate(docs[:i], start=1):
            rebuilt.add(j, e)
        assert index.ranked(query, neighbours=0.5) == rebuilt.ranked(query, neighbours=0.5)
    fork = index.copy()
    fork.add(len(docs) + 1, query)
    assert len(index) == len(docs) and len(fork) == len(docs) + 1
    assert_same_ranking(index.ranked(query), reference_ranked(docs, query, len(docs), 0.0))


def test_documents_are_numbered_in_order():
    index = BM25Index()
    index.add(1, "rent")
    with pytest.raises(ValueError, match="the next document is 2"):
        index.add(3, "gym")


def test_a_term_in_over_half_the_documents_is_not_scored():
    index = BM25Index()
    for i, text in enumerate(["rent gym", "rent city", "rent dog", "salary"], start=1):
        index.add(i, text)
    assert index.query_terms("rent salary") == ["salari"]
    assert [d for d, _ in index.ranked("rent salary")] == [4]


# --- neighbour scoring ------------------------------------------------------------------------


def test_neighbour_scores_add_a_share_of_the_turns_either_side():
    index = BM25Index()
    for i, text in enumerate(["one", "two", "lease signed", "four", "lease", "six"], start=1):
        index.add(i, text)
    own = index.scores("lease")
    got = dict(index.ranked("lease", neighbours=0.5))
    assert got[2] == pytest.approx(0.5 * own[3])
    assert got[4] == pytest.approx(0.5 * (own[3] + own[5]))
    assert got[6] == pytest.approx(0.5 * own[5])
    assert got[3] == pytest.approx(own[3]) and 1 not in got
    # a neighbour past max_id is not scored, and does not lend its score
    limited = dict(index.ranked("lease", max_id=4, neighbours=0.5))
    assert set(limited) == {2, 3, 4} and limited[4] == pytest.approx(0.5 * own[3])


def test_a_turn_amid_relevant_turns_outranks_an_isolated_hit():
    index = BM25Index()
    texts = ["filler a", "gym plan", "gym locker", "gym code", "filler b", "gym", "filler c"]
    texts += ["other talk"] * 3  # "gym" stays under half of the turns
    for i, text in enumerate(texts, start=1):
        index.add(i, text)
    plain = index.ranked("gym locker code")
    assert plain[0][0] in (3, 4)
    smoothed = index.ranked("gym", neighbours=0.5)
    assert smoothed[0][0] == 3  # its neighbours 2 and 4 are hits too; turn 6 stands alone


# --- packing ----------------------------------------------------------------------------------


def reference_pack(ranked, cost, budget, limit):
    taken, used = [], 0
    for d, s in ranked:
        if len(taken) < limit and (not budget or used + cost[d] <= budget):
            taken.append((d, s))
            used += cost[d]
    return taken


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    costs=st.lists(st.integers(1, 60), min_size=0, max_size=30),
    budget=st.integers(0, 300),
    limit=st.integers(0, 30),
    seed=st.randoms(use_true_random=False),
)
def test_packing_is_greedy_best_first_within_budget_and_limit(costs, budget, limit, seed):
    cost = dict(enumerate(costs, start=1))
    ids = list(cost)
    seed.shuffle(ids)
    ranked = [(d, 100.0 - i) for i, d in enumerate(ids)]
    got = pack(ranked, cost.__getitem__, budget=budget, limit=limit, smallest=min(costs or [1]))
    assert got == reference_pack(ranked, cost, budget, limit)
    assert len(got) <= limit
    if budget:
        assert sum(cost[d] for d, _ in got) <= budget


def test_packing_skips_a_turn_that_does_not_fit_and_tries_the_next():
    cost = {1: 50, 2: 80, 3: 20}
    ranked = [(1, 3.0), (2, 2.0), (3, 1.0)]
    assert pack(ranked, cost.__getitem__, budget=100, limit=10) == [(1, 3.0), (3, 1.0)]
    assert pack(ranked, cost.__getitem__, budget=0, limit=2) == [(1, 3.0), (2, 2.0)]
