"""The one way a running `Session` is built: a new conversation (`start`), a saved one
continued (`resume`, `continue_stored`). The main page, the Sessions page, transcript
replay, the library and the scripts all come here, so what a session runs with is one
value (`RunOptions`) and storage only hands back records.

May touch: lanes/ (the Session it builds), storage/ (the saved records it reads) and the
endpoint policy that decides where a continued session's calls go (never the file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from lanes.endpoint_policy import saved_settings
from lanes.session import Session, UpkeepLimits
from lanes.transport import Transport
from memory.lane_spec import LaneSpec
from providers.settings import ProviderSettings
from storage.store import SavedSession


@dataclass(frozen=True)
class RunOptions:
    """What a session runs with besides its lanes: the provider its lanes call, the one its
    upkeep (summaries, extraction) calls, the transport under the stack, upkeep output limits
    (None: as long as a reply), whether identical calls are shared, and `lean` (saved
    records kept without their bodies: an import nobody draws)."""

    provider: Any = None  # None: a resumed session's saved provider (`start` needs one)
    maintenance: Any | None = None
    transport: Transport | None = None
    upkeep: UpkeepLimits | None = None
    share: bool = False
    lean: bool = False

    def with_(self, **changes: Any) -> RunOptions:
        return replace(self, **changes)


def start(
    system_prompt: str,
    lanes: Sequence[LaneSpec[ProviderSettings]],
    run: RunOptions,
    *,
    name: str = "",
    session_id: str | None = None,
) -> Session:
    """A new conversation of `lanes`."""
    if run.provider is None:
        raise ValueError("a new session needs a provider")
    return Session(
        system_prompt=system_prompt,
        lanes=lanes,
        provider=run.provider,
        maintenance=run.maintenance,
        transport=run.transport,
        session_id=session_id,
        name=name,
        upkeep=run.upkeep,
        share=run.share,
        lean=run.lean,
    )


def resume(
    saved: SavedSession,
    run: RunOptions | None = None,
    *,
    lane_providers: Mapping[str, ProviderSettings] | None = None,
) -> Session:
    """`saved` as a live session (no model call), to add turns to it. Without a provider in
    `run`, it runs on its saved provider and upkeep settings, their endpoint and key source
    taken from the catalog, never from the data (lanes/endpoint_policy.py); a lane saved
    with its own provider gets its settings the same way unless `lane_providers` (by label)
    gives them. `run.lean` does not apply (the saved turns are loaded whole)."""
    run = run or RunOptions()
    if run.provider is None:
        maintenance = saved.settings.get("maintenance")
        run = run.with_(
            provider=saved_settings(saved.settings.get("provider")),
            maintenance=run.maintenance or (saved_settings(maintenance) if maintenance else None),
        )
    own = dict(lane_providers or {})
    if lane_providers is None:
        for label in saved.strategies:
            public = saved.lane_provider(label)
            if public:
                own[label] = saved_settings(public)
    return Session.from_snapshot(
        saved.snapshot(),
        provider=run.provider,
        maintenance=run.maintenance,
        transport=run.transport,
        lane_providers=own,
        upkeep=run.upkeep,
        share=run.share,
    )


def continue_stored(store: Any, session_id: str, run: RunOptions | None = None) -> Session:
    """The session `session_id` of `store` (storage's Store) as a live one; see `resume`.
    Not tracked yet: call `store.track` on it."""
    return resume(store.load(session_id), run)
