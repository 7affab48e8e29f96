"""The strategy base: history with incremental token sums, request assembly, shared options.

A strategy's life per turn: `prepare(user_text)` returns the Request to send (it may run
maintenance first and raises ContextOverflow before touching any state when nothing fits);
after the reply, `commit(user_text, reply)` stores the turn and returns the maintenance
calls it made (summary updates, fact extraction). A turn that failed is simply not committed.

The composed engine (memory/strategies/composed.py) builds on it; so may a plugin's strategy.
May import: memory/maintenance.py and the memory core's value types.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Sequence
from itertools import chain
from typing import Any, ClassVar, Literal

from memory.errors import InvalidMessage, InvalidParameter
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.tokens import TokenCounter
from memory.types import (
    Account,
    MaintenanceCall,
    Message,
    Part,
    Request,
    TokenCount,
    Turn,
)

Placement = Literal["system", "message"]
SUMMARY_NOTE = (
    "(Earlier turns of this conversation were summarised; details may be missing. "
    "Ask the user if you need specifics.)"
)
SUMMARY_ACK = "Understood, I will keep that summary in mind."


def check_user_text(text: object) -> str:
    """The user's message if it can be sent; InvalidMessage with the reason otherwise."""
    if not isinstance(text, str):
        raise InvalidMessage(f"a message must be text, got {type(text).__name__}")
    if not text.strip():
        raise InvalidMessage("the message is empty: type something before sending")
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidMessage(
            f"the message is {len(text):,} characters long; at most {MAX_MESSAGE_CHARS:,} can be "
            "sent (about 25,000 tokens): shorten it or send it in parts"
        )
    bad = UNSENDABLE.search(text)
    if bad:  # no database (and no UTF-8 wire format) can hold these: say so before sending
        what = "a NUL character" if bad.group() == "\x00" else "a broken character (lone surrogate)"
        raise InvalidMessage(
            f"the message contains {what} at position {bad.start() + 1}: remove it (often a "
            "damaged copy and paste) and send again"
        )
    return text


UNSENDABLE = re.compile("[\x00\ud800-\udfff]")
# one message's length at most, typed or imported: every lane resends it on every later turn,
# so one huge paste multiplies through the whole session's payloads, database and exports
MAX_MESSAGE_CHARS = 100_000


