"""A BM25 index and its copies share their postings (a copy is O(1), so forking a retrieval
strategy every turn costs nothing per document): whatever order indexes are copied and
added to, each one answers exactly as an index built from its own documents would."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.bm25 import BM25Index

WORDS = ["rent", "salary", "Chiru", "FD", "50000", "loan", "gold", "tax", "plan", "Mumbai"]
QUERIES = ["rent salary", "Chiru", "50000 FD", "gold tax plan", "Mumbai loan"]


def built(docs: list[str]) -> BM25Index:
    index = BM25Index()
    for i, text in enumerate(docs, start=1):
        index.add(i, text)
    return index


def answers(index: BM25Index) -> object:
    return (
        len(index),
        [index.ranked(q) for q in QUERIES],
        [index.df(w.lower()) for w in WORDS],
        [index.is_entity(w.lower()) for w in WORDS],
        [index.doc_terms(i) for i in range(1, len(index) + 1)],
        [index.postings(w.lower(), max_id=10**9) for w in WORDS],
    )


sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(
    lambda ws: "I said " + " ".join(ws) + "."
)
step = st.tuples(st.integers(min_value=0, max_value=50), st.booleans(), sentence)


@settings(max_examples=150, deadline=None)
@given(st.lists(step, max_size=25))
def test_every_index_answers_as_one_built_from_its_own_documents(steps):
    live: list[tuple[BM25Index, list[str]]] = [(BM25Index(), [])]
    for pick, copy, text in steps:
        index, docs = live[pick % len(live)]
        if copy:
            live.append((index.copy(), list(docs)))
        else:
            index.add(len(docs) + 1, text)
            docs.append(text)
    for index, docs in live:
        assert answers(index) == answers(built(docs))


def test_copies_taken_from_other_threads_while_the_owner_adds_stay_whole():
    owner = BM25Index()
    docs: list[str] = []
    copies: list[tuple[BM25Index, int]] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            current = owner
            copies.append((current.copy(), len(current)))

    threads = [threading.Thread(target=probe) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(1, 301):
        text = f"I said {WORDS[i % len(WORDS)]} {WORDS[(3 * i) % len(WORDS)]} {i}."
        owner.add(i, text)
        docs.append(text)
    done.set()
    for t in threads:
        t.join()
    assert answers(owner) == answers(built(docs))
    for copy, _ in copies[:: max(1, len(copies) // 40)]:
        n = len(copy)
        assert answers(copy) == answers(built(docs[:n]))
