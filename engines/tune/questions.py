"""The long-memory questions evaluator: a long conversation and questions with evidence turns.

A setting is replayed by the recall benchmark's own code (engines/recall.py `run_setting`,
payload-only, upkeep by the rule-based stand-ins) and aggregated by its `summarise`: a
question's point keeps as many of its evidence turns as the request at that question sends
verbatim, so the share over all points is the benchmark's pooled "evidence kept". The cost
is what a turn costs at the question points: the mean prompt tokens of those requests (the
benchmark's "mean tokens") plus the upkeep calls' request tokens averaged over the turns, so
a summary strategy's hidden cost counts (the benchmark replays turns without preparing a
request at each, so the requests between questions are not measured).
"""

from __future__ import annotations

from collections.abc import Sequence

from engines.recall import run_setting, summarise
from engines.survival import STAND_IN_NOTE
from engines.transcripts import parse as parse_transcript
from engines.tune.evaluator import DEFAULT_SYSTEM, Evaluator, Measure, Point
from engines.tune.results import EVIDENCE
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec
from memory.maintenance import Upkeep
from memory.registry import spec
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.tokens import TokenCounter
from memory.types import Completion, ModelFn, Request
from scenarios.longmem import LongConversation, from_turns, parse_conversation, parse_questions
from scenarios.longmem_world import generate

COST_PER_REQUEST = (
    "mean prompt tokens of the requests at the question points, plus upkeep tokens per turn"
)
COST_NOTE = (
    "cost is the mean prompt tokens a setting sends at the question points (the recall "
    "benchmark's mean tokens) plus its summary and extraction requests' tokens per turn"
)


class _Counted:
    """A stand-in upkeep function that adds up the tokens of the requests it is sent."""

    def __init__(self, fn: ModelFn) -> None:
        self.fn = fn
        self.tokens = 0

    def __call__(self, request: Request) -> Completion:
        self.tokens += request.tokens.content
        return self.fn(request)


class QuestionsEvaluator(Evaluator):
    """A LongConversation and its questions; share kept = evidence turns in the payload."""

    what = EVIDENCE
    cost = COST_PER_REQUEST

    def __init__(
        self,
        conversation: LongConversation,
        *,
        counter: TokenCounter | None = None,
        name: str = "a long conversation",
    ) -> None:
        if not conversation.questions:
            raise ValueError(f"{name} has no questions: the tuner needs at least one")
        if not conversation.system.strip():  # a transcript with no system prompt
            conversation = LongConversation(
                DEFAULT_SYSTEM, conversation.sessions, conversation.questions
            )
        self.conversation = conversation
        self.counter = counter or TokenCounter()
        self.system_prompt = conversation.system
        self.last_turn = len(conversation.turns)
        self.name = name
        self._asked_at = {q.id: conversation.asked_at(q) for q in conversation.questions}

    @classmethod
    def from_seed(
        cls, seed: int = 0, *, sessions: int = 24, counter: TokenCounter | None = None
    ) -> QuestionsEvaluator:
        """The long-memory benchmark's generated conversation for `seed` (about 620 turns and
        33 questions with the default 24 sessions)."""
        conv = generate(seed, sessions=sessions)
        return cls(conv, counter=counter, name=f"the long-memory benchmark, seed {seed}")

    @classmethod
    def from_files(
        cls,
        transcript: str | bytes,
        questions: str | bytes,
        *,
        name: str = "",
        counter: TokenCounter | None = None,
    ) -> QuestionsEvaluator:
        """Your own transcript (any format the app imports; `name` is its file name) and a
        questions file (scenarios/longmem.py's format; turns numbered from 1).
        TranscriptError for the transcript, LongMemFormatError for the questions."""
        parsed = parse_transcript(transcript, name=name)
        turns = [(user, reply or "") for user, reply in parsed.turns]
        asked = parse_questions(questions, len(turns))
        conv = from_turns(turns, asked, parsed.system or "")
        return cls(conv, counter=counter, name=name or "the transcript")

    @classmethod
    def from_conversation_file(
        cls, text: str | bytes, *, name: str = "", counter: TokenCounter | None = None
    ) -> QuestionsEvaluator:
        """A long-memory conversation file with its questions (scenarios/longmem.py)."""
        conv = parse_conversation(text)
        return cls(conv, counter=counter, name=name or "the conversation file")

    def measure(self, choice: LaneSpec) -> Measure:
        cls = spec(choice.name).cls
        summarize = _Counted(ExtractiveSummariser()) if cls.uses_summary else None
        extract = _Counted(RuleExtractor()) if cls.uses_facts else None
        try:
            results = run_setting(
                self.conversation,
                choice,
                counter=self.counter,
                upkeep=Upkeep(summarize, extract),
            )
        except MemoryLabError as exc:  # e.g. a budget smaller than a question's request
            return Measure((), 0.0, error=str(exc))
        row = summarise(choice.label, choice.name, results)
        upkeep = sum(fn.tokens for fn in (summarize, extract) if fn is not None)
        at = self._asked_at
        points = tuple(Point(at[r.question], len(r.found), len(r.evidence)) for r in results)
        cost = row.mean_tokens + upkeep / self.last_turn
        return Measure(points, cost, max(r.prompt_tokens for r in results))

    @property
    def judged_turns(self) -> tuple[int, ...]:
        return tuple(sorted(set(self._asked_at.values())))

    def notes(self, strategies: Sequence[str]) -> list[str]:
        notes = [COST_NOTE]
        if any(spec(n).needs_model for n in strategies):
            notes.append(STAND_IN_NOTE)
        return notes

    def describe(self) -> str:
        evidence = sum(len(q.evidence) for q in self.conversation.questions)
        return (
            f"{len(self.conversation.questions)} questions ({evidence} evidence turns) on "
            f"{self.name} ({self.last_turn} turns)"
        )
