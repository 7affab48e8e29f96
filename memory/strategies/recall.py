"""The retrieved block's index and ranking: every turn so far in a BM25 index with its tokens
and its session, the ranking of older turns against a new message, and the best-first
packing of the ranked turns into a budget.

A ranking (memory/ranking.py's `Ranking`, named in `RANKINGS`) is BM25 (memory/bm25.py)
plus terms that bridge the question's words and the evidence's, each off at 0:

* `entities`: a query term ever written as a name or a number weighs (1 + entities) x;
* `expand` (pseudo-relevance feedback): the `expand` strongest terms (summed idf) of the
  first pass's `expand_from` best turns join the query at weight `expand_weight` each, then
  the turns are scored again; a turn that only shares the entity with the first hit ranks;
* `sessions`: each scored turn adds `sessions` x its session's score: the idf (x weight) of
  every query term found anywhere in that session, so a turn in the session that matches
  the question as a whole ranks over one lone keyword hit;
* `time`: a turn in a session whose date falls in the days a relative time phrase of the
  question points at ("last month", "about 3 weeks ago", "back in March", memory/timeref.py)
  scores (1 + time) x; a "when" question also brings each top hit's dated first turn;
* `dense`: reciprocal-rank fusion of that ranking with the `DENSE_TOP` turns nearest the
  message by dense vectors (memory/dense.py; each turn embedded once, when learnt).

Sessions: a turn whose user text says a full date starts a session on that day; a session
also ends after `SEGMENT` turns without one (an undated log is cut into stretches). "Today"
is the latest date said so far. Neighbour smoothing runs after expansion, before the session
and time terms. Everything is per turn and incremental: learning a turn is O(its terms), and
a query touches only its terms' postings (the dense term: one product over older turns).

The composed engine (memory/strategies/composed.py) keeps one TurnRecall per running
strategy; the retrieval, hybrid and every composition's retrieved block rank through it.
May import: memory/bm25.py, memory/dense.py, memory/ranking.py, memory/timeref.py and
memory/types.py.
"""

from __future__ import annotations

import copy
import datetime as dt
import heapq
from collections.abc import Callable, Container, Iterable, Iterator
from typing import Any

from memory.bm25 import BM25Index, best_first, smoothed, tokens
from memory.dense import Embed
from memory.ranking import Ranking
from memory.timeref import date_in, window
from memory.types import Turn

SEGMENT = 40  # an undated session is cut after this many turns
DENSE_TOP = 100  # the turns most similar to the message that join the dense fusion
RRF_K = 60  # reciprocal-rank fusion's constant
PLAIN = Ranking()  # plain BM25 (with neighbours)


def pack(
    ranked: Iterable[tuple[int, float]],
    cost: Callable[[int], int],
    *,
    budget: int,
    limit: int,
    smallest: int = 1,
) -> list[tuple[int, float]]:
    """Best-first greedy packing: take each ranked turn whose tokens fit the room left.

    `cost(turn)` gives a turn's tokens; `budget` 0 means no token cap; at most `limit` turns.
    Stops once the room left is below `smallest` (no turn is smaller), so the ranking is
    consumed only as far as it is needed."""
    taken: list[tuple[int, float]] = []
    used = 0
    for doc_id, score in ranked:
        if len(taken) >= limit or (budget and budget - used < smallest):
            break
        tokens = cost(doc_id)
        if budget and used + tokens > budget:
            continue
        taken.append((doc_id, score))
        used += tokens
    return taken


