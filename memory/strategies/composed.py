"""The one strategy engine: it runs a Composition (memory/compose.py), block by block.

Every built-in strategy is a subclass that declares its blocks (`declare`, one small module
each under memory/strategies/); a composition from the Composer or a file runs here as it is.

Each turn, in this order:
1. the system prompt, the pinned turns and the new message must fit the overall budget
   (ContextOverflow naming them otherwise); nothing else is required;
2. a "threshold" summary folds the oldest unsummarised turns until the resting prompt plus the
   new message fits the budget (a failed fold stops folding);
3. the facts block is left out if it is over its own budget; then the blocks give way in
   give-way order until the request fits: a turn block (recent, retrieved) by counting as empty
   for now, a summary or facts block by being left out of this request (so a summary named
   before the recent turns is left out while all the recent turns still count);
4. the turn blocks fill the room left, the block that gives way last first: "recent" takes the
   newest unsummarised turns (its count, its budget, the room), "retrieved" packs the
   best-ranked turns older than the recent block's pick into its budget, its share of the
   overall budget and the room.
After a turn: the retrieval index learns it, the extractor updates the facts, then the summary
folds (every turn, or past its trigger). Assembly (the payload format) is the base class's.

May import: memory/compose.py, memory/grounding.py, memory/numbers.py, memory/standins.py,
memory/ranking.py, memory/strategies/base.py, checks.py and
recall.py, the memory
core's value types.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from memory.compose import Block, Composition
from memory.dense import embedder
from memory.errors import ContextOverflow, InvalidParameter
from memory.grounding import split_grounded
from memory.maintenance import NO_UPKEEP, Upkeep, parse_fact_update
from memory.numbers import amounts_in, contains_phrase
from memory.ranking import RANKINGS
from memory.standins import RuleExtractor
from memory.strategies.base import Strategy
from memory.strategies.checks import check_budget
from memory.strategies.recall import TurnRecall
from memory.tokens import TokenCounter
from memory.types import MaintenanceCall, Part, Request, TokenCount, Turn


def extract_facts(strategy: Strategy, turn: Turn, *, grounded: bool = True) -> MaintenanceCall:
    """Ask the extractor for updates from `turn` and apply them; invalid replies change nothing.
    With `grounded`, a value that cannot be traced to the turn is not stored (the call records
    it as ungrounded, memory/grounding.py), and what the rule extractor reads in the turn that
    neither the store nor the reply's grounded values state fills in (recorded as such): a
    small model that kept the name but missed the salary no longer loses the salary."""
    call, update = strategy.upkeep.extraction(strategy.counter, strategy.facts, turn)
    if update is not None:
        to_set, to_delete = update
        if grounded:  # a value the store already holds under its key is a copy, not a claim
            held = strategy.facts
            to_set = {k: v for k, v in to_set.items() if k not in held or held[k] != v}
            to_set, dropped = split_grounded(to_set, f"{turn.user}\n{turn.assistant}")
            filled = rule_facts(call.request, {**strategy.facts, **to_set})
            to_set.update(filled)
            if dropped or filled:
                call = dataclasses.replace(
                    call, ungrounded=key_values(dropped), filled_by_rules=key_values(filled)
                )
        for key in to_delete:
            strategy.facts.pop(key, None)
        strategy.facts.update(to_set)
    return call


def rule_facts(request: Request, held: Mapping[str, Any]) -> dict[str, Any]:
    """The rule extractor's facts for the turn an extraction request shows that no value in
    `held` states yet (by amount, or a name as written), each value once: they fill in what
    a model's reply missed (the rules read figures and names from the turn's own text, so they are grounded
    by construction)."""
    found, _ = parse_fact_update(RuleExtractor()(request).text)
    texts = [str(v) for v in held.values()]
    amounts = {a for t in texts for a in amounts_in(t)}
    out: dict[str, Any] = {}
    for key, value in found.items():
        stated = amounts_in(str(value))
        if key in held or (stated and stated <= amounts):
            continue
        if not stated and any(contains_phrase(t, str(value)) for t in texts):
            continue
        out[key] = value  # and once only: the assistant repeating a figure adds no second key
        texts.append(str(value))
        amounts |= stated
    return out


def key_values(facts: Mapping[str, Any]) -> tuple[str, ...]:
    """Facts as 'key=JSON' lines, as upkeep records list them."""
    return tuple(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in facts.items())


def gave_way(kind: str) -> str:
    """The account's note for a summary or facts block left out of one request."""
    what = "the summary" if kind == "summary" else "the known-facts block"
    return (
        f"the {kind} block gave way this turn to fit the budget: {what} was left out of this "
        "request (it stays in memory)"
    )


