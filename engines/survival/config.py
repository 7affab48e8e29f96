"""A survival run's settings: `SurvivalConfig` (checked, saved and loaded as plain JSON),
the probe-turn parser, the plan sentence, and the scripted conversation it implies.

Page, CLI and saved runs all go through `SurvivalConfig.from_dict`/`to_dict` and
`plan_sentence`, so a setting means the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engines.survival.facts import (
    DEFAULT_ASK,
    DEFAULT_FACTS,
    Fact,
    SurvivalConfigError,
    load_facts,
)
from memory.lane_spec import LaneSpec
from memory.numbers import find_answer
from memory.registry import DEFAULT_LANES, spec
from memory.standins import fixed_reply
from scenarios import fincoach
from scenarios.filler import FillerTurn, builtin, cycle

if TYPE_CHECKING:
    from engines.survival.results import Estimate

MAX_TURN = 1000
MAX_SYSTEM_PROMPT = 50_000  # characters
REPLY_MODES = ("fixed", "generated")
DEFAULT_PROBE_TURNS: tuple[int, ...] = (2, 5, 10, 20, 50)
DEFAULT_STRATEGIES: tuple[LaneSpec, ...] = tuple(LaneSpec(n) for n in DEFAULT_LANES)


@dataclass(frozen=True)
class SurvivalConfig:
    """Everything that decides a survival run's verdicts (with the model and its settings)."""

    facts: tuple[Fact, ...] = DEFAULT_FACTS
    probe_turns: tuple[int, ...] = DEFAULT_PROBE_TURNS
    strategies: tuple[LaneSpec, ...] = DEFAULT_STRATEGIES
    filler: tuple[FillerTurn, ...] | None = None  # None: the built-in bank
    filler_seed: int = 0
    replies: str = "fixed"  # "fixed" short replies, or "generated" by the model
    system_prompt: str = fincoach.SYSTEM_PROMPT
    encoding: str = "o200k_base"
    # the filler is the user's own conversation, played as it was: turn t is its turn t and
    # the facts are the ones it states at their turns (nothing is inserted)
    in_place: bool = False

    @property
    def last_turn(self) -> int:
        return max(self.probe_turns)

    def probes_of(self, fact: Fact) -> tuple[int, ...]:
        """The probe turns that test `fact`: every one after it is first stated."""
        return tuple(n for n in self.probe_turns if n > fact.plant_turn)

    @property
    def rows_total(self) -> int:
        return sum(len(self.probes_of(f)) for f in self.facts) * len(self.strategies)

    def validate(self) -> SurvivalConfig:
        """The config itself if it can run; SurvivalConfigError with the reason otherwise."""
        if not self.facts:
            raise SurvivalConfigError("choose at least one fact to plant")
        keys = [f.key for f in self.facts]
        if len(set(keys)) != len(keys):
            raise SurvivalConfigError(f"fact keys must be unique, got {keys}")
        if not self.probe_turns:
            raise SurvivalConfigError("choose at least one probe turn N")
        if list(self.probe_turns) != sorted(set(self.probe_turns)):
            raise SurvivalConfigError(
                f"probe turns must be increasing with no repeats, got {list(self.probe_turns)}"
            )
        if self.last_turn > MAX_TURN:
            raise SurvivalConfigError(f"probe turns go up to {MAX_TURN}; got {self.last_turn}")
        first = min(f.plant_turn for f in self.facts)
        if self.probe_turns[0] <= first:
            raise SurvivalConfigError(
                f"no fact is stated before probe turn N={self.probe_turns[0]} (the first is "
                f"stated at turn {first}): every probe turn must come after a fact"
            )
        for f in self.facts:
            if not f.plant.strip() or not f.probe.strip():
                raise SurvivalConfigError(f"fact {f.key!r} needs a planting sentence and a probe")
            if not [a for a in f.answers if a.strip()]:
                raise SurvivalConfigError(f"fact {f.key!r} needs at least one accepted answer")
            if f.plant_turn < 1:
                raise SurvivalConfigError(f"fact {f.key!r}: turns are numbered from 1")
            turns = [s.turn for s in f.statements()]
            if turns != sorted(set(turns)):
                raise SurvivalConfigError(
                    f"fact {f.key!r}: its updates must come after turn {f.plant_turn}, in order; "
                    f"got turns {turns}"
                )
            if not self.probes_of(f):
                raise SurvivalConfigError(
                    f"fact {f.key!r} is stated at turn {f.plant_turn}, but no probe turn comes "
                    f"after it (the last is N={self.last_turn}): add a later probe turn"
                )
        if not self.strategies:
            raise SurvivalConfigError("choose at least one strategy")
        labels = [s.label for s in self.strategies]
        if len(set(labels)) != len(labels):
            raise SurvivalConfigError(f"each strategy setting can run once; got {labels}")
        for s in self.strategies:
            spec(s.name)  # UnknownStrategy names the ones that exist
        if self.replies not in REPLY_MODES:
            raise SurvivalConfigError(f"replies are 'fixed' or 'generated', got {self.replies!r}")
        if self.filler is not None and not self.filler:
            raise SurvivalConfigError("the imported filler is empty")
        if self.in_place:
            self._check_in_place()
        if not self.system_prompt.strip():
            raise SurvivalConfigError("the system prompt is empty: write one or keep FinCoach's")
        if len(self.system_prompt) > MAX_SYSTEM_PROMPT:
            raise SurvivalConfigError(f"the system prompt is over {MAX_SYSTEM_PROMPT:,} characters")
        return self

    def _check_in_place(self) -> None:
        """A conversation played in place must reach the last probe, and state each fact's
        values at the turn the fact names (a wrong turn number is caught here)."""
        if not self.filler:
            raise SurvivalConfigError("probing facts in place needs the imported conversation")
        n = len(self.filler)
        if self.last_turn - 1 > n:
            raise SurvivalConfigError(
                f"probe turn N={self.last_turn} needs turns 1..{self.last_turn - 1}, but the "
                f"conversation has {n} turns: probe at N={n + 1} or earlier"
            )
        for f in self.facts:
            for i, s in enumerate(f.statements()):
                where = f"fact {f.key!r}" + (f", update {i}" if i else "")
                if s.turn > n:
                    raise SurvivalConfigError(
                        f"{where} is stated at turn {s.turn}, but the conversation has {n} turns"
                    )
                turn = self.filler[s.turn - 1]
                text = turn.user if s.speaker == "user" else (turn.reply or "")
                if find_answer(text, s.answers) is None:
                    shown = text if len(text) <= 80 else text[:77] + "..."
                    raise SurvivalConfigError(
                        f"{where}: none of its values ({', '.join(s.answers)}) is in turn "
                        f"{s.turn} of the conversation ({s.speaker}: {shown!r})"
                    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts": [f.to_dict() for f in self.facts],
            "probe_turns": list(self.probe_turns),
            "strategies": [s.as_dict() for s in self.strategies],
            "filler": "built-in"
            if self.filler is None
            else [{"user": t.user, "reply": t.reply} for t in self.filler],
            "filler_seed": self.filler_seed,
            "replies": self.replies,
            "system_prompt": self.system_prompt,
            "encoding": self.encoding,
            **({"filler_in_place": True} if self.in_place else {}),
        }

    as_dict = to_dict

    @classmethod
    def from_dict(cls, data: Any) -> SurvivalConfig:
        """The config `to_dict` wrote (a saved run, the page's state); fields left out take
        their defaults. SurvivalConfigError names a malformed field; call validate() to run."""
        if not isinstance(data, Mapping):
            raise SurvivalConfigError("a survival config is a JSON object")
        base = cls()
        facts = load_facts(data["facts"]) if "facts" in data else base.facts
        turns = data.get("probe_turns", list(base.probe_turns))
        if isinstance(turns, str):
            probe_turns = parse_turns(turns)
        elif isinstance(turns, list) and all(
            isinstance(n, int) and not isinstance(n, bool) for n in turns
        ):
            probe_turns = tuple(turns)
        else:
            raise SurvivalConfigError("probe_turns is a list of whole numbers, e.g. [2, 5, 10]")
        strategies = base.strategies
        if "strategies" in data:
            raw = data["strategies"]
            if not isinstance(raw, list) or not all(
                isinstance(s, Mapping) and isinstance(s.get("name"), str) for s in raw
            ):
                raise SurvivalConfigError(
                    'strategies is a list of {"name": ..., "params": {...}} objects'
                )
            strategies = tuple(LaneSpec(s["name"], dict(s.get("params") or {})) for s in raw)
        filler_raw = data.get("filler", "built-in")
        filler: tuple[FillerTurn, ...] | None = None
        if filler_raw not in ("built-in", None):
            if not isinstance(filler_raw, list) or not all(
                isinstance(t, Mapping) and isinstance(t.get("user"), str) for t in filler_raw
            ):
                raise SurvivalConfigError(
                    'filler is "built-in" or a list of {"user": ..., "reply": ...} turns'
                )
            filler = tuple(FillerTurn(t["user"], t.get("reply")) for t in filler_raw)
        values = {
            name: data.get(name, getattr(base, name))
            for name in ("filler_seed", "replies", "system_prompt", "encoding")
        }
        for name, kind in (("filler_seed", int), ("replies", str), ("system_prompt", str),
                           ("encoding", str)):  # fmt: skip
            if not isinstance(values[name], kind) or isinstance(values[name], bool):
                raise SurvivalConfigError(f"{name} must be {kind.__name__}")
        in_place = data.get("filler_in_place", False)
        if not isinstance(in_place, bool):
            raise SurvivalConfigError("filler_in_place is true or false")
        return cls(
            facts=facts,
            probe_turns=probe_turns,
            strategies=strategies,
            filler=filler,
            in_place=in_place,
            **values,
        )


