"""Semantic Kernel's chat history reducers, as its documentation runs them: the user's message
is added to the history, `await history.reduce()` runs, and the reduced history is what the
model gets (and stays the history: the reducer removes messages for good).

`sk_truncation`: `ChatHistoryTruncationReducer(target_count, threshold_count)` keeps the
newest `target_count` messages (and the system message) once the history passes
target + threshold. `sk_summarization`: `ChatHistorySummarizationReducer` with the same
counts folds the removed messages into a summary message written by its own instructions,
through a chat completion service that is the lab's upkeep model.

Messages carry the lane's ids in their metadata (`lab_id`), which the reducers keep.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from memory.types import Message
from plugins.frameworks.base import Framework, FrameworkStrategy, ModelBridge, Sent, text_of

SEMANTIC_KERNEL = Framework("Semantic Kernel", "semantic-kernel", "semantic_kernel")
ID = "lab_id"
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def _message(role: str, text: str, lab_id: str | None) -> Any:
    from semantic_kernel.contents import AuthorRole, ChatMessageContent

    metadata = {ID: lab_id} if lab_id else {}
    return ChatMessageContent(role=AuthorRole(role), content=text, metadata=metadata)


def _sent(messages: list[Any]) -> list[Sent]:
    out = []
    for message in messages:
        role = _ROLES.get(str(message.role.value))
        if role is None:
            raise ValueError(
                f"a {message.role.value!r} message: the lab sends user and assistant turns"
            )
        out.append(Sent(role, text_of(message.content or ""), message.metadata.get(ID)))
    return out


@cache
def _service_class() -> type:
    from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase
    from semantic_kernel.contents import AuthorRole, ChatMessageContent

    class LabUpkeepService(ChatCompletionClientBase):
        """A Semantic Kernel chat service whose every call is one lab upkeep call."""

        bridge: Any = None

        async def _inner_get_chat_message_contents(
            self, chat_history: Any, settings: Any
        ) -> list[Any]:
            system = "\n\n".join(
                text_of(m.content or "")
                for m in chat_history.messages
                if _ROLES.get(m.role.value) == "system"
            )
            rest = [
                Message(
                    "assistant" if m.role.value == "assistant" else "user", text_of(m.content or "")
                )
                for m in chat_history.messages
                if _ROLES.get(m.role.value) != "system"
            ]
            text = self.bridge.complete(system, rest)
            return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=text)]

    return LabUpkeepService


def upkeep_service(bridge: ModelBridge) -> Any:
    """A Semantic Kernel chat completion service that sends through `bridge`."""
    return _service_class()(ai_model_id="memory-lab-upkeep", bridge=bridge)


class _Reducer(FrameworkStrategy):
    framework = SEMANTIC_KERNEL

    def _start(self) -> list[tuple[str, str, str | None]]:
        return [("system", self.system_prompt, None)] if self.system_prompt else []

    def _reducer(self, messages: list[Any]) -> Any:
        raise NotImplementedError

    def _before_model(
        self, state: list[tuple[str, str, str | None]], user_text: str
    ) -> tuple[list[Sent], Any]:
        history = [_message(r, t, i) for r, t, i in state]
        history.append(_message("user", user_text, "new"))
        reducer = self._reducer(history)
        asyncio.run(reducer.reduce())
        sent = _sent(list(reducer.messages))
        after = [
            (s.role, s.content, s.origin or (m.metadata.get(ID) if m.metadata else None))
            for s, m in zip(sent, reducer.messages, strict=True)
        ]
        return sent, after

    def _after_reply(
        self, state: list[tuple[str, str, str | None]], user_text: str, reply: str
    ) -> Any:
        index = len(self.history)
        named = [(r, t, f"u{index}" if i == "new" else i) for r, t, i in state]
        return [*named, ("assistant", reply, f"a{index}")]

    def _summarised(self, state: list[tuple[str, str, str | None]]) -> set[int]:
        if not any(r != "system" and i is None for r, _, i in state) and not any(
            r == "system" and i is None and t != self.system_prompt for r, t, i in state
        ):
            return set()
        kept = [int(i[1:]) for _, _, i in state if i and i[1:].isdigit()]
        first = min(kept) if kept else len(self.history) + 1
        return set(range(1, first))

    def _dump(self, state: list[tuple[str, str, str | None]]) -> Any:
        return [list(item) for item in state]

    def _load(self, data: Any) -> Any:
        if data is None:
            return super()._load(data)
        return [(r, t, i) for r, t, i in data]


class SKTruncation(_Reducer):
    name = "sk_truncation"
    title = "Semantic Kernel ChatHistoryTruncationReducer"
    description = (
        "semantic_kernel ChatHistoryTruncationReducer(target_count, threshold_count): the "
        "newest messages once the history passes target + threshold"
    )

    def _reducer(self, messages: list[Any]) -> Any:
        from semantic_kernel.contents import ChatHistoryTruncationReducer

        return ChatHistoryTruncationReducer(
            messages=messages,
            target_count=int(self.options["target_count"]),
            threshold_count=int(self.options["threshold_count"]),
        )


class SKSummarization(_Reducer):
    name = "sk_summarization"
    title = "Semantic Kernel ChatHistorySummarizationReducer"
    description = (
        "semantic_kernel ChatHistorySummarizationReducer(target_count, threshold_count): "
        "removed messages folded into a summary message"
    )
    uses_summary = True

    def _reducer(self, messages: list[Any]) -> Any:
        from semantic_kernel.contents import ChatHistorySummarizationReducer

        return ChatHistorySummarizationReducer(
            messages=messages,
            service=upkeep_service(self.bridge),
            target_count=int(self.options["target_count"]),
            threshold_count=int(self.options["threshold_count"]),
        )


PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "target_count", "default": 10,
     "help": "target_count: messages kept after a reduction, the system message included "
     "(required by SK; the lab's 10; 1 would keep only the system message)",
     "minimum": 2, "maximum": 1000, "in_label": True},
    {"name": "threshold_count", "default": 0,
     "help": "threshold_count: messages past the target before it reduces (the default, 0)",
     "minimum": 0, "maximum": 1000},
)  # fmt: skip
