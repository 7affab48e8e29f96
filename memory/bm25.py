"""A small incremental BM25 index over conversation turns (Okapi BM25, k1=1.5, b=0.75).

Turns are added one at a time; adding is O(terms in the turn) and a query touches only
the postings of its own terms, so retrieval stays cheap as a conversation grows.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

_WORD = re.compile(r"[\w₹$€£]+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be but by do does for from has have how i i'm in is it its me my of on "
    "or so that the their there this to was we what when where which who will with you your".split()
)


def terms(text: str) -> list[str]:
    """Lower-cased word terms without stopwords."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


class BM25Index:
    """Documents keyed by an int id; `search` returns (id, score) best first."""

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._lengths: dict[int, int] = {}
        self._postings: dict[str, dict[int, int]] = defaultdict(dict)
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def copy(self) -> BM25Index:
        """An independent copy (postings are copied; they change as documents are added)."""
        other = BM25Index(k1=self.k1, b=self.b)
        other._lengths = dict(self._lengths)
        other._postings = defaultdict(dict, {t: dict(p) for t, p in self._postings.items()})
        other._total_length = self._total_length
        return other

    def add(self, doc_id: int, text: str) -> None:
        """Index one document (ids must be new)."""
        if doc_id in self._lengths:
            raise ValueError(f"document {doc_id} is already indexed")
        words = terms(text)
        self._lengths[doc_id] = len(words)
        self._total_length += len(words)
        for term, tf in Counter(words).items():
            self._postings[term][doc_id] = tf

    def search(
        self, query: str, *, max_id: int | None = None, top: int = 3
    ) -> list[tuple[int, float]]:
        """The `top` best-scoring documents with a score above zero, ids up to `max_id` only."""
        n = len(self._lengths)
        if n == 0 or top <= 0:
            return []
        avg = self._total_length / n or 1.0
        scores: dict[int, float] = defaultdict(float)
        for term in set(terms(query)):
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc_id, tf in posting.items():
                if max_id is not None and doc_id > max_id:
                    continue
                length = self._lengths[doc_id]
                norm = tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / avg))
                scores[doc_id] += idf * norm
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [(d, s) for d, s in ranked[:top] if s > 0]
