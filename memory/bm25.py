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
from collections.abc import Iterable, Iterator
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


def terms(text: str) -> list[str]:
    """Index terms: tokens without stopwords or single letters, words stemmed."""
    out = []
    for token in tokens(text):
        if token[0].isdigit():
            out.append(token)
        elif len(token) > 1 and token not in STOPWORDS:
            out.append(_stem(token))
    return out


class _Posting:
    """One term's documents in id order, with their term frequencies and lengths."""

    __slots__ = ("ids", "lens", "tfs")

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.tfs: list[int] = []
        self.lens: list[int] = []

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, doc_id: int, tf: int, length: int) -> None:
        self.ids.append(doc_id)
        self.tfs.append(tf)
        self.lens.append(length)

    def copy(self) -> _Posting:
        other = _Posting()
        other.ids, other.tfs, other.lens = list(self.ids), list(self.tfs), list(self.lens)
        return other


class BM25Index:
    """Documents numbered 1, 2, 3... in order (conversation turns); `best`/`ranked`/`search`
    give (id, score) best first."""

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, common: float = 0.5) -> None:
        if not 0 < common <= 1:
            raise ValueError(f"common is a share of the documents in (0, 1], got {common}")
        self.k1, self.b, self.common = k1, b, common
        self._postings: dict[str, _Posting] = {}
        self._total_length = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def copy(self) -> BM25Index:
        """An independent copy (postings are copied; they change as documents are added)."""
        other = BM25Index(k1=self.k1, b=self.b, common=self.common)
        other._postings = {t: p.copy() for t, p in self._postings.items()}
        other._total_length = self._total_length
        other._count = self._count
        return other

    def add(self, doc_id: int, text: str) -> None:
        """Index the next document: ids run 1, 2, 3... with no gaps."""
        if doc_id != self._count + 1:
            raise ValueError(f"the next document is {self._count + 1}, got {doc_id}")
        words = terms(text)
        self._count = doc_id
        self._total_length += len(words)
        for term, tf in Counter(words).items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = _Posting()
            posting.add(doc_id, tf, len(words))

    def query_terms(self, query: str | Iterable[str]) -> list[str]:
        """The distinct query terms that are scored: indexed, and not in over `common` of docs."""
        found = terms(query) if isinstance(query, str) else list(query)
        limit = self.common * self._count
        seen: list[str] = []
        for term in found:
            posting = self._postings.get(term)
            if posting and len(posting) <= limit and term not in seen:
                seen.append(term)
        return seen

    def scores(self, query: str, *, max_id: int | None = None) -> dict[int, float]:
        """BM25 score of every document up to `max_id` sharing a scored term (others score 0)."""
        n = self._count
        out: dict[int, float] = {}
        top = n if max_id is None else min(max_id, n)
        if n == 0 or top < 1:
            return out
        avg = self._total_length / n or 1.0
        k1, b = self.k1, self.b
        kp1, base, per_word = k1 + 1, k1 * (1 - b), k1 * b / avg
        get = out.get
        for term in self.query_terms(query):
            posting = self._postings[term]
            df = len(posting)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            weight = idf * kp1
            ids, tfs, lens = posting.ids, posting.tfs, posting.lens
            if ids[-1] > top:  # ids ascend: cut at `top`
                end = bisect_right(ids, top)
                ids, tfs, lens = ids[:end], tfs[:end], lens[:end]
            for doc_id, tf, length in zip(ids, tfs, lens, strict=True):
                out[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + base + per_word * length)
        return out

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
        if neighbours > 0 and own:
            smoothed = dict(own)
            get = smoothed.get
            for doc_id, score in own.items():
                share = neighbours * score
                if doc_id > 1:
                    smoothed[doc_id - 1] = get(doc_id - 1, 0.0) + share
                if doc_id < top:
                    smoothed[doc_id + 1] = get(doc_id + 1, 0.0) + share
            own = smoothed
        heap = [(-score, doc_id) for doc_id, score in own.items() if score > 0]
        heapq.heapify(heap)
        while heap:
            score, doc_id = heapq.heappop(heap)
            yield doc_id, -score

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
