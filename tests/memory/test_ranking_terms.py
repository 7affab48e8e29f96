"""Every scoring term of the retrieved block's ranking, against a brute-force reference.

The reference below rebuilds everything from the texts on each call (terms, document
frequencies, names and numbers, sessions and their dates, "today"), nothing incremental, and
applies each term as memory/strategies/recall.py's docstring defines it; the incremental
index, its copies and a fork must rank the same turns with the same scores.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.bm25 import entity_terms, terms, tokens
from memory.ranking import RANKINGS, Ranking
from memory.strategies.recall import SEGMENT, TurnRecall
from memory.timeref import date_in, window
from memory.types import Turn

K1, B, COMMON = 1.2, 0.75, 0.5


def fake_embed(texts):
    """A real numpy embedding of a text's terms hashed into 16 dimensions, unit length."""
    out = np.zeros((len(texts), 16), dtype=np.float32)
    for row, text in enumerate(texts):
        for term in terms(text):
            out[row, hashlib.sha256(term.encode()).digest()[0] % 16] += 1.0
        norm = float(np.linalg.norm(out[row]))
        out[row] = out[row] / norm if norm else out[row]
    return out


def reference(docs, query, older, neighbours, ranking, *, embed=None):
    """{turn: score} of turns 1..older, from scratch."""
    texts = [f"{u}\n{a}" for u, a in docs]
    doc_terms = [terms(t) for t in texts]
    n = len(docs)
    avg = sum(len(t) for t in doc_terms) / n or 1.0
    df = {}
    for t in doc_terms:
        for term in set(t):
            df[term] = df.get(term, 0) + 1

    def idf(term):
        return math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))

    def scored(term):
        return 0 < df.get(term, 0) <= COMMON * n

    def bm25(weights):
        out = {}
        for term, w in weights.items():
            for i, t in enumerate(doc_terms[:older], start=1):
                tf = t.count(term)
                if tf:
                    norm = tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(t) / avg))
                    out[i] = out.get(i, 0.0) + idf(term) * w * norm
        return out

    entities = set().union(*(entity_terms(t) for t in texts))
    weights = {t: 1.0 for t in dict.fromkeys(terms(query)) if scored(t)}
    if ranking.entities:
        weights = {t: 1.0 + ranking.entities if t in entities else w for t, w in weights.items()}
    own = bm25(weights)
    if ranking.expand and own:
        firsts = sorted(own.items(), key=lambda h: (-h[1], h[0]))[: ranking.expand_from]
        pool = {}
        for d, _ in firsts:
            for term in dict.fromkeys(doc_terms[d - 1]):
                if term not in weights and scored(term):
                    pool[term] = pool.get(term, 0.0) + idf(term)
        strongest = sorted(pool.items(), key=lambda h: (-h[1], h[0]))[: ranking.expand]
        weights = {**weights, **{t: ranking.expand_weight for t, _ in strongest}}
        own = bm25(weights)
    scores = dict(own)
    if neighbours:
        for d in range(1, older + 1):
            s = own.get(d, 0.0) + neighbours * (own.get(d - 1, 0.0) + own.get(d + 1, 0.0))
            if s:
                scores[d] = s
    # sessions: a turn saying a date starts one, as does the first turn and SEGMENT turns
    session, starts, dates = [0], [0], [None]
    for i, (user, _) in enumerate(docs, start=1):
        day = date_in(user)
        if day is not None or i == 1 or i - starts[-1] >= SEGMENT:
            starts.append(i)
            dates.append(day if day is not None else dates[-1])
        session.append(len(starts) - 1)
    if ranking.sessions and scores:
        per = {}
        for term, w in weights.items():
            held = {session[i] for i, t in enumerate(doc_terms[:older], 1) if term in t}
            for s in held:
                per[s] = per.get(s, 0.0) + idf(term) * w
        scores = {d: s + ranking.sessions * per.get(session[d], 0.0) for d, s in scores.items()}
    said = [d for d in (date_in(u) for u, _ in docs) if d is not None]
    if ranking.time and scores:
        days = window(query, max(said)) if said else None
        if days is not None:
            scores = {
                d: s * (1 + ranking.time)
                if dates[session[d]] and days[0] <= dates[session[d]] <= days[1]
                else s
                for d, s in scores.items()
            }
        if "when" in tokens(query):
            best = sorted(scores.items(), key=lambda h: (-h[1], h[0]))[:3]
            for d, s in best:
                opener = starts[session[d]]
                if opener != d and opener <= older and dates[session[d]] is not None:
                    scores[opener] = max(scores.get(opener, 0.0), s)
    if ranking.dense and embed is not None:
        vectors = embed(texts).astype(np.float16).astype(np.float32)[:older]
        q = embed([query])[0].astype(np.float32)
        sims = vectors @ q
        near = sorted(range(older), key=lambda i: (-sims[i], i))
        fused = {}
        for rank, (d, _) in enumerate(sorted(scores.items(), key=lambda h: (-h[1], h[0]))):
            fused[d] = 1 / (60 + rank + 1)
        for rank, i in enumerate(near):
            fused[i + 1] = fused.get(i + 1, 0.0) + ranking.dense / (60 + rank + 1)
        scores = fused
    return {d: s for d, s in scores.items() if s > 0}


def assert_same_ranking(got, expected):
    assert {d for d, _ in got} == set(expected)
    for d, s in got:
        assert s == pytest.approx(expected[d], rel=1e-9, abs=1e-12)
    for (d1, s1), (d2, s2) in zip(got, got[1:], strict=False):
        assert s1 > s2 - 1e-9 and (abs(s1 - s2) > 1e-9 or d1 < d2)


