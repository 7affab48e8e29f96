"""LangChain's classic memory classes, as seed 002 teaches them, from `langchain-classic`:
`ConversationBufferWindowMemory`, `ConversationTokenBufferMemory` and
`ConversationSummaryBufferMemory`, each with `return_messages=True` in the chain a chat app
builds (system prompt, the memory's messages, the new message), flaws included: the token
buffer prunes one message at a time, so its window can start on an assistant message; the
summary buffer's summary is not counted against `max_token_limit`.

The lane's state is the memory's own data (its chat messages and, for the summary buffer,
`moving_summary_buffer`); the memory object is built on it for each step, with the lab's
upkeep model as its `llm` (its token counts: o200k_base content tokens).
"""

from __future__ import annotations

import warnings
from typing import Any

from plugins.frameworks.base import Framework, FrameworkStrategy, Sent
from plugins.frameworks.lc import from_langchain, upkeep_model

CLASSIC = Framework("LangChain (classic)", "langchain-classic", "langchain_classic")


class _Classic(FrameworkStrategy):
    framework = CLASSIC

    def _start(self) -> dict[str, Any]:
        return {"messages": [], "summary": ""}

    def _memory(self, state: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _quiet_memory(self, state: dict[str, Any]) -> Any:
        """The memory object on `state`, without the deprecation warnings these classes give."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self._memory(state)

    def _before_model(self, state: dict[str, Any], user_text: str) -> tuple[list[Sent], Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            history = self._quiet_memory(state).load_memory_variables({})["history"]
        sent = [
            SystemMessage(self.system_prompt, id="system"),
            *history,
            HumanMessage(user_text, id="new"),
        ]
        return from_langchain(sent), state

    def _after_reply(self, state: dict[str, Any], user_text: str, reply: str) -> Any:
        index = len(self.history)  # the turn just appended
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = self._quiet_memory(state)
            memory.save_context({"input": user_text}, {"output": reply})  # prunes, summarises
        messages = memory.chat_memory.messages
        for message in messages:  # the ones save_context just added have no id yet
            if message.id is None:
                message.id = f"{'u' if message.type == 'human' else 'a'}{index}"
        return {"messages": list(messages), "summary": getattr(memory, "moving_summary_buffer", "")}

    def _summarised(self, state: dict[str, Any]) -> set[int]:
        if not state.get("summary"):
            return set()
        kept = {
            int(m.id[1:]) for m in state["messages"] if isinstance(m.id, str) and m.id[1:].isdigit()
        }
        return {i for i in range(1, len(self.history) + 1) if i not in kept}

    def _dump(self, state: dict[str, Any]) -> Any:
        from langchain_core.messages import messages_to_dict

        return {"messages": messages_to_dict(state["messages"]), "summary": state["summary"]}

    def _load(self, data: Any) -> Any:
        if data is None:
            return super()._load(data)
        from langchain_core.messages import messages_from_dict

        return {"messages": messages_from_dict(data["messages"]), "summary": data["summary"]}


class LangChainWindow(_Classic):
    name = "langchain_window"
    title = "LangChain ConversationBufferWindowMemory"
    description = "langchain_classic ConversationBufferWindowMemory(k): the last k exchanges"

    def _memory(self, state: dict[str, Any]) -> Any:
        from langchain_classic.memory import ConversationBufferWindowMemory
        from langchain_core.chat_history import InMemoryChatMessageHistory

        return ConversationBufferWindowMemory(
            k=int(self.options["k"]),
            return_messages=True,
            chat_memory=InMemoryChatMessageHistory(messages=list(state["messages"])),
        )


class LangChainTokenBuffer(_Classic):
    name = "langchain_token_buffer"
    title = "LangChain ConversationTokenBufferMemory"
    description = (
        "langchain_classic ConversationTokenBufferMemory(max_token_limit): prunes the oldest "
        "message until the buffer fits (can start on an assistant message)"
    )
    budget_param = "max_token_limit"

    def _memory(self, state: dict[str, Any]) -> Any:
        from langchain_classic.memory import ConversationTokenBufferMemory
        from langchain_core.chat_history import InMemoryChatMessageHistory

        return ConversationTokenBufferMemory(
            llm=upkeep_model(self.bridge, self.counter),
            max_token_limit=int(self.options["max_token_limit"]),
            return_messages=True,
            chat_memory=InMemoryChatMessageHistory(messages=list(state["messages"])),
        )


class LangChainSummaryBuffer(_Classic):
    name = "langchain_summary_buffer"
    title = "LangChain ConversationSummaryBufferMemory"
    description = (
        "langchain_classic ConversationSummaryBufferMemory(max_token_limit): pruned messages "
        "folded into a summary the limit does not count"
    )
    uses_summary = True
    budget_param = "max_token_limit"

    def _memory(self, state: dict[str, Any]) -> Any:
        from langchain_classic.memory import ConversationSummaryBufferMemory
        from langchain_core.chat_history import InMemoryChatMessageHistory

        return ConversationSummaryBufferMemory(
            llm=upkeep_model(self.bridge, self.counter),
            max_token_limit=int(self.options["max_token_limit"]),
            return_messages=True,
            moving_summary_buffer=state["summary"],
            chat_memory=InMemoryChatMessageHistory(messages=list(state["messages"])),
        )


WINDOW_PARAMS: tuple[dict[str, Any], ...] = (
    {
        "name": "k",
        "default": 5,
        "help": "k: exchanges kept (the class default, 5)",
        "minimum": 0,
        "maximum": 100,
        "in_label": True,
    },
)
TOKEN_PARAMS: tuple[dict[str, Any], ...] = (
    {
        "name": "max_token_limit",
        "default": 2000,
        "help": "max_token_limit, o200k_base content tokens (the class default, 2000)",
        "minimum": 1,
        "maximum": 1_000_000,
        "in_label": True,
    },
)
SUMMARY_PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "max_token_limit", "default": 2000,
     "help": "max_token_limit of the buffer, not counting the summary (class default, 2000)",
     "minimum": 1, "maximum": 1_000_000, "in_label": True},
)  # fmt: skip
