"""An incremental BM25 index over conversation turns, with English stemming and stopwords.

Tokenising (`terms`): words keep their internal apostrophes ("what's", "i'm", "don't" stay
whole, curly apostrophes count as straight ones), so contractions are matched against the
stopword list whole and never leave stray "s"/"m"/"t" terms. Numbers keep their separators
("₹1,20,000" -> "120000", "12.5" -> "12.5"); a currency sign is not part of the term.
Words are stemmed with the Snowball English stemmer (PyStemmer), one cached stem per word.

Scoring is Okapi BM25. Two additions:

* query terms found in more than `common` of the indexed turns are skipped (a "cutoff
  frequency": such a term says little about which turn matters, and skipping it keeps a
  query from touching most of the conversation);
* `ranked(..., neighbours=w)` scores each turn together with its neighbours: its own score
  plus w x the scores of the turns just before and after it, so a turn in the middle of a
  relevant exchange ranks above an isolated keyword hit.

Adding a turn is O(its terms). A query touches only the postings of its own (non-common)
terms and their neighbours; postings are in ascending turn order, so turns past `max_id`
are never visited.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

import Stemmer

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also ok okay yes yeah
    i'm i've i'll i'd you're you've you'll you'd he's she's it's we're we've we'll we'd they're
    they've they'll they'd that's there's here's what's who's where's when's why's how's let's
    isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't
    cannot couldn't shouldn't mustn't
    """.split()
)

_local = threading.local()
_stems: dict[str, str] = {}


def _stem(word: str) -> str:
    """The Snowball English stem of a lower-cased word (cached; PyStemmer per thread)."""
    stem = _stems.get(word)
    if stem is None:
        stemmer = getattr(_local, "stemmer", None)
        if stemmer is None:
            stemmer = _local.stemmer = Stemmer.Stemmer("english")
        stem = stemmer.stemWord(word)
        if len(_stems) < 200_000:
            _stems[word] = stem
    return stem


def tokens(text: str) -> list[str]:
    """Lower-cased words and numbers as written (apostrophes straightened, no stemming)."""
    out = []
    for raw in _TOKEN.findall(text.lower()):
        if raw[0].isdigit():
            out.append(raw.replace(",", ""))
        else:
            out.append(raw.replace("’", "'"))
    return out


_OPENING = frozenset(" \t\"'(“‘")  # what may stand between a sentence's end and its first word


def entity_terms(text: str) -> set[str]:
    """The index terms of names and numbers in `text`: numbers, and words written with a
    capital letter anywhere but at the start of a sentence (a line, or after . ! ? :)."""
    out: set[str] = set()
    for match in _TOKEN.finditer(text):
        raw = match.group()
        if raw[0].isdigit():
            out.add(raw.replace(",", ""))
            continue
        if not raw[0].isupper():
            continue
        at = match.start() - 1
        while at >= 0 and text[at] in _OPENING:
            at -= 1
        if at < 0 or text[at] in ".!?:\n":
            continue
        word = raw.lower().replace("’", "'")
        if len(word) > 1 and word not in STOPWORDS:
            out.add(_stem(word))
    return out


def terms(text: str) -> list[str]:
    """Index terms: tokens without stopwords or single letters, words stemmed."""
    out = []
    for token in tokens(text):
        if token[0].isdigit():
            out.append(token)
        elif len(token) > 1 and token not in STOPWORDS:
            out.append(_stem(token))
    return out


def smoothed(own: dict[int, float], neighbours: float, top: int) -> dict[int, float]:
    """Each document's score plus `neighbours` x the scores of ids one below and one above
    (from 1 up to `top`); `own` itself when the weight is 0."""
    if neighbours <= 0 or not own:
        return own
    out = dict(own)
    get = out.get
    for doc_id, score in own.items():
        share = neighbours * score
        if doc_id > 1:
            out[doc_id - 1] = get(doc_id - 1, 0.0) + share
        if doc_id < top:
            out[doc_id + 1] = get(doc_id + 1, 0.0) + share
    return out


def best_first(scores: Mapping[int, float]) -> Iterator[tuple[int, float]]:
    """(id, score) with a positive score, best first (ties: lower id first), lazily: the
    candidates are heapified, not sorted, so taking the first r costs O(m + r log m)."""
    heap = [(-score, doc_id) for doc_id, score in scores.items() if score > 0]
    heapq.heapify(heap)
    while heap:
        score, doc_id = heapq.heappop(heap)
        yield doc_id, -score


