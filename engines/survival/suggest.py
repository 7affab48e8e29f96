"""Probes planted from the user's own log: the facts an imported conversation states.

`suggest_facts` reads each user turn with the rule-based matcher the stand-in extractor uses
(memory/standins.py `stated_facts`: names, amounts, dates, numbers, stated preferences) and
proposes one `Suggestion` per value, with the turn it was stated at and a probe question.
`conversation_config` turns the ones chosen into a survival run on the conversation itself
(`SurvivalConfig.in_place`: turn t is the log's turn t; nothing is inserted), probed at
later turns of it. No model proposes anything: the user ticks what to test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.survival.config import DEFAULT_STRATEGIES, SurvivalConfig
from engines.survival.facts import Fact, SurvivalConfigError
from memory.lane_spec import LaneSpec
from memory.standins import stated_facts
from scenarios.filler import FillerTurn
from scenarios.transcripts import Transcript

MAX_SUGGESTIONS = 40
DEFAULT_SYSTEM = "You are a helpful assistant."


@dataclass(frozen=True)
class Suggestion:
    """A fact the user stated at `fact.plant_turn`, of `kind`, as a probe-ready Fact."""

    fact: Fact
    kind: str  # name, amount, date, number, preference

    def to_dict(self) -> dict[str, Any]:
        """A facts-file entry (engines/survival/facts.py) with its kind: a list of these is
        a facts file, so `--suggest-facts --json` output can be edited and passed back."""
        return {"kind": self.kind, **self.fact.to_dict()}


def _label(kind: str, value: str, turn: int) -> str:
    shown = value if len(value) <= 30 else value[:29] + "…"
    return f"{kind.capitalize()} ({shown}, turn {turn})"


def suggest_facts(
    transcript: Transcript, *, limit: int = MAX_SUGGESTIONS
) -> tuple[Suggestion, ...]:
    """The facts the user's turns state, first statement of each value only, in turn order
    (at most `limit`). Each fact's text is the sentence that states it; its answer is the
    value as written (amounts match in any form later)."""
    out: list[Suggestion] = []
    seen: set[tuple[str, str]] = set()
    keys: set[str] = set()
    for turn, (user, _reply) in enumerate(transcript.turns, start=1):
        for s in stated_facts(user):
            mark = (s.kind, s.value.casefold())
            if mark in seen:
                continue
            seen.add(mark)
            key = s.key if s.key not in keys else f"{s.key}_t{turn}"
            n = 2
            while key in keys:
                key, n = f"{s.key}_t{turn}_{n}", n + 1
            keys.add(key)
            fact = Fact(
                key=key,
                plant=s.sentence,
                probe=s.probe,
                answers=(s.value,),
                label=_label(s.kind, s.value, turn),
                plant_turn=turn,
            )
            out.append(Suggestion(fact, s.kind))
            if len(out) >= limit:
                return tuple(out)
    return tuple(out)


def default_probe_turns(turns: int, facts: Sequence[Fact]) -> tuple[int, ...]:
    """Up to five probe turns spread from just after the first fact to just after the
    conversation's last turn (so every fact is probed at least once, at N = turns + 1)."""
    if not facts:
        return (turns + 1,)
    low, high = min(f.plant_turn for f in facts) + 1, turns + 1
    spread = {round(low + (high - low) * k / 4) for k in range(5)}
    return tuple(sorted(n for n in spread if 2 <= n <= high))


def filler_of(transcript: Transcript) -> tuple[FillerTurn, ...]:
    """The conversation's turns as the survival lab's filler (played in place)."""
    return tuple(FillerTurn(user, reply) for user, reply in transcript.turns)


def conversation_config(
    transcript: Transcript,
    facts: Sequence[Fact],
    *,
    probe_turns: Sequence[int] | None = None,
    strategies: Sequence[LaneSpec] = DEFAULT_STRATEGIES,
    system_prompt: str | None = None,
    replies: str = "fixed",
) -> SurvivalConfig:
    """A survival run on the conversation itself: `facts` at the turns it states them,
    probed at `probe_turns` (default: `default_probe_turns`). SurvivalConfigError names a
    fact whose values its turn lacks, or a probe past the conversation's end."""
    if not transcript.turns:
        raise SurvivalConfigError("the conversation has no turns")
    turns = (
        tuple(probe_turns)
        if probe_turns is not None
        else default_probe_turns(len(transcript.turns), facts)
    )
    return SurvivalConfig(
        facts=tuple(facts),
        probe_turns=turns,
        strategies=tuple(strategies),
        filler=filler_of(transcript),
        replies=replies,
        system_prompt=system_prompt or transcript.system or DEFAULT_SYSTEM,
        in_place=True,
    ).validate()
