"""Fact extraction on the embedded model, with and without the JSON-shape grammar.

The entity lane's upkeep on the five FinCoach demo turns, run three ways in one process and
interleaved turn by turn (so every arm sees the same machine load):

- before: what every extraction call sent before the schema existed: the earlier prompt
  (its shape example `{"set": {"key": "value", ...}, ...}`, which SmolLM2 copied word for
  word) and no `response_format`, so only the prompt asks for JSON;
- prompt: today's prompt (the shape described in words), still without `response_format`;
- after: the request as `extraction_request` builds it; the embedded server gets the
  schema's shape as a compact, bounded grammar (providers.families.embedded.compact_grammar: no
  whitespace, at most COMPACT_MEMBERS facts) and a frequency penalty
  (providers.bodies.EMBEDDED_JSON_FREQUENCY_PENALTY) against the loops SmolLM2 falls into.

Each arm keeps its own fact store across the turns, as the lane does (memory's
`extract_facts`, the code the lane runs). The assistant side of each turn is the reply the
embedded model gave in the recorded demo (scenarios/fincoach_recorded.json, entity lane), so
both arms read the same turns. Calls go through providers.stream at the upkeep cap the app
uses (lanes.session.UpkeepLimits), temperature 0, the server's prompt cache off.

Prints per call: output tokens, why generation stopped (stop: the model or the grammar
ended it; length: the cap cut it), whether the reply parsed, seconds and facts held; then
per arm: parse success, output tokens, seconds, and the facts the store holds after turn 5.

    .venv/bin/python bench/bench_extraction.py

No Streamlit, no app. Other busy processes skew the seconds (the load average is printed);
token counts and parse results at temperature 0 do not depend on load.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lanes.session import UpkeepLimits  # noqa: E402
from memory.maintenance import Upkeep  # noqa: E402
from memory.strategies.composed import extract_facts  # noqa: E402
from memory.strategies.entity import EntityMemory  # noqa: E402
from memory.tokens import TokenCounter  # noqa: E402
from memory.types import Completion, Request, Turn  # noqa: E402
from providers import embedded, preset, stream  # noqa: E402
from scenarios.fincoach import DEMO_TURNS, SYSTEM_PROMPT  # noqa: E402

# memory.maintenance.EXTRACTION_SYSTEM before this branch, kept here only for the "before" arm
EARLIER_PROMPT = (
    "You keep a store of facts about the user. Read the current facts and the latest turn, "
    "then reply with JSON only, in this shape: "
    '{"set": {"key": "value", ...}, "delete": ["key", ...]}. '
    "Use short snake_case keys (name, monthly_salary, monthly_expenses, ...). "
    "Set new or changed facts stated by either side: facts the user stated under plain keys, "
    "figures and commitments the assistant gave under keys starting assistant_ "
    "(assistant_suggested_emergency_fund, ...). Delete facts the user retracted. "
    'If nothing changed reply {"set": {}, "delete": []}.'
)

RECORDED = ROOT / "scenarios" / "fincoach_recorded.json"


def recorded_replies() -> list[str]:
    """The entity lane's replies in the recorded demo, one per demo turn."""
    data = json.loads(RECORDED.read_text(encoding="utf-8"))
    turns = data["lanes"]["entity"]["turns"]
    replies = [str(t["reply"]) for t in turns]
    if len(replies) != len(DEMO_TURNS):
        raise SystemExit(f"{RECORDED} holds {len(replies)} entity turns, not {len(DEMO_TURNS)}")
    return replies


def _unset(request: Request) -> Completion:
    raise RuntimeError("each call sets its own extractor")