class _Posting:
    """One term's documents in id order, with their term frequencies and lengths. Shared by
    an index and its copies: each reads only the ids up to its own document count."""

    __slots__ = ("ids", "lens", "tfs")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.tfs: list[int] = []
        self.lens: list[int] = []

    def upto(self, count: int) -> int:
        """How many of its documents are among documents 1..count."""
        ids = self.ids
        return len(ids) if not ids or ids[-1] <= count else bisect_right(ids, count)

    def add(self, doc_id: int, tf: int, length: int) -> None:
        self.ids.append(doc_id)
        self.tfs.append(tf)
        self.lens.append(length)

    def cut(self, count: int) -> _Posting:
        """A copy of its documents among 1..count."""
        end = self.upto(count)
        other = _Posting()
        other.ids, other.tfs, other.lens = self.ids[:end], self.tfs[:end], self.lens[:end]
        return other


class _Lineage:
    """Which of an index and its copies may append to the structures they share: the one
    copied last (a fork carries on; the index it was copied from is kept only to be read,
    or dropped). The others read their own documents only, and copy before they write.
    Appending, copying and taking ownership hold its lock (probes fork from other threads)."""

    __slots__ = ("lock", "owner")

    def __init__(self, owner: object) -> None:
        self.owner = owner
        self.lock = threading.Lock()


