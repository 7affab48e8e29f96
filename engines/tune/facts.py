"""Facts evaluators: the survival lab's payload verdict, on its scripted conversation (demo
facts + filler bank) or on an imported transcript whose turns state the facts.

Both run `run_survival` payload-only for one setting and read its rows: a point per fact and
probe turn, kept when the fact's current value is in the payload (engines/survival's
`payload_check`, the one verdict code). The cost is the prompt tokens sent per turn up to the
last probe turn, upkeep calls included, so a summary strategy's hidden cost counts.

Facts on a transcript use the facts-file format (engines/survival/facts.py) with the text
left out: the statement is the transcript's turn ("turn", and each update's), the user's
message or, with "speaker": "assistant", the recorded reply. Each fact needs a "probe" (the
question asked at each probe turn) and its "answer" values, which must appear in that turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engines.survival import (
    STAND_IN_NOTE,
    Fact,
    ProbeRow,
    ScriptTurn,
    SurvivalConfig,
    SurvivalConfigError,
    load_facts,
    run_survival,
)
from engines.transcripts import Transcript
from engines.transcripts import parse as parse_transcript
from engines.tune.evaluator import DEFAULT_SYSTEM, Evaluator, Measure, Point
from engines.tune.results import COST_PER_TURN, FACTS
from memory.errors import MemoryLabError
from memory.jsontext import parse_json
from memory.lane_spec import LaneSpec
from memory.numbers import find_answer
from memory.registry import spec
from memory.standins import fixed_reply
from memory.tokens import TokenCounter


def _measure_rows(rows: Sequence[ProbeRow]) -> Measure:
    """A survival run's rows as the tuner's points and cost (the same for both evaluators)."""
    points = tuple(Point(r.probe_turn, 1 if r.in_payload else 0, 1, r.error) for r in rows)
    last = max(r.probe_turn for r in rows)
    spent = max(
        (r.prompt_tokens_spent + r.maintenance_tokens for r in rows if r.probe_turn == last),
        default=0,
    )
    peak = max((r.probe_prompt_tokens for r in rows), default=0)
    return Measure(points, spent / last, peak)


class _SurvivalEvaluator(Evaluator):
    """Shared by both facts evaluators: one survival run per setting, payload only."""

    what = FACTS
    cost = COST_PER_TURN

    def __init__(self, config: SurvivalConfig, counter: TokenCounter | None) -> None:
        self.config = config.validate()
        self.counter = counter or TokenCounter(config.encoding)
        self.system_prompt = config.system_prompt
        self.last_turn = config.last_turn

    def _turns(self) -> Sequence[ScriptTurn] | None:
        return None

    def measure(self, choice: LaneSpec) -> Measure:
        config = replace(self.config, strategies=(choice,))
        try:
            result = run_survival(config, counter=self.counter, workers=1, turns=self._turns())
        except MemoryLabError as exc:  # e.g. a budget smaller than the system prompt
            return Measure((), 0.0, error=str(exc))
        return _measure_rows(result.rows)

    @property
    def judged_turns(self) -> tuple[int, ...]:
        return self.config.probe_turns

    def notes(self, strategies: Sequence[str]) -> list[str]:
        return [STAND_IN_NOTE] if any(spec(n).needs_model for n in strategies) else []

    def _facts_line(self) -> str:
        turns = ", ".join(map(str, self.config.probe_turns))
        return f"{len(self.config.facts)} facts probed at N = {turns}"


class FactsEvaluator(_SurvivalEvaluator):
    """The survival lab's scripted conversation: facts stated at their turns, filler (the
    built-in bank or imported) everywhere else, probes at the config's turns."""

    @classmethod
    def from_config(
        cls, config: SurvivalConfig, *, counter: TokenCounter | None = None
    ) -> FactsEvaluator:
        """From a survival config (facts, probe turns, filler, system prompt, encoding); its
        strategies are ignored (the tuner chooses). SurvivalConfigError if it cannot run."""
        return cls(config, counter)

    def describe(self) -> str:
        filler = "the built-in filler bank" if self.config.filler is None else "imported filler"
        return f"{self._facts_line()}, {filler} between them"