@dataclass
class Arm:
    """One way of asking, its own entity store, and what each call did."""

    name: str
    with_schema: bool
    lane: EntityMemory
    system: str | None = None  # a prompt in place of the request's own
    rows: list[dict[str, object]] = field(default_factory=list)

    def run_turn(self, turn: Turn, settings: object) -> dict[str, object]:
        sent: dict[str, object] = {}

        def model(request: Request) -> Completion:
            if not self.with_schema:
                request = dataclasses.replace(request, reply_schema=None)
            if self.system is not None:
                request = dataclasses.replace(request, system=self.system)
            reply = stream(request, settings)  # type: ignore[arg-type]
            if reply.error is not None:
                raise reply.error
            sent["output"] = reply.usage.output if reply.usage else None
            sent["finish"] = reply.finish_reason
            sent["format"] = "response_format" in reply.body
            sent["text"] = reply.text
            return Completion(reply.text, reply.usage, reply.body, reply.model)

        self.lane.upkeep = Upkeep(extract=model)
        started = time.perf_counter()
        call = extract_facts(self.lane, turn)
        row = {
            "turn": turn.index,
            "seconds": time.perf_counter() - started,
            "parsed": call.ok,
            "facts": len(self.lane.facts),
            "ungrounded": call.ungrounded,
            "filled_by_rules": call.filled_by_rules,
            "error": call.error,
            **sent,
        }
        self.rows.append(row)
        return row


def main() -> None:
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores")
    info = embedded.start()
    cap = UpkeepLimits().extraction
    settings = preset("embedded").settings(max_tokens=cap, temperature=0.0, timeout=600.0)
    print(f"embedded model {info.model}, extraction cap {cap} tokens, temperature 0\n")
    counter = TokenCounter()

    def lane() -> EntityMemory:
        return EntityMemory(SYSTEM_PROMPT, counter=counter, upkeep=Upkeep(extract=_unset))

    arms = [
        Arm("before", False, lane(), EARLIER_PROMPT),
        Arm("prompt", False, lane()),
        Arm("after", True, lane()),
    ]
    print(f"{'arm':<7} {'turn':>4} {'format':>6} {'out tok':>7} {'finish':>7} "
          f"{'parsed':>6} {'s':>6} {'facts':>5}  reply")  # fmt: skip
    for index, (user, assistant) in enumerate(zip(DEMO_TURNS, recorded_replies(), strict=True), 1):
        turn = Turn(index, user, assistant)
        for arm in arms:
            row = arm.run_turn(turn, settings)
            print(
                f"{arm.name:<7} {index:>4} {'yes' if row['format'] else 'no':>6} "
                f"{row['output']!s:>7} {row['finish']!s:>7} {'yes' if row['parsed'] else 'NO':>6} "
                f"{row['seconds']:>6.1f} {row['facts']:>5}  {str(row['text'])[:70]!r}",
                flush=True,
            )
    print()
    print(f"{'':<34}" + "".join(f"{a.name:>12}" for a in arms))
    summary = {
        "parse success (of 5)": lambda a: sum(bool(r["parsed"]) for r in a.rows),
        "cut at the cap (finish=length)": lambda a: sum(r["finish"] == "length" for r in a.rows),
        "output tokens, total": lambda a: sum(int(r["output"] or 0) for r in a.rows),
        "output tokens, mean per call": lambda a: (
            sum(int(r["output"] or 0) for r in a.rows) / len(a.rows)
        ),
        "seconds, total": lambda a: sum(float(r["seconds"]) for r in a.rows),  # type: ignore[arg-type]
        "facts held after turn 5": lambda a: len(a.lane.facts),
    }
    for label, measure in summary.items():
        values = [measure(a) for a in arms]
        cells = "".join(f"{v:>12.1f}" if isinstance(v, float) else f"{v:>12}" for v in values)
        print(f"{label:<34}{cells}")
    before, _, after = (sum(int(r["output"] or 0) for r in a.rows) for a in arms)
    if before:
        print(f"output tokens after/before: {after / before:.2f}")
    for arm in arms:
        dropped = [v for row in arm.rows for v in row["ungrounded"]]
        filled = [v for row in arm.rows for v in row["filled_by_rules"]]
        print(f"\n{arm.name}: {len(dropped)} ungrounded values dropped {dropped}; "
              f"{len(filled)} filled in by the rules {filled}")  # fmt: skip
        print(f"facts after turn 5 ({arm.name}): {json.dumps(arm.lane.facts, ensure_ascii=False)}")
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
