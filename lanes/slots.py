"""The slot plan: which of the embedded server's slots each lane's calls run in.

llama.cpp keeps one cached prompt per slot and, unasked, sends a request to the idle slot
whose cached prompt it shares most with. Two lanes with identical prefixes (the entity and
hybrid lanes early in the FinCoach demo) then end up sharing one warmed slot: the second
warm-up is answered from the first's cache, and at the turn's start one of the two lanes
re-reads its whole prefix while every lane's first token waits for it. An upkeep call
(a summary, a fact extraction) can likewise land in a lane's idle slot and push its
conversation out.

Pinned (a call's `slot`, sent as llama.cpp's `id_slot`; lanes/embedded_router.py routes
each call), each lane's replies and
warm-ups use a slot of their own, and each lane that makes upkeep calls has a second slot
for them, so one lane's cache is never another's. A request for a busy slot waits for it
(the server defers it), which within one lane never happens: its upkeep follows its reply.

Pinning applies only where warming does (the embedded server with its prompt cache on;
`lanes.warmup.wanted`) and only where the server has the slots: with fewer slots than
lanes plus upkeep lanes, only replies are pinned; with fewer than lanes, nothing is, and the
server picks as before. Two browser sessions on one server pin the same
slots and take turns in them instead of evicting each other's caches.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from providers import embedded


@dataclass(frozen=True)
class Pins:
    """The slots one lane calls in: its replies and warm-ups, and its upkeep (None: unpinned)."""

    reply: int | None = None
    upkeep: int | None = None


def plan(
    labels: Sequence[str],
    pinnable: Mapping[str, bool],
    upkeep: Mapping[str, bool],
    total: int,
) -> dict[str, Pins]:
    """Slots for the lanes `labels`, in order: reply slots 0, 1, ... for the lanes whose reply
    settings may be pinned (`pinnable`), then one upkeep slot for each of those whose upkeep
    calls may be pinned too (`upkeep`). When those are more than `total` slots, upkeep calls
    are left unpinned; when the replies alone are, nothing is pinned."""
    replies = [label for label in labels if pinnable.get(label)]
    upkept = [label for label in replies if upkeep.get(label)]
    if len(replies) + len(upkept) > total:
        upkept = []
    if not replies or len(replies) > total:
        return {label: Pins() for label in labels}
    reply_slot = {label: i for i, label in enumerate(replies)}
    upkeep_slot = {label: len(replies) + i for i, label in enumerate(upkept)}
    return {label: Pins(reply_slot.get(label), upkeep_slot.get(label)) for label in labels}


def server_slots() -> int:
    """The embedded server's slot count: the running server's, else what it would start with;
    0 when MEMORY_LAB_EMBEDDED_PIN=0 (pinning off, for comparisons)."""
    if os.environ.get("MEMORY_LAB_EMBEDDED_PIN", "1").strip() == "0":
        return 0
    running = embedded.info()
    return running.slots if running is not None else embedded.EmbeddedConfig.from_env().slots