class TranscriptFactsEvaluator(_SurvivalEvaluator):
    """An imported transcript as the conversation; facts stated at its turns (see the module
    docstring), probed at `probe_turns` (each at most one past the transcript's last turn;
    default: once, after the last turn). `facts` are Facts or a parsed facts file.

    SurvivalConfigError names a fact whose turn the transcript lacks, whose values are not in
    that turn, or a probe turn past the transcript."""

    def __init__(
        self,
        transcript: Transcript,
        facts: Sequence[Fact] | Any,
        probe_turns: Sequence[int] | None = None,
        *,
        system_prompt: str | None = None,
        encoding: str = "o200k_base",
        counter: TokenCounter | None = None,
        name: str = "the transcript",
    ) -> None:
        self.transcript = transcript
        self.name = name
        n = len(transcript.turns)
        if not isinstance(facts, Sequence) or not all(isinstance(f, Fact) for f in facts):
            facts = transcript_facts(facts, transcript, name)  # parsed JSON of a facts file
        turns = (n + 1,) if probe_turns is None else tuple(probe_turns)
        if turns and max(turns) > n + 1:
            raise SurvivalConfigError(
                f"probe turn N={max(turns)} needs turns 1..{max(turns) - 1}, but {name} has "
                f"{n} turns: probe at N={n + 1} or earlier"
            )
        system = system_prompt or transcript.system or DEFAULT_SYSTEM
        config = SurvivalConfig(
            facts=tuple(facts),
            probe_turns=turns,
            system_prompt=system,
            encoding=encoding,
        )
        super().__init__(config, counter)
        for fact in self.config.facts:
            _check_statements(fact, transcript, name)
        self._script = tuple(
            ScriptTurn(t, user, "transcript", reply or fixed_reply(t), scripted=True)
            for t, (user, reply) in enumerate(transcript.turns[: self.last_turn - 1], start=1)
        )

    @classmethod
    def from_files(
        cls,
        transcript: str | bytes,
        facts: str | bytes,
        probe_turns: Sequence[int] | None = None,
        *,
        name: str = "",
        system_prompt: str | None = None,
        counter: TokenCounter | None = None,
    ) -> TranscriptFactsEvaluator:
        """From a transcript file's contents (any format the app imports; `name` is the file
        name, used to tell formats apart) and a facts file's contents (JSON, see above).
        TranscriptError for the transcript, SurvivalConfigError for the facts."""
        parsed = parse_transcript(transcript, name=name)
        return cls(
            parsed,
            parse_json(facts, "the facts file", SurvivalConfigError),
            probe_turns,
            system_prompt=system_prompt,
            counter=counter,
            name=name or "the transcript",
        )

    def _turns(self) -> Sequence[ScriptTurn]:
        return self._script

    def describe(self) -> str:
        return f"{self._facts_line()}, on {self.name} ({len(self.transcript.turns)} turns)"


def _statement(transcript: Transcript, turn: int, speaker: str, where: str, name: str) -> str:
    n = len(transcript.turns)
    if turn > n:
        raise SurvivalConfigError(
            f"{where} is stated at turn {turn}, but {name} has {n} turns: check the turn number"
        )
    user, reply = transcript.turns[turn - 1]
    if speaker == "assistant":
        if not reply:
            raise SurvivalConfigError(
                f"{where} is said by the assistant at turn {turn}, but {name} has no recorded "
                "reply there"
            )
        return reply
    return user


def transcript_facts(
    data: Any, transcript: Transcript, name: str = "the transcript"
) -> tuple[Fact, ...]:
    """Facts from a parsed facts file whose statements are `transcript`'s turns: each fact's
    (and update's) text is filled in from its turn; the rest is the facts-file format."""
    if isinstance(data, Mapping) and "facts" in data:
        data = data["facts"]
    if not isinstance(data, list):
        return load_facts(data)  # its message names the expected shape
    filled = []
    for i, item in enumerate(data, start=1):
        if not isinstance(item, Mapping):
            filled.append(item)
            continue
        fact = dict(item)
        where = f"fact {fact.get('key', i)!r}"
        turn = fact.get("turn", fact.get("plant_turn", 1))
        if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 1:
            speaker = str(fact.get("speaker", "user"))
            fact.setdefault("text", _statement(transcript, turn, speaker, where, name))
        updates = fact.get("updates")
        if isinstance(updates, list):
            fact["updates"] = [_filled_update(u, j, where, transcript, name)
                               for j, u in enumerate(updates, start=1)]  # fmt: skip
        filled.append(fact)
    return load_facts(filled)


def _filled_update(item: Any, j: int, where: str, transcript: Transcript, name: str) -> Any:
    if not isinstance(item, Mapping):
        return item
    update = dict(item)
    turn = update.get("turn")
    if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 1:
        speaker = str(update.get("speaker", "user"))
        update.setdefault(
            "text", _statement(transcript, turn, speaker, f"{where}, update {j}", name)
        )
    return update


def _check_statements(fact: Fact, transcript: Transcript, name: str) -> None:
    """Each statement's values must be in its turn: a wrong turn number is caught here."""
    for i, s in enumerate(fact.statements()):
        where = f"fact {fact.key!r}" + (f", update {i}" if i else "")
        text = _statement(transcript, s.turn, s.speaker, where, name)
        if find_answer(text, s.answers) is None:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise SurvivalConfigError(
                f"{where}: none of its values ({', '.join(s.answers)}) is in turn {s.turn} of "
                f"{name} ({s.speaker}: {shown!r}): check the turn number"
            )
