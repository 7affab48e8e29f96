"""Call sharing as a layer of the transport stack (lanes/transport.py): identical requests of
a session's lanes go out once (lanes/sharing.py says when two calls are the same call).

The lane that sends first makes the call through the layer below it, so that call is routed
as that lane's (its server slot, if a router below pins one); every lane it answered records
its body and the lanes it answered.

May import: lanes/transport.py, lanes/sharing.py, memory/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lanes.sharing import SharedCalls
from lanes.transport import Call, Layer
from memory.types import ModelFn, Request

if TYPE_CHECKING:
    from lanes.lane import ReplyLike


class SharingLayer(Layer):
    """Sends a call that another lane is already making for the same request only once."""

    def __init__(self, inner: Layer) -> None:
        super().__init__(inner)
        self.calls = SharedCalls()

    @property
    def sharing(self) -> SharedCalls:
        return self.calls

    def stream(self, call: Call, on_delta: Callable[[str], None] | None) -> ReplyLike:
        if call.lane is None:
            return self.inner.stream(call, on_delta)
        inner = self.inner

        def send(request: Request, settings: Any, delta: Callable[[str], None] | None) -> Any:
            return inner.stream(replace(call, request=request, settings=settings), delta)

        return self.calls.stream(call.lane, call.request, call.settings, on_delta, send)

    def model_fn(self, settings: Any, lane: str | None, slot: int | None = None) -> ModelFn:
        model = self.inner.model_fn(settings, lane, slot)
        if lane is None:
            return model
        return self.calls.model_fn(lane, settings, model)