class BM25Index:
    """Documents numbered 1, 2, 3... in order (conversation turns); `best`/`ranked`/`search`
    give (id, score) best first. `copy` is O(1): a copy shares the postings, which only ever
    grow, and each index reads the documents up to its own count."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, common: float = 0.5) -> None:
        if not 0 < common <= 1:
            raise ValueError(f"common is a share of the documents in (0, 1], got {common}")
        self.k1, self.b, self.common = k1, b, common
        self._postings: dict[str, _Posting] = {}
        self._total_length = 0
        self._count = 0
        self._doc_terms: list[tuple[str, ...]] = [()]  # [i]: document i's distinct terms
        self._entities: dict[str, int] = {}  # a name or number ever written: its first doc
        self._lineage = _Lineage(self)

    def __len__(self) -> int:
        return self._count

    def copy(self) -> BM25Index:
        """An independent copy. From the index that owns its structures: O(1), and the copy
        owns them from then on; from any other: the documents it reads, copied."""
        other = BM25Index(k1=self.k1, b=self.b, common=self.common)
        other._total_length = self._total_length
        other._count = self._count
        with self._lineage.lock:
            if self._lineage.owner is self:
                other._postings, other._doc_terms, other._entities = (
                    self._postings,
                    self._doc_terms,
                    self._entities,
                )
                other._lineage = self._lineage
                self._lineage.owner = other
            else:
                other._take(self._postings, self._doc_terms, self._entities)
        return other

    def _take(
        self,
        postings: Mapping[str, _Posting],
        doc_terms: list[tuple[str, ...]],
        entities: Mapping[str, int],
    ) -> None:
        """Own copies of shared structures, cut to this index's documents (called holding
        the lock of the lineage they belong to)."""
        n = self._count
        self._postings = {t: p.cut(n) for t, p in postings.items() if p.upto(n)}
        self._doc_terms = doc_terms[: n + 1]
        self._entities = {t: d for t, d in entities.items() if d <= n}
        self._lineage = _Lineage(self)

    def add(self, doc_id: int, text: str) -> None:
        """Index the next document: ids run 1, 2, 3... with no gaps."""
        if doc_id != self._count + 1:
            raise ValueError(f"the next document is {self._count + 1}, got {doc_id}")
        words = terms(text)
        counts = Counter(words)
        named = entity_terms(text)
        while True:
            lineage = self._lineage
            with lineage.lock:
                if lineage is not self._lineage:
                    continue
                if lineage.owner is not self:
                    self._take(self._postings, self._doc_terms, self._entities)
                    continue
                for term, tf in counts.items():
                    posting = self._postings.get(term)
                    if posting is None:
                        posting = self._postings[term] = _Posting()
                    posting.add(doc_id, tf, len(words))
                self._doc_terms.append(tuple(counts))
                for term in named:
                    self._entities.setdefault(term, doc_id)
                self._total_length += len(words)
                self._count = doc_id
                return

    def doc_terms(self, doc_id: int) -> tuple[str, ...]:
        """Document `doc_id`'s distinct index terms, in the order they first appear."""
        return self._doc_terms[doc_id]

    def is_entity(self, term: str) -> bool:
        """True when `term` was ever written as a name (capitalised mid-sentence) or number."""
        return self._entities.get(term, self._count + 1) <= self._count

    def df(self, term: str) -> int:
        """How many documents hold `term`."""
        posting = self._postings.get(term)
        return posting.upto(self._count) if posting else 0

    def idf(self, term: str) -> float:
        """BM25's idf of `term` over every document indexed: log(1 + (n - df + .5)/(df + .5))."""
        df = self.df(term)
        return math.log(1 + (self._count - df + 0.5) / (df + 0.5))

    def scored(self, term: str) -> bool:
        """True when `term` is indexed and in at most `common` of the documents."""
        df = self.df(term)
        return 0 < df <= self.common * self._count

    def query_terms(self, query: str | Iterable[str]) -> list[str]:
        """The distinct query terms that are scored: indexed, and not in over `common` of docs."""
        found = terms(query) if isinstance(query, str) else list(query)
        limit = self.common * self._count
        seen: list[str] = []
        for term in found:
            df = self.df(term)
            if 0 < df <= limit and term not in seen:
                seen.append(term)
        return seen

    def scores(
        self,
        query: str | Mapping[str, float],
        *,
        max_id: int | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        """BM25 score of every document up to `max_id` sharing a scored term (others score 0).

        `query` is text, or terms with their weights (a term's BM25 part is multiplied by
        its weight); `weights` multiplies the named terms of a text query."""
        n = self._count
        out: dict[int, float] = {}
        top = n if max_id is None else min(max_id, n)
        if n == 0 or top < 1:
            return out
        if isinstance(query, str):
            extra = weights or {}
            weighted = {t: extra.get(t, 1.0) for t in self.query_terms(query)}
        else:
            weighted = {t: w for t, w in query.items() if w and self.scored(t)}
        avg = self._total_length / n or 1.0
        k1, b = self.k1, self.b
        kp1, base, per_word = k1 + 1, k1 * (1 - b), k1 * b / avg
        get = out.get
        for term, factor in weighted.items():
            posting = self._postings[term]
            df = posting.upto(n)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            weight = idf * kp1 * factor
            ids, tfs, lens = posting.ids, posting.tfs, posting.lens
            if ids[-1] > top:  # ids ascend: cut at `top`
                end = bisect_right(ids, top)
                ids, tfs, lens = ids[:end], tfs[:end], lens[:end]
            for doc_id, tf, length in zip(ids, tfs, lens, strict=True):
                out[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + base + per_word * length)
        return out

    def postings(self, term: str, *, max_id: int) -> list[int]:
        """The documents up to `max_id` that hold `term`, in id order."""
        posting = self._postings.get(term)
        if posting is None:
            return []
        ids = posting.ids
        top = min(max_id, self._count)
        return ids if ids[-1] <= top else ids[: bisect_right(ids, top)]

    def best(
        self, query: str, *, max_id: int | None = None, neighbours: float = 0.0
    ) -> Iterator[tuple[int, float]]:
        """Documents with a positive score, best first (ties: older first), lazily.

        With `neighbours` w > 0 a document's score is its own plus w x its neighbours' (ids
        one below and one above, up to `max_id`), so a neighbour of a hit can rank too.
        The work is proportional to the query terms' postings, not to the index size:
        candidates are heapified, not sorted, so taking the first r costs O(m + r log m)."""
        top = self._count if max_id is None else min(max_id, self._count)
        own = self.scores(query, max_id=top)
        return best_first(smoothed(own, neighbours, top))

    def ranked(
        self, query: str, *, max_id: int | None = None, neighbours: float = 0.0
    ) -> list[tuple[int, float]]:
        """Every document of `best`, as a list."""
        return list(self.best(query, max_id=max_id, neighbours=neighbours))

    def search(
        self, query: str, *, max_id: int | None = None, top: int = 3, neighbours: float = 0.0
    ) -> list[tuple[int, float]]:
        """The `top` best documents of `best`."""
        if top <= 0:
            return []
        return list(islice(self.best(query, max_id=max_id, neighbours=neighbours), top))
