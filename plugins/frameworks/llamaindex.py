"""`llamaindex_memory`: LlamaIndex's `Memory.from_defaults(token_limit,
chat_history_token_ratio, token_flush_size)` with a `FactExtractionMemoryBlock`, as its
documentation builds an agent's memory: messages go in with `put`; once the chat history
passes token_limit x chat_history_token_ratio the oldest are flushed (archived, in whole
turns) into the memory blocks, whose content `get()` puts into the system message.

The lane's state is the memory's data: its active messages with the lane's id for each, and
the facts its block holds. The ids are kept beside the messages, never in them: LlamaIndex
counts a message's `additional_kwargs` as tokens, so an id there would move its flushes.
Its flush drops the oldest messages, so the active ones are always the newest put: the ids
are read back by position. A `Memory` is built on that data for each
step (LlamaIndex keeps it in an in-process SQLite store), with the lab's token counter as its
tokenizer and the lab's upkeep model as the fact block's LLM.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from memory.types import Message
from plugins.frameworks.base import Framework, FrameworkStrategy, ModelBridge, Sent, text_of

LLAMAINDEX = Framework("LlamaIndex", "llama-index-core", "llama_index.core")


@cache
def _llm_class() -> type:
    from llama_index.core.base.llms.types import (
        ChatMessage,
        ChatResponse,
        CompletionResponse,
        LLMMetadata,
    )
    from llama_index.core.llms import CustomLLM

    class LabUpkeepLLM(CustomLLM):
        """A LlamaIndex LLM whose every call is one lab upkeep call."""

        bridge: Any = None

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="memory-lab-upkeep", is_chat_model=True)

        def _send(self, messages: list[Any]) -> str:
            roles = [str(getattr(m.role, "value", m.role)) for m in messages]
            system = "\n\n".join(
                text_of(m.content or "")
                for m, r in zip(messages, roles, strict=True)
                if r == "system"
            )
            rest = [
                Message("assistant" if r == "assistant" else "user", text_of(m.content or ""))
                for m, r in zip(messages, roles, strict=True)
                if r != "system"
            ]
            return str(self.bridge.complete(system, rest))

        def chat(self, messages: Any, **kwargs: Any) -> Any:
            text = self._send(list(messages))
            return ChatResponse(message=ChatMessage(role="assistant", content=text))

        async def achat(self, messages: Any, **kwargs: Any) -> Any:
            return self.chat(messages, **kwargs)

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return CompletionResponse(text=str(self.bridge.complete("", [Message("user", prompt)])))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            raise NotImplementedError("the lab's upkeep calls do not stream")

    return LabUpkeepLLM


def upkeep_llm(bridge: ModelBridge) -> Any:
    """A LlamaIndex LLM that sends through `bridge`."""
    return _llm_class()(bridge=bridge)


class LlamaIndexMemory(FrameworkStrategy):
    name = "llamaindex_memory"
    title = "LlamaIndex Memory"
    description = (
        "llama_index Memory.from_defaults(token_limit, chat_history_token_ratio, "
        "token_flush_size) with a fact-extraction memory block"
    )
    framework = LLAMAINDEX
    uses_facts = True
    generated_part = "facts"

    def _start(self) -> dict[str, Any]:
        return {"messages": [], "facts": []}

    @contextmanager
    def _memory(self, state: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
        """A LlamaIndex Memory on `state`'s data, and its fact block; its in-memory SQLite
        store is closed on the way out (left open, its worker thread outlives the loop)."""
        from llama_index.core.async_utils import asyncio_run
        from llama_index.core.base.llms.types import ChatMessage
        from llama_index.core.memory import FactExtractionMemoryBlock, Memory
        from sqlalchemy.ext.asyncio import create_async_engine

        block = FactExtractionMemoryBlock(
            name="extracted_info", llm=upkeep_llm(self.extract_bridge), priority=1
        )
        block.facts = list(state["facts"])
        history = [ChatMessage(role=role, content=text) for role, text, _ in state["messages"]]
        count = self.counter.count
        engine = create_async_engine("sqlite+aiosqlite:///:memory:")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                memory = Memory.from_defaults(
                    session_id="lane",
                    chat_history=history,
                    token_limit=int(self.options["token_limit"]),
                    chat_history_token_ratio=float(self.options["chat_history_token_ratio"]),
                    token_flush_size=int(self.options["token_flush_size"]),
                    tokenizer_fn=lambda text: [0] * count(text),
                    memory_blocks=[block],
                    async_engine=engine,
                )
                yield memory, block
        finally:
            asyncio_run(engine.dispose())

    def _read(self, memory: Any, block: Any, ids: list[str]) -> dict[str, Any]:
        """The memory's data: its active messages, the newest of those put (ids in order)."""
        active = memory.get_all(status=_active())
        messages = [
            (str(getattr(m.role, "value", m.role)), text_of(m.content or ""), lab_id)
            for m, lab_id in zip(active, _newest(ids, len(active)), strict=True)
        ]
        return {"messages": messages, "facts": list(block.facts)}

    def _before_model(self, state: dict[str, Any], user_text: str) -> tuple[list[Sent], Any]:
        from llama_index.core.base.llms.types import ChatMessage

        ids = [lab_id for _, _, lab_id in state["messages"]] + ["new"]
        with self._memory(state) as (memory, block):
            memory.put(ChatMessage(role="user", content=user_text))
            got = memory.get()
            after = self._read(memory, block, ids)
        sent = [Sent("system", self.system_prompt, None)] if self.system_prompt else []
        # get() returns the memory block's system message (if any) and then active messages
        conversation = [m for m in got if str(getattr(m.role, "value", m.role)) != "system"]
        origins = iter(_newest(ids, len(conversation)))
        for m in got:
            role = str(getattr(m.role, "value", m.role))
            if role not in ("system", "user", "assistant"):
                raise ValueError(f"a {role!r} message: the lab sends user and assistant turns")
            origin = None if role == "system" else next(origins)
            sent.append(Sent(role, text_of(m.content or ""), origin))
        return sent, after

    def _after_reply(self, state: dict[str, Any], user_text: str, reply: str) -> Any:
        from llama_index.core.base.llms.types import ChatMessage

        index = len(self.history)
        named = {
            "messages": [(r, t, f"u{index}" if i == "new" else i) for r, t, i in state["messages"]],
            "facts": state["facts"],
        }
        ids = [lab_id for _, _, lab_id in named["messages"]] + [f"a{index}"]
        with self._memory(named) as (memory, block):
            memory.put(ChatMessage(role="assistant", content=reply))
            return self._read(memory, block, ids)

    def _summarised(self, state: dict[str, Any]) -> set[int]:
        if not state["facts"]:
            return set()
        kept = [int(i[1:]) for _, _, i in state["messages"] if i and i[1:].isdigit()]
        first = min(kept) if kept else len(self.history) + 1
        return set(range(1, first))

    def _dump(self, state: dict[str, Any]) -> Any:
        return {"messages": [list(m) for m in state["messages"]], "facts": list(state["facts"])}

    def _load(self, data: Any) -> Any:
        if data is None:
            return super()._load(data)
        return {"messages": [tuple(m) for m in data["messages"]], "facts": list(data["facts"])}


def _newest(ids: list[str], n: int) -> list[str]:
    """The ids of the newest `n` messages put (a flush only ever drops the oldest)."""
    if n > len(ids):
        raise ValueError(f"LlamaIndex returned {n} messages, but only {len(ids)} were put")
    return ids[len(ids) - n :]


def _active() -> Any:
    from llama_index.core.storage.chat_store.sql import MessageStatus

    return MessageStatus.ACTIVE


PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "token_limit", "default": 30000, "help": "token_limit (the default, 30000)",
     "minimum": 1, "maximum": 10_000_000, "in_label": True},
    {"name": "chat_history_token_ratio", "default": 0.7,
     "help": "chat_history_token_ratio: share of token_limit for the chat history (0.7)",
     "minimum": 0.05, "maximum": 1.0},
    {"name": "token_flush_size", "default": 3000,
     "help": "token_flush_size: tokens flushed to the memory blocks at a time (3000)",
     "minimum": 1, "maximum": 1_000_000},
)  # fmt: skip
