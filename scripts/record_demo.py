"""Record the FinCoach demo on the embedded model into scenarios/fincoach_recorded.json.

Runs seed 000's five turns through the main page's default lanes and settings (the same
Session the page builds, minus saving to the store) and writes the session export that the
main page's "Recorded demo" button loads. The replies are whatever the model gives: rerun
this after changing the model or the defaults.

    .venv/bin/python scripts/record_demo.py [--out scenarios/fincoach_recorded.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engines import sessions  # noqa: E402
from engines.sessions import RunOptions  # noqa: E402
from lanes.session import UpkeepLimits  # noqa: E402
from memory.lane_spec import LaneSpec  # noqa: E402
from scenarios import fincoach  # noqa: E402
from storage.store import SavedSession  # noqa: E402
from ui.app_state import AppConfig, keyed_settings  # noqa: E402
from ui.persistence import app_settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "scenarios" / "fincoach_recorded.json")
    args = parser.parse_args()
    config = AppConfig.default()
    choice = config.provider
    session = sessions.start(
        fincoach.SYSTEM_PROMPT,
        [LaneSpec(lane.name, lane.params) for lane in config.lanes],
        RunOptions(keyed_settings(choice), upkeep=UpkeepLimits() if choice.short_upkeep else None),
        name="FinCoach demo (recorded)",
    )
    for text in fincoach.DEMO_TURNS:
        started = time.perf_counter()
        records = session.run_turn(text)
        bad = [f"{r.lane}: {r.status} {r.error}" for r in records.values() if not r.ok]
        if bad:
            raise SystemExit("a lane failed, nothing written: " + "; ".join(bad))
        print(f"turn {session.turn}: {time.perf_counter() - started:.1f} s")
    saved = SavedSession.from_session(session, app=app_settings(config), source="recorded")
    args.out.write_text(json.dumps(saved.as_dict(), ensure_ascii=False, indent=1, default=str))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
