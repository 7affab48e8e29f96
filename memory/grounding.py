"""Grounded facts: a value an extractor returns enters a fact store only if it can be traced
to the turn it was extracted from.

The rule, for any model:
* a number (an int, a float, or text that states amounts) by its value in any written form
  (memory/numbers.py: "₹1,20,000" = 120000 = "1.2 lakh"), every amount it names;
* a name or any other phrase by its content words (stemmed, stopwords out, as retrieval reads
  text): at least one of them is in the turn ("risk-averse" for "I'm a bit risk-averse");
* a yes/no value by its key's content words (`risk_averse: true` needs "risk" or "averse");
* a value with neither amounts nor content words (empty text, null) cannot be traced.

May import: memory/numbers.py and memory/bm25.py (the text readers); nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from memory.bm25 import terms
from memory.numbers import CURRENCY_WORDS, SCALES, TENS, UNITS, amounts_in

# words that only spell an amount ("lakh", "rupees", "twelve"): the amount rule reads them
_NUMBER_WORDS = frozenset(terms(" ".join([*SCALES, *CURRENCY_WORDS, *UNITS, *TENS])))


def _words(text: str) -> set[str]:
    """Content words of `text`: stemmed terms that are neither figures nor number words."""
    return {t for t in terms(text) if not t[0].isdigit() and t not in _NUMBER_WORDS}


def is_grounded(key: str, value: Any, source: str) -> bool:
    """Whether `value` (stored under `key`) can be traced to `source`, the turn's text."""
    if isinstance(value, bool):
        return bool(_words(key.replace("_", " ")) & _words(source))
    if isinstance(value, int | float):
        try:
            return Decimal(str(value)).normalize() in {a.normalize() for a in amounts_in(source)}
        except ArithmeticError:
            return False
    if not isinstance(value, str):
        return False
    stated = {a.normalize() for a in amounts_in(value)}
    if stated and not stated <= {a.normalize() for a in amounts_in(source)}:
        return False
    words = _words(value)
    if words:
        return bool(words & _words(source))
    return bool(stated)


def split_grounded(facts: Mapping[str, Any], source: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the facts that can be traced to `source`, the ones that cannot)."""
    kept: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for key, value in facts.items():
        (kept if is_grounded(key, value, source) else dropped)[key] = value
    return kept, dropped