class Composed(Strategy):
    """Runs the composition `declare` returns for the parameters it was created with."""

    composition: ClassVar[Composition]  # set on a subclass `composed_class` makes

    @classmethod
    def declare(cls, *args: Any, **values: Any) -> Composition:
        """The composition this strategy runs at `values` (its registered parameters); a
        built-in overrides this with its declaration, keyword by keyword."""
        return cls.composition.with_values(values) if values else cls.composition

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Which model functions the strategy needs follows from its blocks at their defaults."""
        super().__init_subclass__(**kwargs)
        if "declare" in vars(cls) or "composition" in vars(cls):
            declared = cls.declare()
            cls.uses_summary = declared.uses_summary
            cls.uses_facts = declared.uses_facts

    def __init__(
        self,
        system_prompt: str,
        *,
        counter: TokenCounter,
        upkeep: Upkeep = NO_UPKEEP,
        **values: Any,
    ) -> None:
        comp = self.declare(**values)
        summary = comp.block("summary")
        super().__init__(
            system_prompt,
            counter=counter,
            upkeep=upkeep,
            summary_placement="message" if summary and summary.placement == "message" else "system",
            summary_note=bool(summary and summary.note),
            trigger=summary.trigger if summary else 0.8,
        )
        for name, value in values.items():  # a built-in's parameters, by name (window.k)
            if not hasattr(self, name):
                setattr(self, name, value)
        self.comp = comp
        self.budget: int | None = None
        if comp.budget is not None:
            self.budget = check_budget(comp.budget, counter.count(system_prompt))
        self.summary_block = summary
        self.facts_block = comp.block("facts")
        self.recent_block = comp.block("recent")
        self.retrieved_block = comp.block("retrieved")
        self.pinned_block = comp.block("pinned")
        ranking = RANKINGS[self.retrieved_block.ranking] if self.retrieved_block else None
        self.recall = TurnRecall(embed=embedder() if ranking and ranking.dense else None)

    # --- the blocks' picks ------------------------------------------------------------------

    def pinned_turns(self) -> list[int]:
        """The pinned turns that exist so far, ascending, within the pinned block's budget."""
        block = self.pinned_block
        if block is None:
            return []
        n = len(self.history)
        wanted = sorted({*block.turns, *range(1, block.first + 1)})
        chosen = [i for i in wanted if i <= n]
        if block.budget is None:
            return chosen
        kept, used = [], 0
        for index in chosen:
            cost = self.history.tokens([index])
            if used + cost <= block.budget:
                kept.append(index)
                used += cost
        return kept

    def unsummarised(self, pinned: set[int]) -> Sequence[int]:
        """Turns not yet folded into the summary and not pinned, oldest first (a range, with
        O(1) slices and token sums, when nothing is pinned)."""
        turns = range(len(self.summarised) + 1, len(self.history) + 1)
        return [i for i in turns if i not in pinned] if pinned else turns

    def recent_pick(self, candidates: Sequence[int], room: int | None) -> Sequence[int]:
        """The recent block's turns: the last `count`, then the newest in its budget and room."""
        block = self.recent_block
        if block is None:
            return []
        picked = candidates
        if block.count is not None:
            picked = picked[max(0, len(picked) - block.count) :] if block.count else []
        for cap in (block.budget, room):
            if cap is not None:
                picked = self.newest_fitting(picked, cap)
        return picked

    def retrieve(
        self, user_text: str, older: int, room: int | None, pinned: set[int]
    ) -> tuple[list[tuple[int, float]], int]:
        """Turns 1..older (not pinned) best matching the message, packed in the block's caps;
        and the token cap they were packed into (0: none)."""
        block = self.retrieved_block
        if block is None or older <= 0 or block.top_k == 0:
            return [], 0
        share = None
        if block.share is not None and self.budget is not None:
            share = math.floor(block.share * self.budget)
        caps = [c for c in (block.budget, share, room) if c is not None]
        cap = min(caps) if caps else 0  # 0: no token cap
        if caps and cap <= 0:
            return [], 0
        hits = self.recall.pick(
            user_text,
            older=older,
            neighbours=block.neighbours,
            budget=cap,
            limit=older if block.top_k is None else block.top_k,
            skip=pinned,
            ranking=RANKINGS[block.ranking],
        )
        return hits, cap

    def turn_wants(
        self, user_text: str, candidates: Sequence[int], pinned: set[int], order: tuple[str, ...]
    ) -> dict[str, int]:
        """Tokens each turn block would take within its own limits alone: a summary or facts
        block named before a turn block in `order` gives way while that block still counts
        whole. {} when every turn block is named before every summary and facts block."""
        systemic = [i for i, kind in enumerate(order) if kind in ("summary", "facts")]
        turn_blocks = [i for i, kind in enumerate(order) if kind in ("recent", "retrieved")]
        if not systemic or not turn_blocks or max(turn_blocks) < min(systemic):
            return {}
        recent = self.recent_pick(candidates, None)
        out = {"recent": self.history.tokens(recent)}
        older = (recent[0] if recent else len(self.history) + 1) - 1
        hits, _ = self.retrieve(user_text, older, None, pinned)
        out["retrieved"] = self.history.tokens(sorted(d for d, _ in hits))
        return out

    def facts_tokens(self) -> int:
        """What the known-facts block adds to the system text."""
        count = self.counter.count
        return count(self.system_text(None)) - count(self.system_prompt)

    # --- building a request ------------------------------------------------------------------

    def _build(self, user_text: str) -> Request:
        budget = self.budget
        pinned = self.pinned_turns()
        pinned_set = set(pinned)
        pinned_tokens = self.history.tokens(pinned)
        message = self.counter.count(user_text)
        if budget is not None:
            needed = self.counter.count(self.system_prompt) + pinned_tokens + message
            if needed > budget:
                what = "the system prompt, the pinned turns and the new message"
                raise ContextOverflow(
                    needed, budget, what=what if pinned else "the system prompt and the new message"
                )
        calls: list[MaintenanceCall] = []
        if budget is not None and self._threshold():
            calls = self.compress(budget, reserve=message)
        notes: list[str] = []
        keep = {"summary": self.summary_block is not None, "facts": self.facts_block is not None}
        limit = self.facts_block.budget if self.facts_block else None
        if keep["facts"] and limit is not None and self.facts and self.facts_tokens() > limit:
            keep["facts"] = False
            notes.append(f"the known-facts block was left out: it is over its {limit}-token budget")

        def fixed() -> int:
            summary = self.summary if keep["summary"] else None
            return self.fixed_tokens(user_text, summary, facts=keep["facts"]) + pinned_tokens

        order = self.comp.yield_order()
        candidates = self.unsummarised(pinned_set)
        if budget is not None:
            # turn blocks still to give way count whole; one that gave way counts as empty here
            # and takes what room is left below
            later = self.turn_wants(user_text, candidates, pinned_set, order)
            for kind in order:
                later.pop(kind, None)
                if kind not in keep or fixed() + sum(later.values()) <= budget:
                    continue
                if keep[kind]:
                    keep[kind] = False
                    if kind == "summary" and not self.summary:
                        continue
                    notes.append(gave_way(kind))
        room = None if budget is None else budget - fixed()
        wanted = self.recent_pick(candidates, room)
        older = (wanted[0] if wanted else len(self.history) + 1) - 1
        recent: Sequence[int] = ()
        hits: list[tuple[int, float]] = []
        cap = 0
        taken: Sequence[int]
        for kind in reversed(order):  # the block that gives way last takes its room first
            if kind == "recent":
                recent = wanted if room is None else self.newest_fitting(wanted, room)
                taken = recent
            elif kind == "retrieved":
                hits, cap = self.retrieve(user_text, older, room, pinned_set)
                taken = [d for d, _ in hits]
            else:
                continue
            if room is not None:
                room -= self.history.tokens(taken)
        retrieved = [d for d, _ in hits]
        notes.extend(f"turn {d}: retrieved, score {s:.2f}" for d, s in hits)
        if hits and cap:
            notes.append(f"retrieved block: {self.history.tokens(retrieved)} of {cap} tokens")
        notes.extend(self._recent_notes(candidates, wanted, recent, calls))
        return self.request(
            user_text,
            sorted([*pinned, *retrieved, *recent]),
            budget=budget,
            retrieved=retrieved,
            maintenance=calls,
            notes=notes,
            with_summary=keep["summary"],
            with_facts=keep["facts"],
        )

    def _recent_notes(
        self,
        candidates: Sequence[int],
        wanted: Sequence[int],
        recent: Sequence[int],
        calls: Sequence[MaintenanceCall],
    ) -> list[str]:
        """A note when the budget left out recent turns that are neither summarised nor sent:
        always when the retrieved block took their room; with a summary, whenever the room cut
        the recent block's own pick (a plain token window drops old turns by design)."""
        if len(recent) == len(wanted) and (
            self.summary_block is None or len(recent) == len(self.recent_pick(candidates, None))
        ):
            return []
        if any(not c.ok for c in calls):
            return ["the summariser failed: the oldest recent turns were left out this turn"]
        return ["the oldest recent turns gave way this turn to fit the budget"]

    def _threshold(self) -> bool:
        return self.summary_block is not None and self.summary_block.policy == "threshold"

    @property
    def threshold(self) -> int | None:
        """Resting tokens above which a threshold summary folds: floor(trigger x budget)."""
        block = self.summary_block
        if block is None or self.budget is None or block.policy != "threshold":
            return None
        return math.floor(block.trigger * self.budget)

    # --- upkeep -------------------------------------------------------------------------------

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        self._restored_turn(turn)
        calls: list[MaintenanceCall] = []
        if self.facts_block is not None:
            calls.append(extract_facts(self, turn, grounded=self.facts_block.grounded))
        block = self.summary_block
        if block is None:
            return calls
        if block.policy == "every_turn":
            recent = self.recent_block
            spared = recent.count if recent is not None and recent.count is not None else 0
            due = list(range(len(self.summarised) + 1, len(self.history) + 1 - spared))
            if due:
                calls.append(self.fold(due))
            return calls
        threshold = self.threshold
        if threshold is not None and self.budget is not None and self.resting_tokens() > threshold:
            calls.extend(self.compress(math.floor(block.fold_to * self.budget)))
        return calls

    def resting_tokens(self) -> int:
        """System text (with summary and facts), summary messages and the unsummarised turns."""
        pinned = set(self.pinned_turns())
        return (
            self.counter.count(self.system_text(self.summary))
            + self.counter.count_messages(self.summary_messages(self.summary))
            + self.history.tokens(self.unsummarised(pinned))
        )

    def compress(self, limit: int, *, reserve: int = 0) -> list[MaintenanceCall]:
        """Fold the fewest oldest turns that bring resting tokens + `reserve` to `limit`,
        counting on the summary's expected growth (`expected_growth`), and again after each
        fold if the summary grew more; stops when a fold fails or nothing is left."""
        calls: list[MaintenanceCall] = []
        pinned = set(self.pinned_turns())
        excess = self.resting_tokens() + reserve - limit
        while excess > 0 and len(self.summarised) < len(self.history):
            first = len(self.summarised) + 1
            last, freed = first, 0
            wanted = excess + self.expected_growth()
            for last in range(first, len(self.history) + 1):
                freed += 0 if last in pinned else self.history.tokens([last])
                if freed >= wanted:
                    break
            call = self.fold(list(range(first, last + 1)))
            calls.append(call)
            if not call.ok:
                break
            excess = self.resting_tokens() + reserve - limit
        return calls

    def summary_cap(self) -> int | None:
        """The summary block's budget; a threshold summary with none takes at most half of
        what the overall budget leaves after the system text (the rest is for turns)."""
        block = self.summary_block
        if block is not None and block.budget is not None:
            return max(1, block.budget)
        if self.budget is not None and self._threshold():
            return max(1, (self.budget - self.counter.count(self.system_text(None))) // 2)
        return None

    # --- index and copies ------------------------------------------------------------------------

    def _restored_turn(self, turn: Turn) -> None:
        tokens = self.history.tokens([turn.index])
        self.recall.learn(turn, tokens, indexed=self.retrieved_block is not None)

    def _fork_extra(self, other: Strategy) -> None:
        assert isinstance(other, Composed)
        other.recall = self.recall.copy()

    def _parts(
        self,
        system: str,
        extra: Any,
        verbatim: Any,
        retrieved: Any,
        user_text: str,
        tokens: TokenCount,
        *,
        with_facts: bool = True,
        with_summary: bool = True,
    ) -> tuple[Part, ...]:
        """The base split, with the pinned turns taken out of "recent" into their own part."""
        parts = super()._parts(
            system, extra, verbatim, retrieved, user_text, tokens,
            with_facts=with_facts, with_summary=with_summary,
        )  # fmt: skip
        pinned = tuple(i for i in self.pinned_turns() if i in set(verbatim))
        if not pinned:
            return parts
        out = []
        for part in parts:
            if part.name == "pinned":
                part = Part("pinned", self.history.tokens(pinned), pinned)
            elif part.name == "recent":
                rest = tuple(i for i in part.turns if i not in pinned)
                part = Part("recent", self.history.tokens(rest), rest)
            out.append(part)
        return tuple(out)


def blocks(
    cls: type[Strategy],
    *parts: Block,
    budget: int | None = None,
    give_way: tuple[str, ...] = (),
) -> Composition:
    """A built-in's declaration: its blocks (and overall budget, give-way order) as the
    Composition the engine runs, named and described as the class is."""
    return Composition(
        cls.name,
        parts,
        budget=budget,
        give_way=give_way,
        title=cls.title,
        description=cls.description,
    )


def composed_class(composition: Composition) -> type[Composed]:
    """A Composed subclass for `composition`: its name, title and description, and which
    model functions it needs, as class attributes (as every registered strategy has them)."""
    if not isinstance(composition, Composition):
        raise InvalidParameter(f"a Composition is required, got {type(composition).__name__}")
    attrs: dict[str, Any] = {
        "name": composition.name,
        "title": composition.title or composition.name.replace("_", " ").capitalize(),
        "description": composition.description or describe(composition),
        "composition": composition,
    }
    return type(f"Composed_{composition.name}", (Composed,), attrs)


def compose_strategy(
    composition: Composition,
    system_prompt: str,
    *,
    counter: TokenCounter,
    upkeep: Upkeep = NO_UPKEEP,
    values: Mapping[str, Any] | None = None,
) -> Composed:
    """A running strategy for `composition` (registered or not), with some values changed."""
    cls = composed_class(composition)
    return cls(system_prompt, counter=counter, upkeep=upkeep, **dict(values or {}))


def describe(composition: Composition) -> str:
    """A one-line description from the blocks: 'pinned + summary + recent turns, in 800 tokens'."""
    names = {"recent": "recent turns", "retrieved": "retrieved turns", "facts": "known facts"}
    text = " + ".join(_describe_block(b, names.get(b.kind, b.kind)) for b in composition.blocks)
    if composition.budget is not None:
        text += f", within {composition.budget} tokens"
    return text[0].upper() + text[1:] + "."


def _describe_block(block: Block, name: str) -> str:
    if block.kind == "recent" and block.count is not None:
        name = f"last {block.count} turns"
    if block.budget is not None:
        name += f" ({block.budget} tokens)"
    return name
