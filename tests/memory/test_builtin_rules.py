"""Each built-in's declared blocks send exactly what its documented rule says (hypothesis).

The rules of the README's strategy table and the strategy modules' docstrings are written out
below once more, plainly, as small reference memories that keep their own turns, summary and
facts and build their payloads by hand (no engine, no History, no base class). For every
built-in in the registry (one added later without a rule here fails), at random valid
parameters, on random transcripts, with the stand-in summariser and extractor or summarisers
that write long summaries, and with upkeep calls that fail now and then: at every turn the
strategy's system text, messages and token count equal the rule's, both refuse
(ContextOverflow) together, and their upkeep calls (requests, replies, errors) match.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memory.errors import ContextOverflow, InvalidParameter
from memory.maintenance import Upkeep
from memory.ranking import DEFAULT_RANKING, RANKINGS
from memory.registry import REGISTRY, create
from memory.standins import ExtractiveSummariser, RuleExtractor, SizedSummariser
from memory.strategies.base import SUMMARY_ACK, SUMMARY_NOTE
from memory.strategies.recall import TurnRecall
from memory.types import Completion, MaintenanceCall, Message, Request, Turn
from tests.memory.test_contracts import CONTRACT, COUNTER, LONG, SYSTEM, params, shape, turns

BUILTINS = sorted(name for name, s in REGISTRY.items() if s.composition is None)
# more examples than the contract suite: the give-way paths need tight budgets and long turns
RULES_SETTINGS = settings(CONTRACT, max_examples=300 if LONG else 100)
WORDS = 120  # the summary prompt's word limit
count = COUNTER.count


class Flaky:
    """Wraps a model function; call number i fails when `fails[i % len(fails)]` is True."""

    def __init__(self, inner: Any, fails: Sequence[bool]) -> None:
        self.inner, self.fails, self.calls = inner, list(fails), 0

    def __call__(self, request: Request) -> Completion:
        self.calls += 1
        if self.fails and self.fails[(self.calls - 1) % len(self.fails)]:
            raise RuntimeError("upkeep call failed")
        result: Completion = self.inner(request)
        return result


class Rule:
    """A documented rule's memory: turns, the running summary (of turns 1..summarised), facts.

    `recent(user)` is the rule: the turns to send (ascending), after any folding it does
    first; `after()` is its upkeep after a turn."""

    uses_summary = uses_facts = False
    budget: int | None = None

    def __init__(self, upkeep: Upkeep, **p: Any) -> None:
        self.upkeep, self.p = upkeep, p
        self.turns: list[Turn] = []
        self.summary: str | None = None
        self.summarised = 0
        self.facts: dict[str, Any] = {}
        self.calls: list[MaintenanceCall] = []
        self.leave_out: set[str] = set()  # blocks left out of this request

    # the payload format (README: facts and summary in the system text, turns, new message)
    def system(self, summary: str | None) -> str:
        parts = [SYSTEM]
        if self.uses_facts and self.facts and "facts" not in self.leave_out:
            parts.append("Known facts about the user: " + json.dumps(self.facts, sort_keys=True, ensure_ascii=False))  # fmt: skip
        if summary and self.p.get("summary_placement", "system") == "system":
            parts.append(f"Summary of the earlier conversation: {summary}")
        if summary and self.p.get("summary_note"):
            parts.append(SUMMARY_NOTE)
        return "\n\n".join(parts)

    def pair(self, summary: str | None) -> list[Message]:
        if not summary or self.p.get("summary_placement", "system") != "message":
            return []
        return [Message("user", f"Summary of our earlier conversation: {summary}"),
                Message("assistant", SUMMARY_ACK)]  # fmt: skip

    def sent_summary(self) -> str | None:
        return None if "summary" in self.leave_out else self.summary

    def fixed(self, user: str) -> int:
        s = self.sent_summary()
        return count(self.system(s)) + sum(count(m.content) for m in self.pair(s)) + count(user)

    def cost(self, i: int) -> int:
        t = self.turns[i - 1]
        return count(t.user) + count(t.assistant)

    def newest(self, candidates: Sequence[int], room: int) -> list[int]:
        kept: list[int] = []
        for i in reversed(candidates):
            if sum(map(self.cost, kept)) + self.cost(i) > room:
                break
            kept.insert(0, i)
        return kept

    def unsummarised(self) -> list[int]:
        return list(range(self.summarised + 1, len(self.turns) + 1))

    # upkeep: the summary prompt, capped; facts by the extractor's set/delete
    def fold(self, indices: Sequence[int]) -> MaintenanceCall:
        call, new = self.upkeep.summary(COUNTER, self.summary, [self.turns[i - 1] for i in indices], words=WORDS)  # fmt: skip
        if new is not None:
            cap = self.cap()
            if cap is not None and count(new) > cap:
                new = COUNTER.truncate(new, cap)
            self.summary, self.summarised = new, self.summarised + len(indices)
        return call

    def cap(self) -> int | None:
        return None

    def extract(self) -> MaintenanceCall:
        call, update = self.upkeep.extraction(COUNTER, self.facts, self.turns[-1])
        if update is not None:
            for key in update[1]:
                self.facts.pop(key, None)
            self.facts.update(update[0])
        return call

    # the protocol the test drives
    def prepare(self, user: str) -> tuple[str, list[Message], list[MaintenanceCall]]:
        saved = (self.summary, self.summarised, dict(self.facts))
        self.calls, self.leave_out = [], set()
        try:
            sent = self.recent(user)
        except ContextOverflow:
            self.summary, self.summarised, self.facts = saved
            raise
        s = self.sent_summary()
        messages = [*self.pair(s)]
        for i in sent:
            messages += [Message("user", self.turns[i - 1].user), Message("assistant", self.turns[i - 1].assistant)]  # fmt: skip
        return self.system(s), [*messages, Message("user", user)], self.calls

    def commit(self, user: str, reply: str) -> list[MaintenanceCall]:
        self.turns.append(Turn(len(self.turns) + 1, user, reply))
        self.leave_out = set()  # left out of one request only: upkeep sees every block
        return self.after()

    def recent(self, user: str) -> list[int]:
        raise NotImplementedError

    def after(self) -> list[MaintenanceCall]:
        return []


class Full(Rule):
    """Every earlier turn, verbatim."""

    def recent(self, user: str) -> list[int]:
        return list(range(1, len(self.turns) + 1))


class Window(Rule):
    """The last K turns (K=0: only the new message)."""

    def recent(self, user: str) -> list[int]:
        n, k = len(self.turns), self.p["k"]
        return list(range(max(1, n - k + 1), n + 1)) if k else []


class TokenWindow(Rule):
    """The newest whole turns that fit a token budget (system prompt and new message counted)."""

    def recent(self, user: str) -> list[int]:
        budget = self.p["budget"]
        if count(SYSTEM) + count(user) > budget:
            raise ContextOverflow(count(SYSTEM) + count(user), budget)
        return self.newest(range(1, len(self.turns) + 1), budget - self.fixed(user))


class Summary(Rule):
    """A running summary of all earlier turns, updated every turn; turns whose fold failed
    stay verbatim until a fold works."""

    uses_summary = True

    def recent(self, user: str) -> list[int]:
        return self.unsummarised()

    def after(self) -> list[MaintenanceCall]:
        return [self.fold(self.unsummarised())]


class Entity(Rule):
    """A known-facts JSON block extracted after each turn, plus the last K turns."""

    uses_facts = True
    recent = Window.recent

    def after(self) -> list[MaintenanceCall]:
        return [self.extract()]


class SummaryBuffer(Rule):
    """Recent turns within a budget; older ones folded into a summary that counts against it.

    After a turn, past trigger x budget resting tokens, fold the oldest turns down to fold_to x
    budget; each fold takes the fewest oldest turns that free the excess plus the summary's
    expected growth (a second fold only if the summary came out longer). Before a turn, fold
    what the new message pushes over the budget; a summary that leaves the message no room is
    left out of that request (then the facts block, for hybrid); the summary is capped at half
    of what the budget leaves after the system text."""

    uses_summary = True

    def cap(self) -> int:
        return max(1, (self.p["budget"] - count(self.system(None))) // 2)

    def resting(self) -> int:
        s = self.summary
        return count(self.system(s)) + sum(count(m.content) for m in self.pair(s)) + sum(map(self.cost, self.unsummarised()))  # fmt: skip

    def growth(self) -> int:
        expected = min(math.ceil(WORDS * 4 / 3), self.cap())
        return max(0, expected - (count(self.summary) if self.summary else 0))

    def compress(self, limit: int, reserve: int = 0) -> list[MaintenanceCall]:
        calls: list[MaintenanceCall] = []
        while self.resting() + reserve > limit and self.unsummarised():
            buffer, freed, take = self.unsummarised(), 0, 0
            excess = self.resting() + reserve + self.growth() - limit
            while take < len(buffer) and freed < excess:
                freed, take = freed + self.cost(buffer[take]), take + 1
            calls.append(self.fold(buffer[:take]))
            if not calls[-1].ok:
                break
        return calls

    def recent(self, user: str) -> list[int]:
        budget = self.p["budget"]
        if count(SYSTEM) + count(user) > budget:
            raise ContextOverflow(count(SYSTEM) + count(user), budget)
        self.calls = self.compress(budget, count(user))
        if self.fixed(user) > budget:
            self.leave_out.add("summary")
            if self.fixed(user) > budget:
                self.leave_out.add("facts")
        return self.newest(self.unsummarised(), budget - self.fixed(user))

    def after(self) -> list[MaintenanceCall]:
        calls = [self.extract()] if self.uses_facts else []
        if self.resting() > math.floor(self.p["trigger"] * self.p["budget"]):
            calls += self.compress(math.floor(self.p["fold_to"] * self.p["budget"]))
        return calls


def ranked(rule: Rule, user: str, older: int, neighbours: float) -> list[int]:
    """Turns 1..older by the default ranking (BM25, neighbour-aware, with its bridging terms:
    tests/memory/test_ranking_terms.py checks them against their own brute-force reference)
    against the new message, best first."""
    recall = TurnRecall()
    for t in rule.turns:
        recall.learn(t, 1)
    ranking = RANKINGS[rule.p.get("ranking", DEFAULT_RANKING)]
    return [d for d, _ in recall.rank(user, older=older, neighbours=neighbours, ranking=ranking)]


def packed(rule: Rule, order: list[int], room: int, limit: int) -> list[int]:
    """Best first, each turn that fits the room left (0: no cap), at most `limit`; in order."""
    taken: list[int] = []
    for d in order:
        if len(taken) < limit and (not room or sum(map(rule.cost, taken)) + rule.cost(d) <= room):
            taken.append(d)
    return sorted(taken)


class Hybrid(SummaryBuffer):
    """Facts block + running summary + recent turns within one budget, plus older turns
    retrieved by relevance in up to recall_share of that budget, the room taken from the
    oldest recent turns."""

    uses_facts = True

    def recent(self, user: str) -> list[int]:
        recent = super().recent(user)
        budget = self.p["budget"]
        older = (recent[0] if recent else len(self.turns) + 1) - 1
        room = min(math.floor(self.p["recall_share"] * budget), budget - self.fixed(user))
        if room <= 0 or older <= 0:
            return recent
        hits = packed(self, ranked(self, user, older, self.p.get("neighbours", 0.25)), room, older)  # fmt: skip
        spare = budget - self.fixed(user) - sum(map(self.cost, recent))
        while recent and sum(map(self.cost, hits)) > spare:
            spare += self.cost(recent.pop(0))
        return hits + recent


class Retrieval(Rule):
    """The last K turns plus older turns ranked by BM25, packed into recall_budget (0: no cap)
    up to top_k, sent in conversation order before the recent ones."""

    def recent(self, user: str) -> list[int]:
        recent = Window.recent(self, user)
        older = (recent[0] if recent else len(self.turns) + 1) - 1
        if older <= 0 or self.p["top_k"] == 0:
            return recent
        order = ranked(self, user, older, self.p["neighbours"])
        return packed(self, order, self.p["recall_budget"], self.p["top_k"]) + recent


RULES: dict[str, type[Rule]] = {
    "full": Full,
    "window": Window,
    "token_window": TokenWindow,
    "summary": Summary,
    "summary_buffer": SummaryBuffer,
    "entity": Entity,
    "hybrid": Hybrid,
    "retrieval": Retrieval,
}

# many short turns on a few topics, so retrieval finds turns and budgets squeeze blocks
TOPICS = (" rent", " loan", " fund", " salary", " la")
topic_turn = st.builds(
    lambda head, n, word: head + COUNTER.text_of_tokens(n, word=word),
    st.sampled_from(("My rent is ₹25,000. ", "I'm Asha. ", "The loan EMI is 31,000. ", "")),
    st.integers(5, 150),
    st.sampled_from(TOPICS),
)
dense = st.lists(st.tuples(topic_turn, topic_turn), min_size=4, max_size=16)


def upkeep_of(calls: Sequence[MaintenanceCall]) -> list[tuple[Any, ...]]:
    return [(c.kind, shape(c.request), c.reply, c.error) for c in calls]


@pytest.mark.parametrize("name", BUILTINS)
@RULES_SETTINGS
@given(data=st.data())
def test_declared_blocks_send_what_the_rule_says(name: str, data: st.DataObject) -> None:
    options = data.draw(params(name), label="params")
    kind = data.draw(st.sampled_from(("extractive", "sized")), label="summariser")
    tokens = data.draw(st.integers(1, 400), label="summary tokens")
    fails = data.draw(st.lists(st.booleans(), max_size=4), label="failing calls")
    conversation = data.draw(turns | dense, label="turns")
    if "budget" in options and data.draw(st.booleans(), label="tight budget"):
        options["budget"] = data.draw(st.integers(COUNTER.count(SYSTEM) + 1, 900), label="budget")

    def models() -> Upkeep:
        inner = ExtractiveSummariser() if kind == "extractive" else SizedSummariser(COUNTER, tokens)
        return Upkeep(Flaky(inner, fails), Flaky(RuleExtractor(), fails[1:]))

    try:
        strategy = create(name, SYSTEM, counter=COUNTER, params=options, upkeep=models())
    except InvalidParameter:  # e.g. fold_to above trigger: refused at creation
        assume(False)
        raise
    rule = RULES[name](models(), **strategy_values(name, options))
    for number, (user, reply) in enumerate(conversation, 1):
        try:
            system, messages, calls = rule.prepare(user)
        except ContextOverflow:
            with pytest.raises(ContextOverflow):
                strategy.prepare(user)
            continue
        got = strategy.prepare(user)
        assert shape(got) == (system, tuple((m.role, m.content) for m in messages)), f"turn {number}"  # fmt: skip
        assert got.tokens == COUNTER.request(system, messages)
        assert upkeep_of(got.maintenance) == upkeep_of(calls), f"turn {number}: upkeep differs"
        after = upkeep_of(rule.commit(user, reply))
        assert upkeep_of(strategy.commit(user, reply)) == after, f"turn {number}: upkeep differs"


def strategy_values(name: str, options: dict[str, Any]) -> dict[str, Any]:
    return {**REGISTRY[name].defaults(), **options}


def test_every_builtin_has_a_written_rule() -> None:
    """The list above is the registry's: a new built-in is covered (and fails) automatically."""
    assert set(BUILTINS) >= {"full", "window", "summary", "hybrid", "retrieval"}
    assert set(BUILTINS) <= set(RULES), f"write the rule of {set(BUILTINS) - set(RULES)} here"