class TurnRecall:
    """Older turns to recall by relevance: every turn so far in a BM25 index, with its tokens
    and its session.

    A running strategy keeps one and learns every turn into it; `pick` ranks the older turns
    against the new message and packs them into a budget."""

    def __init__(self, *, embed: Embed | None = None) -> None:
        self.index = BM25Index()
        self.embed = embed  # turns a text into a unit vector (None: no dense term)
        self.vectors: Any = None  # rows 1..n: the turns' vectors (numpy, grown by doubling)
        self._shared = False  # the vectors' buffer is shared with a copy: copy before writing
        self.smallest = 0  # tokens of the smallest turn so far (packing stops below it)
        self.tokens: list[int] = [0]  # tokens[i]: tokens of turn i
        self.session: list[int] = [0]  # session[i]: turn i's session (numbered from 1)
        self.starts: list[int] = [0]  # starts[s]: the first turn of session s
        self.dates: list[dt.date | None] = [None]  # dates[s]: session s's day (None: unsaid)
        self.today: dt.date | None = None  # the latest date said so far

    def learn(self, turn: Turn, tokens: int, *, indexed: bool = True) -> None:
        """Count the next turn's `tokens`; index its text unless `indexed` is False."""
        self.tokens.append(tokens)
        self.smallest = min(self.smallest, tokens) if turn.index > 1 else tokens
        if not indexed:
            return
        text = f"{turn.user}\n{turn.assistant}"
        self.index.add(turn.index, text)
        if self.embed is not None:
            self._store_vector(turn.index, self.embed([text])[0])
        day = date_in(turn.user)
        current = len(self.starts) - 1
        if day is not None or current == 0 or turn.index - self.starts[current] >= SEGMENT:
            self.starts.append(turn.index)
            self.dates.append(day if day is not None else self.dates[current] if current else None)
            if day is not None and (self.today is None or day > self.today):
                self.today = day
        self.session.append(len(self.starts) - 1)

    def _store_vector(self, row: int, vector: Any) -> None:
        import numpy as np  # noqa: PLC0415 (only with a dense term)

        vectors = self.vectors
        if vectors is None or row >= len(vectors) or self._shared:
            size = max(64, 2 * row) if vectors is None or row >= len(vectors) else len(vectors)
            grown = np.zeros((size, len(vector)), dtype=np.float16)
            if vectors is not None:
                grown[: min(len(vectors), size)] = vectors[:size]
            self.vectors, self._shared = grown, False
        self.vectors[row] = vector

    def copy(self) -> TurnRecall:
        """An independent copy (for a strategy's fork)."""
        other = copy.copy(self)
        self._shared = other._shared = self.vectors is not None
        other.index = self.index.copy()
        other.tokens = list(self.tokens)
        other.session, other.starts = list(self.session), list(self.starts)
        other.dates = list(self.dates)
        return other

    def rank(
        self, user_text: str, *, older: int, neighbours: float, ranking: Ranking = PLAIN
    ) -> Iterator[tuple[int, float]]:
        """Turns 1..older with a positive score against `user_text`, best first."""
        index = self.index
        top = min(older, len(index))
        if top < 1:
            return iter(())
        query = {t: 1.0 for t in index.query_terms(user_text)}
        if ranking.entities:
            for term in query:
                if index.is_entity(term):
                    query[term] = 1.0 + ranking.entities
        own = index.scores(query, max_id=top)
        if ranking.expand and own:
            query = self.expanded(query, own, ranking)
            own = index.scores(query, max_id=top)
        scores = smoothed(own, neighbours, top)
        if ranking.sessions and scores:
            per_session = self.session_scores(query, top)
            session = self.session
            scores = {d: s + ranking.sessions * per_session.get(session[d], 0.0)
                      for d, s in scores.items()}  # fmt: skip
        if ranking.time and scores:
            scores = self.timed(user_text, scores, ranking.time, top)
        if ranking.dense and self.embed is not None and self.vectors is not None:
            scores = self.fused(user_text, scores, ranking.dense, top)
        return best_first(scores)

    def fused(
        self, user_text: str, scores: dict[int, float], weight: float, top: int
    ) -> dict[int, float]:
        """Reciprocal-rank fusion: 1/(60 + BM25 rank) + weight/(60 + dense rank), over the
        BM25 hits and the `DENSE_TOP` turns most similar to the message."""
        import numpy as np  # noqa: PLC0415 (only with a dense term)

        assert self.embed is not None
        query = np.asarray(self.embed([user_text])[0], dtype=np.float32)
        sims = self.vectors[1 : top + 1].astype(np.float32) @ query
        count = min(DENSE_TOP, len(sims))
        picked = np.argpartition(-sims, count - 1)[:count] if count < len(sims) else range(count)
        near = sorted((int(i) for i in picked), key=lambda i: (-sims[i], i))
        out: dict[int, float] = {}
        for rank, (d, _) in enumerate(sorted(scores.items(), key=lambda h: (-h[1], h[0]))):
            out[d] = 1 / (RRF_K + rank + 1)
        for rank, i in enumerate(near):
            out[i + 1] = out.get(i + 1, 0.0) + weight / (RRF_K + rank + 1)
        return out

    def expanded(
        self, query: dict[str, float], own: dict[int, float], ranking: Ranking
    ) -> dict[str, float]:
        """`query` plus the strongest terms (summed idf) of the best `expand_from` turns."""
        index = self.index
        firsts = heapq.nsmallest(ranking.expand_from, own.items(), key=lambda h: (-h[1], h[0]))
        weight: dict[str, float] = {}
        for doc_id, _ in firsts:
            for term in index.doc_terms(doc_id):
                if term not in query and index.scored(term):
                    weight[term] = weight.get(term, 0.0) + index.idf(term)
        strongest = heapq.nsmallest(ranking.expand, weight.items(), key=lambda h: (-h[1], h[0]))
        return {**query, **{t: ranking.expand_weight for t, _ in strongest}}

    def session_scores(self, query: dict[str, float], top: int) -> dict[int, float]:
        """Per session (turns up to `top`): the idf x weight of each query term it holds."""
        index, session = self.index, self.session
        out: dict[int, float] = {}
        for term, weight in query.items():
            if not index.scored(term):
                continue
            part = index.idf(term) * weight
            for s in {session[d] for d in index.postings(term, max_id=top)}:
                out[s] = out.get(s, 0.0) + part
        return out

    def timed(
        self, user_text: str, scores: dict[int, float], bonus: float, top: int
    ) -> dict[int, float]:
        """Scores with the relative-time bonus, and a "when" question's session openers."""
        out = scores
        days = window(user_text, self.today) if self.today is not None else None
        if days is not None:
            first, last = days
            dates, session = self.dates, self.session
            out = {}
            for d, s in scores.items():
                day = dates[session[d]]
                out[d] = s * (1 + bonus) if day is not None and first <= day <= last else s
        if "when" in tokens(user_text):
            best = heapq.nsmallest(3, out.items(), key=lambda h: (-h[1], h[0]))
            for d, s in best:
                opener = self.starts[self.session[d]]
                if opener != d and opener <= top and self.dates[self.session[d]] is not None:
                    out = dict(out) if out is scores else out
                    out[opener] = max(out.get(opener, 0.0), s)
        return out

    def pick(
        self,
        user_text: str,
        *,
        older: int,
        neighbours: float,
        budget: int,
        limit: int,
        skip: Container[int] = (),
        ranking: Ranking = PLAIN,
    ) -> list[tuple[int, float]]:
        """Turns 1..older (none in `skip`) best matching `user_text`, packed best first into
        `budget` tokens (0: no token cap), at most `limit`; (turn, score) in turn order."""
        ranked: Iterable[tuple[int, float]] = self.rank(
            user_text, older=older, neighbours=neighbours, ranking=ranking
        )
        if skip:
            ranked = (hit for hit in ranked if hit[0] not in skip)
        taken = pack(
            ranked, self.tokens.__getitem__, budget=budget, limit=limit, smallest=self.smallest
        )
        return sorted(taken)
