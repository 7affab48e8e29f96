"""The library surface: strategies from the registry, token counts, model-free replay, a
payload-only survival grid, transcript import and saved sessions. Results are frozen records
with `to_frame()`; pandas is imported only when a frame is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines import transcripts
from engines.survival import (
    DEFAULT_PROBE_TURNS,
    DEFAULT_STRATEGIES,
    SurvivalConfig,
    SurvivalResult,
    load_facts,
    run_survival,
)
from memory.lane_spec import LaneSpec, parse_spec
from memory.maintenance import Upkeep
from memory.registry import REGISTRY
from memory.replay import ReplayStep
from memory.replay import replay as replay_steps
from memory.standins import ExtractiveSummariser, RuleExtractor
from memory.strategies.base import Strategy
from memory.tokens import DEFAULT_ENCODING, TokenCounter
from memory.types import Message, ModelFn
from scenarios import fincoach

if TYPE_CHECKING:
    import pandas as pd

    from storage.store import SavedSession

FINCOACH_PROMPT: str = fincoach.SYSTEM_PROMPT  # seed 000's system prompt: 132 tokens
FINCOACH_TURNS: tuple[str, ...] = fincoach.SIMULATED_TURNS  # the growth table's ten turns

StrategyLike = str | LaneSpec
TurnLike = str | tuple[str, str | None]


def _frame(rows: Iterable[Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        [asdict(r) if is_dataclass(r) and not isinstance(r, type) else dict(r) for r in rows]
    )


def _choice(strategy: StrategyLike) -> LaneSpec:
    return strategy if isinstance(strategy, LaneSpec) else parse_spec(strategy)


# ---- strategies and tokens ---------------------------------------------------------------


@dataclass(frozen=True)
class StrategyInfo:
    """A registered strategy: what it is called, what it does, what it takes."""

    name: str
    title: str
    description: str
    needs_model: bool
    defaults: Mapping[str, Any]


def strategies() -> list[StrategyInfo]:
    """Every registered strategy, in registry order (`pd.DataFrame(ml.strategies())` works)."""
    return [
        StrategyInfo(s.name, s.title, s.description, s.needs_model, s.defaults())
        for s in REGISTRY.values()
    ]


def create(
    strategy: StrategyLike,
    system_prompt: str = FINCOACH_PROMPT,
    *,
    encoding: str = DEFAULT_ENCODING,
    summarize: ModelFn | None = None,
    extract: ModelFn | None = None,
) -> Strategy:
    """A strategy instance from its CLI form (`"window:k=3"`) or a LaneSpec.

    Strategies that summarise or extract facts get rule-based stand-ins unless you pass
    your own model functions (`Request -> Completion`)."""
    return _choice(strategy).create(
        system_prompt,
        counter=TokenCounter(encoding),
        upkeep=Upkeep(summarize or ExtractiveSummariser(), extract or RuleExtractor()),
    )


def count_tokens(
    text: str | Sequence[Mapping[str, str]], *, encoding: str = DEFAULT_ENCODING
) -> int:
    """Tokens of a text, or the content tokens of OpenAI-style messages, tiktoken-exact."""
    counter = TokenCounter(encoding)
    if isinstance(text, str):
        return counter.count(text)
    return counter.count_messages(Message(m["role"], m["content"]) for m in text)  # type: ignore[arg-type]


# ---- replay ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayRow:
    """One strategy at one turn: what its request held and what it cost in tokens."""

    strategy: str
    turn: int
    user_tokens: int
    prompt_tokens: int
    sent_so_far: int
    messages: int
    kept_turns: tuple[int, ...]
    dropped_turns: tuple[int, ...]
    summarised_turns: tuple[int, ...]
    retrieved_turns: tuple[int, ...]
    upkeep_calls: int
    upkeep_tokens: int


@dataclass(frozen=True)
class Replay:
    """A model-free replay: one row per strategy and turn, and every request that was built."""

    system_tokens: int
    labels: tuple[str, ...]
    rows: tuple[ReplayRow, ...]
    steps: tuple[ReplayStep, ...]

    def to_frame(self) -> pd.DataFrame:
        return _frame(self.rows)

    def total(self, strategy: str) -> int:
        """Prompt tokens the strategy sent over the whole conversation."""
        return max(r.sent_so_far for r in self.rows if r.strategy == strategy)

    def payload(self, strategy: str, turn: int) -> list[dict[str, str]]:
        """The messages the strategy sent at `turn` (1-based), system message first."""
        request = self.steps[turn - 1].requests[strategy]
        return [{"role": "system", "content": request.system}] + [
            m.as_dict() for m in request.messages
        ]


def replay(
    turns: Sequence[TurnLike] | transcripts.Transcript,
    strategies: Sequence[StrategyLike] = ("full",),
    *,
    system_prompt: str | None = None,
    reply_tokens: int = 80,
    encoding: str = DEFAULT_ENCODING,
    summarize: ModelFn | None = None,
    extract: ModelFn | None = None,
) -> Replay:
    """Feed user turns through strategies with no model: a reply is the transcript's own
    where it has one, else a filler of exactly `reply_tokens` tokens (seed 000's rule).

    The system prompt defaults to the transcript's, else FinCoach's."""
    if isinstance(turns, transcripts.Transcript):
        system_prompt = system_prompt or turns.system
        entries: Sequence[TurnLike] = turns.turns
    else:
        entries = turns
    prompt = system_prompt or FINCOACH_PROMPT
    counter = TokenCounter(encoding)
    choices = [_choice(s) for s in strategies]
    lanes = {
        c.label: create(c, prompt, encoding=encoding, summarize=summarize, extract=extract)
        for c in choices
    }
    steps = replay_steps(entries, lanes, counter=counter, reply_tokens=reply_tokens)
    rows: list[ReplayRow] = []
    for label in lanes:
        sent = 0
        for step in steps:
            request = step.requests[label]
            sent += request.tokens.content
            acc = request.account
            calls = step.maintenance[label]
            rows.append(
                ReplayRow(
                    strategy=label,
                    turn=step.turn,
                    user_tokens=counter.count(step.user),
                    prompt_tokens=request.tokens.content,
                    sent_so_far=sent,
                    messages=len(request.messages) + 1,
                    kept_turns=acc.kept_turns if acc else (),
                    dropped_turns=acc.dropped_turns if acc else (),
                    summarised_turns=acc.summarised_turns if acc else (),
                    retrieved_turns=acc.retrieved_turns if acc else (),
                    upkeep_calls=len(calls),
                    upkeep_tokens=sum(c.tokens.content for c in calls),
                )
            )
    return Replay(counter.count(prompt), tuple(lanes), tuple(rows), tuple(steps))


# ---- survival ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SurvivalGrid:
    """A payload-only survival run: is each planted fact still in the payload at turn N?"""

    result: SurvivalResult

    def to_frame(self) -> pd.DataFrame:
        """Every probe: strategy, fact, N, the verdict and the tokens spent to get there."""
        return _frame(r.as_dict() for r in self.result.rows)

    def grid(self, verdict: str = "in_payload") -> pd.DataFrame:
        """Strategies x N: the share of facts with the verdict (0.0 to 1.0)."""
        import pandas as pd

        cells = self.result.matrix(verdict)
        turns = self.result.probe_turns()
        data = {
            n: [
                (cells[(s, n)][0] / cells[(s, n)][1]) if cells.get((s, n), (0, 0))[1] else None
                for s in self.result.strategies()
            ]
            for n in turns
        }
        frame = pd.DataFrame(data, index=self.result.strategies())
        frame.index.name, frame.columns.name = "strategy", "N"
        return frame


def survival(
    strategies: Sequence[StrategyLike] | None = None,
    probe_turns: Sequence[int] = DEFAULT_PROBE_TURNS,
    *,
    facts: Sequence[Mapping[str, Any]] | None = None,
    filler_seed: int = 0,
) -> SurvivalGrid:
    """Plant facts at turn 1, probe at each N, with no model (upkeep by rule-based stand-ins).

    `facts` are dicts like `{"key", "plant", "probe", "answers"}` (default: FinCoach's four)."""
    config = SurvivalConfig(
        probe_turns=tuple(probe_turns),
        strategies=tuple(_choice(s) for s in strategies) if strategies else DEFAULT_STRATEGIES,
        filler_seed=filler_seed,
    )
    if facts is not None:
        from dataclasses import replace

        config = replace(config, facts=load_facts(list(facts)))
    return SurvivalGrid(run_survival(config.validate()))


# ---- transcripts and saved sessions ------------------------------------------------------


def read_transcript(
    path: str | Path,
    *,
    conversation: int | str | None = None,
    skip_bad_lines: bool = False,
) -> transcripts.Transcript | list[transcripts.Transcript]:
    """A transcript file in any format the lab imports (the Sessions page's list: OpenAI or
    Anthropic messages, `User:`/`Assistant:` text, ChatGPT and Claude.ai exports, ShareGPT,
    OpenAI chat JSONL or Batch input, LangChain dumps, LangSmith runs, OpenTelemetry spans,
    a session export): the conversation, or for a file of many a list of them (one is
    picked by `conversation`, its number from 1 or its id). The same as
    `memory-lab transcript FILE --json` prints."""
    p = Path(path)
    if conversation is not None:
        return transcripts.parse(p, name=p.name, conversation=conversation,
                                 keep_bad_lines=skip_bad_lines)  # fmt: skip
    found = transcripts.parse_all(p, name=p.name, keep_bad_lines=skip_bad_lines)
    return found[0] if len(found) == 1 else found


def list_conversations(path: str | Path) -> list[transcripts.Conversation]:
    """A file's conversations as a pick list (title, date, turns), streamed: a 200 MB export
    is listed without holding its text."""
    p = Path(path)
    return transcripts.list_conversations(p, name=p.name)


def import_transcript(
    transcript: transcripts.Transcript | str | Path,
    strategies: Sequence[StrategyLike] = ("full",),
    *,
    db_url: str | None = None,
    provider: Any = None,
    name: str = "",
) -> str:
    """Replay a transcript with its recorded replies into the session store (as the Sessions
    page's import does); returns the saved session's id. Strategies with upkeep calls use
    `provider` (ProviderSettings) for them; by default no model is called: bodies are built
    as gpt-4o-mini's and upkeep is done by the rule-based stand-ins (costing nothing)."""
    import providers
    from lanes.transport import ProvidersTransport
    from memory.lane_spec import LaneSpec
    from storage.store import Store

    if not isinstance(transcript, transcripts.Transcript):
        found = read_transcript(transcript)
        if isinstance(found, list):
            raise ValueError(
                f"{transcript} holds {len(found)} conversations: read one with "
                "read_transcript(path, conversation=N) and import that"
            )
        transcript = found
    settings = provider or providers.preset("openai").settings("gpt-4o-mini")
    base = ProvidersTransport()
    lanes: list[LaneSpec[providers.ProviderSettings]] = [
        LaneSpec(c.name, dict(c.params)) for c in (_choice(s) for s in strategies)
    ]
    session = transcripts.replay(
        transcript,
        lanes,
        provider=settings,
        transport=base if provider is not None else transcripts.StandInUpkeep(base),
        mode=transcripts.RECORDED,
        system_prompt=transcript.system or FINCOACH_PROMPT,
        name=name or "imported transcript",
    )
    store = Store(db_url)
    try:
        return store.save(session, source="import")
    finally:
        store.close()


@dataclass(frozen=True)
class SavedLaneTurn:
    """One lane's turn in a saved session, as numbers and text."""

    lane: str
    turn: int
    status: str
    prompt_tokens: int
    total_tokens: int
    messages: int
    user: str
    reply: str
    error: str | None


@dataclass(frozen=True)
class SessionRecords:
    """A saved session: its name, system prompt, user turns and every lane's records."""

    id: str
    name: str
    system_prompt: str
    user_turns: tuple[str, ...]
    rows: tuple[SavedLaneTurn, ...]
    saved: SavedSession

    def to_frame(self) -> pd.DataFrame:
        return _frame(self.rows)


def load_session(session: str | Path, *, db_url: str | None = None) -> SessionRecords:
    """A saved session by id (from the store at `db_url`, default `$MEMORY_LAB_DB_URL` or the
    app's SQLite file), or from a JSON export file's path."""
    from storage.store import Store, read_export

    path = Path(session)
    if path.suffix == ".json" and path.is_file():
        saved = read_export(path.read_bytes(), path.name)
    else:
        store = Store(db_url)
        try:
            saved = store.load(str(session))
        finally:
            store.close()
    rows = [
        SavedLaneTurn(
            lane=lane,
            turn=r.turn,
            status=r.status,
            prompt_tokens=r.prompt_tokens,
            total_tokens=r.total_tokens,
            messages=r.n_messages,
            user=r.user,
            reply=r.reply,
            error=r.error,
        )
        for lane, records in saved.records.items()
        for r in records
    ]
    rows.sort(key=lambda r: (r.turn, saved.strategies.index(r.lane)))
    return SessionRecords(
        saved.id, saved.name, saved.system_prompt, saved.user_turns, tuple(rows), saved
    )


def list_sessions(*, db_url: str | None = None) -> pd.DataFrame:
    """The saved sessions, newest first: id, name, strategies, turns and tokens."""
    import pandas as pd

    from storage.store import Store

    store = Store(db_url)
    try:
        infos = store.list()
    finally:
        store.close()
    columns = [f.name for f in fields(infos[0])] if infos else ["id", "name", "turns"]
    return pd.DataFrame([asdict(i) for i in infos], columns=columns)