WORDS = ["rent", "Priya", "Quillon", "dinner party", "cinema", "Lisbon", "the", "gym", "₹2,000"]
HEADERS = ["", "Hi again, it's 6 January 2024. ", "Hey, it's 20 February 2024. ",
           "Morning! 2 March 2024 today. ", "Hi, it's 28 March 2024. "]  # fmt: skip
PHRASES = ["", " last month", " about 6 weeks ago", " back in February", " yesterday"]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
turn = st.tuples(st.sampled_from(HEADERS), sentence, sentence).map(
    lambda h: (f"{h[0]}I saw {h[1]}.", f"Noted: {h[2]}")
)
query = st.tuples(st.sampled_from(["What ", "When did I see "]), sentence, st.sampled_from(PHRASES))
query = query.map(lambda q: f"{q[0]}{q[1]}{q[2]}?")
rankings = st.builds(
    Ranking,
    entities=st.sampled_from([0.0, 0.5, 2.0]),
    expand=st.sampled_from([0, 1, 3]),
    expand_from=st.sampled_from([1, 3]),
    expand_weight=st.sampled_from([0.1, 0.5]),
    sessions=st.sampled_from([0.0, 0.3]),
    time=st.sampled_from([0.0, 1.0]),
    dense=st.sampled_from([0.0, 1.0]),
)


def learnt(docs, embed=None) -> TurnRecall:
    recall = TurnRecall(embed=embed)
    for i, (u, a) in enumerate(docs, start=1):
        recall.learn(Turn(i, u, a), tokens=10)
    return recall


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    docs=st.lists(turn, min_size=1, max_size=25),
    q=query,
    cut=st.floats(0, 1),
    neighbours=st.sampled_from([0.0, 0.25]),
    ranking=rankings,
)
def test_every_term_matches_the_brute_force_reference(docs, q, cut, neighbours, ranking):
    older = max(0, round(cut * len(docs)))
    recall = learnt(docs, fake_embed if ranking.dense else None)
    got = list(recall.rank(q, older=older, neighbours=neighbours, ranking=ranking))
    expected = reference(docs, q, older, neighbours, ranking, embed=fake_embed) if older else {}
    assert_same_ranking(got, expected)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(docs=st.lists(turn, min_size=2, max_size=20), q=query, ranking=rankings)
def test_a_copy_learns_on_without_changing_the_original(docs, q, ranking):
    half = len(docs) // 2
    embed = fake_embed if ranking.dense else None
    original = learnt(docs[:half], embed)
    fork = original.copy()
    for i, (u, a) in enumerate(docs[half:], start=half + 1):
        fork.learn(Turn(i, u, a), tokens=10)
    rebuilt = learnt(docs, embed)
    rank = dict(older=len(docs), neighbours=0.25, ranking=ranking)
    assert list(fork.rank(q, **rank)) == list(rebuilt.rank(q, **rank))
    alone = learnt(docs[:half], embed)
    rank["older"] = half
    assert list(original.rank(q, **rank)) == list(alone.rank(q, **rank))


def test_plain_ranking_is_the_index_own_bm25():
    docs = [("My sister Priya adopted a beagle.", "Nice!"), ("Rent is due.", "Ok.")] * 4
    recall = learnt(docs)
    plain = list(recall.rank("What did Priya adopt?", older=8, neighbours=0.25))
    assert plain == recall.index.ranked("What did Priya adopt?", max_id=8, neighbours=0.25)


def test_names_and_numbers_are_entities_but_a_sentence_start_is_not():
    assert entity_terms("Yesterday Priya paid ₹2,000. Rent went up. I met Kabir") == {
        "priya",
        "2000",
        "kabir",
    }


def test_relative_time_finds_the_one_dinner_party_in_last_month():
    docs = []
    for day, dish in (("6 January", "lasagne"), ("10 February", "ramen"), ("3 March", "paella")):
        docs.append((f"Hi again, it's {day} 2024. Busy week.", "Hello!"))
        docs.append((f"Hosted a dinner party tonight, I made {dish}.", "Yum."))
    bridged = RANKINGS["bridged"]
    question = "What did I cook at the dinner party last month?"
    best = next(learnt(docs).rank(question, older=6, neighbours=0.0, ranking=bridged))
    assert best[0] == 4  # February's, seen from 3 March
    plain = next(learnt(docs).rank(question, older=6, neighbours=0.0))
    assert plain[0] != 4  # BM25 alone cannot tell the three apart by date


def test_a_when_question_brings_the_session_opener_that_says_the_date():
    docs = [("Hi again, it's 6 January 2024. Busy week.", "Hello!")]
    docs += [(f"Filler {i}.", "Ok.") for i in range(5)]
    docs += [("Got the keys to the new flat today!", "Congrats.")]
    ranked = dict(learnt(docs).rank("When did I get the flat keys?", older=7, neighbours=0.0,
                                    ranking=RANKINGS["bridged"]))  # fmt: skip
    assert 1 in ranked and ranked[1] == ranked[7]


def test_an_undated_log_is_cut_into_segments():
    docs = [(f"turn {i} about rent", "ok") for i in range(SEGMENT * 2 + 1)]
    recall = learnt(docs)
    assert recall.starts == [0, 1, SEGMENT + 1, 2 * SEGMENT + 1]
    assert recall.dates == [None, None, None, None] and recall.today is None