class History:
    """Completed turns with per-turn token counts and prefix sums (O(1) range totals)."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.turns: list[Turn] = []
        self._flat: list[Message] = []  # turn i's messages at 2(i-1), 2(i-1)+1
        self._prefix: list[int] = [0]  # _prefix[i] = tokens of turns 1..i
        self._pairs: list[list[str]] = []  # [user, assistant] per turn, as a snapshot holds it

    def __len__(self) -> int:
        return len(self.turns)

    def append(self, user: str, assistant: str) -> Turn:
        """Store a finished turn and count it once."""
        turn = Turn(len(self.turns) + 1, user, assistant)
        self.turns.append(turn)
        self._flat.extend(turn.messages())
        self._pairs.append([user, assistant])
        tokens = self.counter.count(user) + self.counter.count(assistant)
        self._prefix.append(self._prefix[-1] + tokens)
        return turn

    def copy(self) -> History:
        """An independent copy sharing the (immutable) turns and the counter."""
        other = History(self.counter)
        other.turns = list(self.turns)
        other._flat = list(self._flat)
        other._prefix = list(self._prefix)
        other._pairs = list(self._pairs)
        return other

    def turn(self, index: int) -> Turn:
        """Turn `index` (1-based)."""
        return self.turns[index - 1]

    def pairs(self) -> list[list[str]]:
        """Every turn as [user, assistant]: a new list of pair lists that are shared between
        calls and with copies (a turn never changes once stored, so nobody may change them)."""
        return list(self._pairs)

    def messages(self, indices: Sequence[int]) -> list[Message]:
        """The user/assistant messages of the given turns (ascending); ranges are one slice."""
        if not indices:
            return []
        first, last = indices[0], indices[-1]
        if last - first + 1 == len(indices):
            return self._flat[2 * (first - 1) : 2 * last]
        out: list[Message] = []
        for i in indices:
            out.extend(self._flat[2 * (i - 1) : 2 * i])
        return out

    def tokens(self, indices: Sequence[int]) -> int:
        """Content tokens of the given turns (ascending); contiguous ranges cost O(1)."""
        if not indices:
            return 0
        first, last = indices[0], indices[-1]
        if last - first + 1 == len(indices):
            return self._prefix[last] - self._prefix[first - 1]
        return sum(self._prefix[i] - self._prefix[i - 1] for i in indices)


class Strategy:
    """Base of every strategy. Subclasses implement `_build` and, if they need it, `_after_turn`."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    uses_summary: ClassVar[bool] = False
    uses_facts: ClassVar[bool] = False

    def __init__(
        self,
        system_prompt: str,
        *,
        counter: TokenCounter,
        upkeep: Upkeep = NO_UPKEEP,
        summary_placement: Placement = "system",
        summary_note: bool = False,
        trigger: float = 0.8,
        summary_words: int = 120,
    ) -> None:
        if not isinstance(system_prompt, str):
            raise InvalidParameter("the system prompt must be text")
        if summary_placement not in ("system", "message"):
            raise InvalidParameter("summary_placement is 'system' or 'message'")
        if not 0 < trigger <= 1:
            raise InvalidParameter(f"trigger is a fraction of the budget in (0, 1], got {trigger}")
        if not isinstance(upkeep, Upkeep):
            raise InvalidParameter(f"upkeep is an Upkeep value, got {type(upkeep).__name__}")
        if self.uses_summary and upkeep.summarize is None:
            raise InvalidParameter(f"the {self.name} strategy needs a summariser model function")
        if self.uses_facts and upkeep.extract is None:
            raise InvalidParameter(f"the {self.name} strategy needs an extractor model function")
        self.system_prompt = system_prompt
        self.counter = counter
        self.upkeep = upkeep
        self.summary_placement: Placement = summary_placement
        self.summary_note = summary_note
        self.trigger = trigger
        self.summary_words = summary_words
        self.history = History(counter)
        self.summary: str | None = None
        self.summarised: list[int] = []  # turns folded into the summary: always 1..m
        self.facts: dict[str, Any] = {}
        self.summary_truncated: int | None = None  # the cap, once a summary had to be cut

    # --- the per-turn protocol -------------------------------------------------------------

    def prepare(self, user_text: str) -> Request:
        """The Request for the next turn (state is unchanged if this raises)."""
        text = check_user_text(user_text)
        saved = (self.summary, list(self.summarised), dict(self.facts), self.summary_truncated)
        try:
            return self._build(text)
        except BaseException:
            # a strategy may fold turns before it finds the request cannot be sent: undo it
            self.summary, self.summarised, self.facts, self.summary_truncated = saved
            raise

    def commit(self, user_text: str, reply: str) -> tuple[MaintenanceCall, ...]:
        """Store the completed turn; returns the maintenance calls made to update memory."""
        check_user_text(user_text)
        if not isinstance(reply, str):
            raise InvalidMessage(f"a reply must be text, got {type(reply).__name__}")
        turn = self.history.append(user_text, reply)
        return tuple(self._after_turn(turn))

    def snapshot(self) -> dict[str, Any]:
        """The strategy's memory as plain JSON-ready data (for saving a session)."""
        return {
            "strategy": self.name,
            "turns": self.history.pairs(),
            "summary": self.summary,
            "summarised": len(self.summarised),
            "facts": dict(self.facts),
            "summary_truncated": self.summary_truncated,
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Load a `snapshot` into this (fresh) strategy: no model is called."""
        if data.get("strategy") != self.name:
            raise InvalidParameter(
                f"a {data.get('strategy')!r} snapshot cannot restore a {self.name!r} strategy"
            )
        if len(self.history):
            raise InvalidParameter("restore into a fresh strategy (this one has turns)")
        for user, assistant in data["turns"]:
            turn = self.history.append(user, assistant)
            self._restored_turn(turn)
        self.summary = data.get("summary")
        self.summarised = list(range(1, int(data.get("summarised", 0)) + 1))
        self.facts = dict(data.get("facts") or {})
        self.summary_truncated = data.get("summary_truncated")

    def _restored_turn(self, turn: Turn) -> None:
        """Subclasses rebuild derived state (an index) for each restored turn here."""

    def fork(self) -> Strategy:
        """An independent copy of this strategy's state, e.g. to probe without changing it."""
        other = copy.copy(self)
        other.history = self.history.copy()
        other.summarised = list(self.summarised)
        other.facts = dict(self.facts)
        self._fork_extra(other)
        return other

    def _fork_extra(self, other: Strategy) -> None:
        """Subclasses with more mutable state copy it here."""

    def _build(self, user_text: str) -> Request:
        raise NotImplementedError

    def _after_turn(self, turn: Turn) -> list[MaintenanceCall]:
        return []

    # --- assembly helpers -----------------------------------------------------------------

    def system_text(self, summary: str | None = None, *, facts: bool = True) -> str:
        """The system prompt, unchanged, then the entity block and summary where they apply."""
        parts = [self.system_prompt]
        if facts and self.uses_facts and self.facts:
            block = json.dumps(self.facts, ensure_ascii=False, sort_keys=True)
            parts.append(f"Known facts about the user: {block}")
        if summary and self.summary_placement == "system":
            parts.append(f"Summary of the earlier conversation: {summary}")
        if summary and self.summary_note:
            parts.append(SUMMARY_NOTE)
        return "\n\n".join(parts)

    def summary_messages(self, summary: str | None) -> list[Message]:
        """The summary as a user/assistant pair before the recent turns, if placed there."""
        if not summary or self.summary_placement != "message":
            return []
        return [
            Message("user", f"Summary of our earlier conversation: {summary}"),
            Message("assistant", SUMMARY_ACK),
        ]

    def fixed_tokens(self, user_text: str, summary: str | None, *, facts: bool = True) -> int:
        """Tokens every request of this state carries: system text, summary, new message."""
        extra = self.summary_messages(summary)
        return (
            self.counter.count(self.system_text(summary, facts=facts))
            + self.counter.count_messages(extra)
            + self.counter.count(user_text)
        )

    def newest_fitting(self, candidates: Sequence[int], room: int) -> list[int]:
        """The newest whole turns of `candidates` (ascending) whose tokens fit in `room`."""
        kept: list[int] = []
        used = 0
        for index in reversed(candidates):
            cost = self.history.tokens([index])
            if used + cost > room:
                break
            kept.append(index)
            used += cost
        kept.reverse()
        return kept

    def fold(self, turns: Sequence[int]) -> MaintenanceCall:
        """Fold `turns` into the running summary; on failure the old summary stays."""
        # the summary always covers a prefix of the history: 1..len(summarised)
        assert list(turns) == list(
            range(len(self.summarised) + 1, len(self.summarised) + 1 + len(turns))
        )
        call, summary = self.upkeep.summary(
            self.counter,
            self.summary,
            [self.history.turn(i) for i in turns],
            words=self.summary_words,
        )
        if summary is not None:
            cap = self.summary_cap()
            if cap is not None and self.counter.count(summary) > cap:
                summary = self.counter.truncate(summary, cap)
                self.summary_truncated = cap
            self.summary = summary
            self.summarised.extend(turns)
        return call

    def summary_cap(self) -> int | None:
        """The most tokens a summary may take (None: no cap). Budgeted strategies set one."""
        return None

    def expected_growth(self) -> int:
        """Tokens a fold is expected to add to the summary: the summary prompt asks for at
        most `summary_words` words (about 4 tokens for 3), within `summary_cap`, and a running
        summary is rewritten at about that length; less what it holds now. Budgeted folds
        count on it, so one summary call frees enough room (not a second one because the
        first one's summary took the room it freed)."""
        expected = math.ceil(self.summary_words * 4 / 3)
        cap = self.summary_cap()
        if cap is not None:
            expected = min(expected, cap)
        held = self.counter.count(self.summary) if self.summary else 0
        return max(0, expected - held)

    def _dropped(self, verbatim: Sequence[int]) -> tuple[int, ...]:
        """Turns neither sent verbatim nor in the summary, built from the ranges between the
        sent ones (C-speed, no per-turn set)."""
        start, end = len(self.summarised) + 1, len(self.history) + 1
        gaps: list[range] = []
        for i in sorted(verbatim):
            if i > start:
                gaps.append(range(start, min(i, end)))
            start = max(start, i + 1)
        gaps.append(range(start, end))
        return tuple(chain.from_iterable(gaps))

    def request(
        self,
        user_text: str,
        verbatim: Sequence[int],
        *,
        budget: int | None = None,
        retrieved: Sequence[int] = (),
        maintenance: Sequence[MaintenanceCall] = (),
        notes: Sequence[str] = (),
        with_summary: bool = True,
        with_facts: bool = True,
    ) -> Request:
        """Assemble the Request: system text, summary pair, the given turns, the new message.

        `with_summary`/`with_facts` False leave the summary/facts block out of this request
        only (a budgeted strategy does so when the new message would not fit with them)."""
        summary = self.summary if with_summary else None
        system = self.system_text(summary, facts=with_facts)
        extra = self.summary_messages(summary)
        messages = [*extra, *self.history.messages(verbatim), Message("user", user_text)]
        content = (
            self.counter.count(system)
            + self.counter.count_messages(extra)
            + self.history.tokens(verbatim)
            + self.counter.count(user_text)
        )
        tokens = self.counter.total(content, len(messages), has_system=bool(system))
        if budget is not None and content > budget:  # a bug, not a user error: never send it
            raise AssertionError(f"{self.name} built {content} tokens over its budget {budget}")
        if self.summary_truncated is not None and summary:
            notes = [*notes, f"the summary was cut to {self.summary_truncated} tokens to fit"]
        summarised: tuple[int, ...] = tuple(self.summarised) if summary else ()
        if summary or not self.summarised:
            dropped = self._dropped(verbatim)
        else:  # the summary was left out: every turn not sent verbatim is dropped
            kept = set(verbatim)
            dropped = tuple(i for i in range(1, len(self.history) + 1) if i not in kept)
        parts = self._parts(
            system, extra, verbatim, retrieved, user_text, tokens,
            with_facts=with_facts, with_summary=bool(summary),
        )  # fmt: skip
        account = Account(
            strategy=self.name,
            turn=len(self.history) + 1,
            kept_turns=tuple(verbatim),
            dropped_turns=dropped,
            summarised_turns=summarised,
            retrieved_turns=tuple(retrieved),
            summary=summary,
            facts=(dict(self.facts) if with_facts else {}) if self.uses_facts else None,
            budget=budget,
            notes=tuple(notes),
            parts=parts,
        )
        return Request(
            system=system,
            messages=tuple(messages),
            tokens=tokens,
            account=account,
            maintenance=tuple(maintenance),
        )

    def _parts(
        self,
        system: str,
        extra: Sequence[Message],
        verbatim: Sequence[int],
        retrieved: Sequence[int],
        user_text: str,
        tokens: TokenCount,
        *,
        with_facts: bool = True,
        with_summary: bool = True,
    ) -> tuple[Part, ...]:
        """The request split into PARTS. The system text is prompt, facts block, then summary:
        each part is what its text adds to the count of the text before it, so the parts add
        up exactly to the counted total (a token merged across a join goes to the later part)."""
        count = self.counter.count
        bare = count(self.system_prompt)
        facts_end = count(self.system_text(None, facts=with_facts))
        fetched = set(retrieved)
        recent = [i for i in verbatim if i not in fetched]
        # a summary left out of this request (to fit the message) has no turns here
        summary_turns = tuple(self.summarised) if self.summary and with_summary else ()
        return (
            Part("system", bare),
            Part("facts", facts_end - bare),
            Part(
                "summary",
                count(system) - facts_end + self.counter.count_messages(extra),
                summary_turns,
            ),
            Part("pinned", 0),  # only a pinned block pins turns (memory/strategies/composed.py)
            Part("retrieved", self.history.tokens(list(retrieved)), tuple(retrieved)),
            Part("recent", self.history.tokens(recent), tuple(recent)),
            Part("new_message", count(user_text)),
            Part("framing", tokens.with_overhead - tokens.content),
        )
