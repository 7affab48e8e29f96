"""LangChain's side of the bridge: lab turns as LangChain messages and back, a content token
counter, and the chat model that routes a LangChain component's model calls to the lab's
upkeep function (so LangMem, LangChain's middleware and its classic memories run their own
summary code against the lab's provider, each call recorded with its exact body).

Imports langchain-core when first used, never at import time.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from memory.tokens import TokenCounter
from memory.types import Turn
from plugins.frameworks.base import ModelBridge, Sent, text_of

ROLE_OF = {"human": "user", "ai": "assistant", "system": "system"}


def to_langchain(system: str, turns: Sequence[Turn], new: str | None) -> list[Any]:
    """System message, every turn as a human and an AI message (ids u1, a1, ...), then the new
    message (id `new`) when given."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    out: list[Any] = [SystemMessage(system, id="system")] if system else []
    for turn in turns:
        out.append(HumanMessage(turn.user, id=f"u{turn.index}"))
        out.append(AIMessage(turn.assistant, id=f"a{turn.index}"))
    if new is not None:
        out.append(HumanMessage(new, id="new"))
    return out


def from_langchain(messages: Sequence[Any]) -> list[Sent]:
    """LangChain messages as the lab reads them; a message id the lane gave keeps its origin."""
    out: list[Sent] = []
    for message in messages:
        role = ROLE_OF.get(message.type)
        if role is None:
            raise ValueError(f"a {message.type!r} message: the lab sends user and assistant turns")
        origin = message.id if isinstance(message.id, str) and _ours(message.id) else None
        if role == "system" and message.id == "system":
            origin = None
        out.append(Sent(role, text_of(message.content), origin))
    return out


def _ours(mid: str) -> bool:
    return mid == "new" or (mid[:1] in ("u", "a") and mid[1:].isdigit())


def content_counter(counter: TokenCounter) -> Any:
    """LangChain token_counter: the lab's tokens over each message's content, no per-message
    overhead (the count the lab's own budgets use)."""

    def count(messages: Sequence[Any]) -> int:
        return sum(counter.count(text_of(m.content)) for m in messages)

    return count


@cache
def _bridge_model_class() -> type:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import ConfigDict

    from memory.types import Message

    class LabUpkeepChatModel(BaseChatModel):
        """A LangChain chat model whose every call is one lab upkeep call."""

        model_config = ConfigDict(arbitrary_types_allowed=True)
        bridge: Any
        counter: Any

        @property
        def _llm_type(self) -> str:
            return "memory-lab-upkeep"

        def _generate(
            self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            system = "\n\n".join(text_of(m.content) for m in messages if m.type == "system")
            rest = [
                Message("assistant" if m.type == "ai" else "user", text_of(m.content))
                for m in messages
                if m.type != "system"
            ]
            text = self.bridge.complete(system, rest)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

        def get_num_tokens(self, text: str) -> int:
            return int(self.counter.count(text))

        def get_num_tokens_from_messages(self, messages: list[Any], tools: Any = None) -> int:
            return sum(int(self.counter.count(text_of(m.content))) for m in messages)

    return LabUpkeepChatModel


def upkeep_model(bridge: ModelBridge, counter: TokenCounter) -> Any:
    """A LangChain chat model that sends through `bridge` and counts with `counter`."""
    return _bridge_model_class()(bridge=bridge, counter=counter)
