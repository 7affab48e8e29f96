"""The fact-survival page's settings as plain data: the defaults, what the settings form's
values become (`apply`), the engine config, the facts table, the plan line and the results
table.

No Streamlit here, so the page's parsing is tested like any function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from engines.survival import (
    DEFAULT_FACTS,
    DEFAULT_PROBE_TURNS,
    EXAMPLE_FACTS,
    Estimate,
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    parse_facts_json,
    plan_sentence,
)
from memory.errors import MemoryLabError
from memory.lane_spec import LaneSpec, parse_spec
from memory.registry import REGISTRY
from scenarios import fincoach
from scenarios.filler import TranscriptError, parse_transcript

OWN = "own"  # the filler is the user's own log, played as it was, its facts at their turns
MAIN_MODEL, NO_MODEL = "main", "none"
ESTIMATE_FIELDS = (
    "probe_calls",
    "reply_calls",
    "maintenance_calls",
    "prompt_tokens",
    "maintenance_tokens",
    "output_tokens",
    "rows",
    "exact",
)


def lane_choices(lanes: list[LaneSpec]) -> list[LaneSpec]:
    """The main page's lanes first, then every other strategy at its defaults."""
    have = {c.name for c in lanes}
    return [*lanes, *(LaneSpec(name) for name in REGISTRY if name not in have)]


def default_settings(lanes: list[LaneSpec], *, parallel: bool) -> dict[str, Any]:
    """The page's first settings: the default facts, probes and the main page's lanes."""
    return {
        "facts": [f.to_dict() for f in DEFAULT_FACTS],
        "system_prompt": fincoach.SYSTEM_PROMPT,
        "use_facts": [f.key for f in DEFAULT_FACTS],
        "probe_turns": ", ".join(str(n) for n in DEFAULT_PROBE_TURNS),
        "strategies": [c.label for c in lanes],
        "variants": "",
        "filler": "builtin",
        "filler_turns": None,
        "filler_name": "",
        "seed": 0,
        "replies": "fixed",
        "model": MAIN_MODEL,
        "probe_tokens": 64,
        "parallel": parallel,
    }


@dataclass(frozen=True)
class FormValues:
    """What the settings form held when it was applied (uploads as (name, bytes))."""

    edited: pd.DataFrame
    facts_file: tuple[str, bytes] | None
    add_examples: bool
    use_facts: list[str]
    probe_turns: str
    strategies: list[str]
    variants: str
    system_prompt: str
    filler: str
    transcript: tuple[str, bytes] | None
    replies: str
    seed: int
    model: str
    probe_tokens: int
    parallel: bool


