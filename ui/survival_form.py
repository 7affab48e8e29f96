"""The fact-survival page's settings as plain data: the facts table and the engine config.

No Streamlit here, so the page's parsing is tested like any function.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from engines.survival import SurvivalConfig, SurvivalConfigError
from memory.choices import StrategyChoice, parse_choice
from memory.errors import MemoryLabError
from scenarios import fincoach

OWN = "own"  # the filler is the user's own log, played as it was, its facts at their turns


def build_config(settings: dict[str, Any], choices: dict[str, StrategyChoice]) -> SurvivalConfig:
    """The engine's config from the page's plain settings (SurvivalConfigError if wrong)."""
    strategies = [choices[label] for label in settings["strategies"] if label in choices]
    for part in filter(None, (p.strip() for p in settings["variants"].split(";"))):
        try:
            strategies.append(parse_choice(part))
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
