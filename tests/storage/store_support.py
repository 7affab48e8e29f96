"""Helpers shared by the store, transcript and export tests."""

from __future__ import annotations

from typing import Any

import providers
from lanes.lane import LaneTurn
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import DEFAULT_LANES
from present.lanes import comparison_figure, cumulative_figure, lane_figure
from providers.fake import FakeTransport
from scenarios import fincoach
from storage.store import SavedSession

PLANTED = "sk-proj-PLANTEDtypedKEY0000000000000000000000"  # typed in the sidebar
PLANTED_ENV = "sk-ant-api03-PLANTEDenvKEY111111111111111111111"  # in the environment


def openai_settings(api_key: str | None = None) -> Any:
    return providers.preset("openai").settings("gpt-4o-mini", api_key=api_key)


def make_session(
    transport: Any | None = None,
    *,
    lanes: tuple[str, ...] = DEFAULT_LANES,
    provider: Any | None = None,
    share: bool = False,
) -> Session:
    return Session(
        system_prompt=fincoach.SYSTEM_PROMPT,
        lanes=[LaneSpec(n) for n in lanes],
        provider=provider or openai_settings(),
        transport=transport or FakeTransport(),
        share=share,
    )


def figures(records: dict[str, list[LaneTurn]], titles: dict[str, str]) -> dict[str, Any]:
    """Every number the charts draw: (trace name, x, y) of each figure."""

    def points(fig: Any) -> list[tuple[str, list[Any], list[Any]]]:
        return [(t.name, list(t.x or ()), list(t.y or ())) for t in fig.data]

    out = {
        "comparison": points(comparison_figure(records, titles)),
        "cumulative": points(cumulative_figure(records, titles)),
    }
    for name, recs in records.items():
        out[name] = points(lane_figure(name, recs))
    return out


def saved_figures(saved: SavedSession) -> dict[str, Any]:
    return figures(saved.records, saved.titles())


def live_figures(session: Session) -> dict[str, Any]:
    return figures(session.records(), {n: lane.title for n, lane in session.lanes.items()})