def apply(
    settings: dict[str, Any], form: FormValues
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The new settings from an applied form, the errors and the warnings to show (a file
    that could not be read is named and left out; everything else is kept)."""
    problems: list[str] = []
    warnings: list[str] = []
    facts = facts_from_editor(form.edited, settings["facts"])
    if form.facts_file is not None:
        name, data = form.facts_file
        try:
            facts = [f.to_dict() for f in parse_facts_json(data)]
        except SurvivalConfigError as exc:
            problems.append(f"Could not read {name}: {exc}")
    if form.add_examples:
        have = {f["key"] for f in facts}
        facts += [f.to_dict() for f in EXAMPLE_FACTS if f.key not in have]
    new_keys = [f["key"] for f in facts if f["key"] not in {g["key"] for g in settings["facts"]}]
    new = {
        **settings,
        "facts": facts,
        "use_facts": list(form.use_facts) + new_keys,
        "system_prompt": form.system_prompt,
        "probe_turns": form.probe_turns,
        "strategies": list(form.strategies),
        "variants": form.variants,
        "filler": form.filler,
        "seed": int(form.seed),
        "replies": form.replies,
        "model": form.model,
        "probe_tokens": int(form.probe_tokens),
        "parallel": bool(form.parallel),
    }
    if form.transcript is not None and form.filler == OWN:
        warnings.append(
            "The transcript upload is filler for the other modes: import your own log above."
        )
    elif form.transcript is not None:
        name, data = form.transcript
        try:
            turns = parse_transcript(data.decode("utf-8"), name=name)
            new["filler_turns"] = [{"user": t.user, "reply": t.reply} for t in turns]
            new["filler_name"] = name
        except (TranscriptError, UnicodeDecodeError) as exc:
            problems.append(f"Could not read {name}: {exc}")
    return new, problems, warnings


def plan_line(
    config: SurvivalConfig, est: dict[str, Any], settings: dict[str, Any], *, embedded: bool
) -> str:
    """The plan as one sentence (Markdown from trusted figures), with a rough duration on
    the embedded model."""
    with_model = settings["model"] == MAIN_MODEL
    plan = plan_sentence(
        config, Estimate(**{k: est[k] for k in ESTIMATE_FIELDS}), with_model=with_model
    )
    if embedded:
        minutes = est["rough_s"] * (1.0 if settings.get("parallel") else 1.4) / 60
        plan += f"; roughly {max(1, round(minutes))} min on the embedded model"
    return plan + "."


def results_table(result: SurvivalResult) -> pd.DataFrame:
    """One row per probe, as the results table shows it."""
    return pd.DataFrame(
        [
            {
                "strategy": r.strategy,
                "N": r.probe_turn,
                "fact": r.fact,
                "said by": r.speaker,
                "verdict": r.verdict,
                "payload": r.payload_state,
                "reply": r.recall_state,
                "expected": "; ".join(r.answers),
                "stale values": "; ".join(r.stale_answers),
                "upkeep": r.upkeep,
                "flag": r.flag,
                "found in": ", ".join(r.found_in),
                "probe": r.probe,
                "model's answer": r.reply,
                "prompt tokens": r.probe_prompt_tokens,
                "spent to reach N": r.prompt_tokens_spent,
                "upkeep calls": r.maintenance_calls,
                "error": r.error or "",
            }
            for r in result.rows
        ]
    )


def build_config(settings: dict[str, Any], choices: dict[str, LaneSpec]) -> SurvivalConfig:
    """The engine's config from the page's plain settings (SurvivalConfigError if wrong)."""
    strategies = [choices[label] for label in settings["strategies"] if label in choices]
    for part in filter(None, (p.strip() for p in settings["variants"].split(";"))):
        try:
            strategies.append(parse_spec(part))
        except MemoryLabError as exc:
            raise SurvivalConfigError(f"extra variant {part!r}: {exc}") from None
    if settings["filler"] == "import" and not settings["filler_turns"]:
        raise SurvivalConfigError("import a transcript, or choose the built-in filler")
    own = settings["filler"] == OWN
    if own and not settings["filler_turns"]:
        raise SurvivalConfigError(
            "import your log above (Probe facts from your own log), or choose another filler"
        )
    facts = [f for f in settings["facts"] if f.get("key") in settings["use_facts"]]
    return SurvivalConfig.from_dict(
        {
            "facts": facts,
            "probe_turns": settings["probe_turns"],
            "strategies": [c.as_dict() for c in strategies],
            "filler": settings["filler_turns"]
            if settings["filler"] in ("import", OWN)
            else "built-in",
            "filler_in_place": own,
            "filler_seed": int(settings["seed"]),
            "replies": settings["replies"],
            "system_prompt": settings.get("system_prompt", fincoach.SYSTEM_PROMPT),
        }
    ).validate()


def facts_rows(facts: list[dict[str, Any]]) -> pd.DataFrame:
    """The facts as the editor shows them (updates summarised; edit them in a facts file)."""
    rows = []
    for f in facts:
        updates = f.get("updates") or []
        rows.append(
            {
                "key": f["key"],
                "speaker": f.get("speaker", "user"),
                "text": f["text"],
                "probe": f["probe"],
                "answer": "; ".join(f["answer"]),
                "turn": int(f.get("turn", 1)),
                "updates": "; ".join(
                    f"turn {u['turn']}: {'; '.join(u['answer'])}" for u in updates
                ),
            }
        )
    return pd.DataFrame(rows)


def facts_from_editor(edited: pd.DataFrame, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The edited table as facts-file entries; updates and labels kept from `before` by key."""
    kept = {f["key"]: f for f in before}
    facts = []
    for row in edited.to_dict("records"):
        key = str(row.get("key") or "").strip()
        if not key:
            continue
        turn = row.get("turn")
        fact = {
            "key": key,
            "speaker": str(row.get("speaker") or "user"),
            "text": str(row.get("text") or ""),
            "probe": str(row.get("probe") or ""),
            "answer": [a.strip() for a in str(row.get("answer") or "").split(";") if a.strip()],
            "turn": int(turn) if turn == turn and turn else 1,  # NaN -> 1
        }
        for extra in ("label", "ask", "updates"):
            if kept.get(key, {}).get(extra):
                fact[extra] = kept[key][extra]
        facts.append(fact)
    return facts


def suggestion_rows(suggestions: list[dict[str, Any]], ticked: list[str]) -> pd.DataFrame:
    """The suggested facts as the page's tick list (test?, turn, kind, answer, probe, said)."""
    return pd.DataFrame(
        [
            {
                "test": s["key"] in ticked,
                "turn": int(s["turn"]),
                "kind": s["kind"],
                "answer": "; ".join(s["answer"]),
                "probe": s["probe"],
                "what the user said": s["text"],
                "key": s["key"],
            }
            for s in suggestions
        ],
        columns=["test", "turn", "kind", "answer", "probe", "what the user said", "key"],
    )


def ticked_facts(edited: pd.DataFrame, suggestions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The suggestions ticked in the edited list, as facts-file entries (an edited probe
    question kept)."""
    by_key = {s["key"]: s for s in suggestions}
    out = []
    for row in edited.to_dict("records"):
        s = by_key.get(str(row.get("key")))
        if s is None or not bool(row.get("test")):
            continue
        fact = {k: v for k, v in s.items() if k != "kind"}
        probe = str(row.get("probe") or "").strip()
        if probe:
            fact["probe"] = probe
        out.append(fact)
    return out
