"""Do the lanes' warm-ups land? Prompt tokens each lane reads anew per turn, after warm-ups.

Runs the default six lanes (or `--lanes`) on the embedded model with its prompt cache, through
`Session.run_turn` (no page, no browser): the warm-up before turn 1, then each FinCoach turn,
then every after-upkeep warm-up awaited (the embedded router's `settle`) before the next turn, as the
demo does. Prints, per turn and lane, the prompt tokens sent and how many of them were not
found in llama.cpp's cache (read anew: every lane's first token waits for all of these), and
per lane what its warm-ups read. A warm-up that landed leaves its lane about 30 tokens to read
(the new message and the chat template); more means the lane's request met another slot.

    .venv/bin/python bench/bench_warmup.py [--lanes full,entity,hybrid] [--turns 3]

Token counts do not depend on machine load; the seconds printed do.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lanes.session import Session, UpkeepLimits  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from memory.registry import DEFAULT_LANES, REGISTRY  # noqa: E402
from providers import embedded, preset  # noqa: E402
from scenarios import fincoach  # noqa: E402

SETTLE_S = 60.0  # a bound for a hung warm-up; the demo waits at most ui.demo_controls' 2 s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lanes", default=",".join(DEFAULT_LANES))
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    lanes = [name.strip() for name in args.lanes.split(",") if name.strip()]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    embedded.start()
    settings = preset("embedded").settings(max_tokens=80, prompt_cache=True)
    # a system prompt no slot holds yet: its own marker first
    prompt = f"Session {uuid.uuid4().hex}. {fincoach.SYSTEM_PROMPT}"
    session = Session(
        system_prompt=prompt,
        lanes=[LaneSpec(n, REGISTRY[n].defaults()) for n in lanes],
        provider=settings,
        upkeep=UpkeepLimits(),
    )
    warm = session.pacing.prepare()
    if warm is not None:
        warm.wait(SETTLE_S)
        print(f"warm-up before turn 1: {warm.stats.calls} calls, {warm.stats.tokens_read} read")
    print(f"{'turn':>4}  {'lane':16}{'prompt':>7}{'read anew':>10}  {'after: warm calls/read':>22}")
    for turn, text in enumerate(fincoach.DEMO_TURNS[: args.turns], 1):
        started = time.perf_counter()
        records = session.run_turn(text)
        ran = time.perf_counter() - started
        session.pacing.settle(SETTLE_S)
        for name, record in records.items():
            prompt_tokens = record.billed_input or 0
            anew = prompt_tokens - (record.cached_input or 0)
            after = getattr(session.pacing, "lane_warmups", {}).get(name)
            warmed = f"{after.stats.calls}/{after.stats.tokens_read}" if after else "-"
            print(f"{turn:>4}  {name:16}{prompt_tokens:>7}{anew:>10}  {warmed:>22}")
        total = sum((r.billed_input or 0) - (r.cached_input or 0) for r in records.values())
        print(f"{turn:>4}  {'all lanes':16}{'':>7}{total:>10}  turn took {ran:.1f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
