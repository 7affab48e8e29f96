"""Building a session's transport stack (lanes/transport.py), bottom up:

    Direct(transport) -> EmbeddedRouter (embedded model with its prompt cache) -> SharingLayer

The router sits below call sharing, so a shared call is routed as the lane that sent it.

May import: lanes/transport.py, lanes/embedded_router.py, lanes/shared_transport.py,
lanes/slots.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from lanes import slots
from lanes.embedded_router import EmbeddedRouter, wanted
from lanes.shared_transport import SharingLayer
from lanes.transport import SLOTS, WARM, Direct, LaneRoute, Layer, Transport, capabilities


def build(transport: Transport, routes: Sequence[LaneRoute], *, share: bool) -> Layer:
    """The stack over `transport` for lanes routed as `routes`; `share`: identical requests
    of the lanes go out once."""
    top: Layer = Direct(transport)
    if wanted(routes) and capabilities(transport) & {WARM, SLOTS}:
        top = EmbeddedRouter(top, routes, slots.server_slots())
    if share:
        top = SharingLayer(top)
    return top


def describe(top: Layer) -> str:
    """The stack as one line, top first (for notes and logs)."""
    names = []
    layer = top
    while not isinstance(layer, Direct):
        names.append(type(layer).__name__)
        layer = layer.inner
    names.append(f"Direct({type(layer.transport).__name__})")
    return " -> ".join(names)