def parse_turns(text: str) -> tuple[int, ...]:
    """'2,5,10' or '2 5 10' -> (2, 5, 10); SurvivalConfigError says what is wrong."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise SurvivalConfigError("give at least one probe turn, e.g. 2,5,10")
    try:
        turns = sorted({int(p) for p in parts})
    except ValueError:
        raise SurvivalConfigError(f"probe turns are whole numbers, got {text!r}") from None
    if turns[0] < 2:
        raise SurvivalConfigError(
            f"probe turns start at 2 (a probe tests the turns before it); got {turns[0]}"
        )
    if turns[-1] > MAX_TURN:
        raise SurvivalConfigError(f"probe turns go up to {MAX_TURN}; got {turns[-1]}")
    return tuple(turns)


def plan_sentence(config: SurvivalConfig, est: Estimate, *, with_model: bool) -> str:
    """One plain sentence saying what a run will do (the page and the CLI show it)."""
    plan = (
        f"{len(config.facts)} facts × {len(config.strategies)} strategies × "
        f"{len(config.probe_turns)} probe turns = {est.rows} probes. "
    )
    if with_model:
        plan += (
            f"About {est.calls:,} model calls ({est.probe_calls} probes, {est.reply_calls} "
            f"replies, {est.maintenance_calls} summaries/extractions) and about "
            f"{est.tokens:,} tokens"
        )
    else:
        plan += "No model calls (payload only: upkeep by rule-based stand-ins)"
    return plan


@dataclass(frozen=True)
class ScriptTurn:
    """One turn of the scripted conversation before the probes."""

    turn: int
    user: str
    kind: str  # "plant", "update" or "filler"
    fixed_reply: str
    scripted: bool = False  # the reply states a fact: sent as written even with a model


def script(config: SurvivalConfig) -> list[ScriptTurn]:
    """Turns 1 .. N_max - 1: statements (facts and updates, by either side) at their turns,
    filler everywhere else."""
    last = config.last_turn - 1
    if config.in_place and config.filler:
        return _in_place(config, last)
    said: dict[int, list[tuple[str, str, str, str]]] = {}  # turn -> (speaker, text, ask, kind)
    for f in config.facts:
        for i, s in enumerate(f.statements()):
            kind = "plant" if i == 0 else "update"
            said.setdefault(s.turn, []).append((s.speaker, s.text.strip(), s.ask.strip(), kind))
    n_filler = last - len([t for t in said if t <= last])
    if config.filler is None:
        filler = builtin(n_filler, seed=config.filler_seed)
    else:
        filler = cycle(config.filler, n_filler)
    turns: list[ScriptTurn] = []
    k = 0
    for t in range(1, last + 1):
        if t not in said:
            item = filler[k]
            k += 1
            turns.append(ScriptTurn(t, item.user, "filler", item.reply or fixed_reply(t)))
            continue
        items = said[t]
        user = [text for who, text, _, _ in items if who == "user"]
        user += [ask or DEFAULT_ASK for who, _, ask, _ in items if who == "assistant" and ask]
        replies = [text for who, text, _, _ in items if who == "assistant"]
        if not user:
            user = [DEFAULT_ASK]
        kind = "update" if all(k_ == "update" for *_, k_ in items) else "plant"
        reply = " ".join(replies) if replies else fixed_reply(t)
        turns.append(ScriptTurn(t, " ".join(user), kind, reply, scripted=bool(replies)))
    return turns


def _in_place(config: SurvivalConfig, last: int) -> list[ScriptTurn]:
    """The user's own conversation as it was, up to turn `last`: a turn that states a fact
    is a "plant" (or "update"), a recorded reply is sent as written."""
    kinds: dict[int, str] = {}
    for f in config.facts:
        for i, s in enumerate(f.statements()):
            if kinds.get(s.turn) != "plant":
                kinds[s.turn] = "plant" if i == 0 else "update"
    assert config.filler is not None
    return [
        ScriptTurn(
            t,
            item.user,
            kinds.get(t, "filler"),
            item.reply or fixed_reply(t),
            scripted=item.reply is not None,
        )
        for t, item in enumerate(config.filler[:last], start=1)
    ]
