"""`langgraph_trim`: langchain-core's `trim_messages` as LangGraph documents it for chat
history — keep the last messages within `max_tokens`, starting on a human message, the system
message always kept. The token counter sums the lab's o200k_base tokens over each message's
content with no per-message overhead, the count the lab's own budgets use, so
`langgraph_trim` with max_tokens=B is comparable with `token_window` with budget=B.
"""

from __future__ import annotations

from typing import Any

from memory.errors import ContextOverflow
from plugins.frameworks.base import Framework, FrameworkStrategy, Sent
from plugins.frameworks.lc import content_counter, from_langchain, to_langchain

LANGGRAPH = Framework("LangGraph", "langchain-core", "langchain_core")


class LangGraphTrim(FrameworkStrategy):
    name = "langgraph_trim"
    title = "LangGraph trim_messages"
    description = (
        "langchain_core.messages.trim_messages(strategy='last', start_on='human', "
        "include_system=True): the newest messages within max_tokens"
    )
    framework = LANGGRAPH
    budget_param = "max_tokens"

    def _start(self) -> None:
        return None

    def _before_model(self, state: Any, user_text: str) -> tuple[list[Sent], Any]:
        from langchain_core.messages import trim_messages

        messages = to_langchain(self.system_prompt, self.history.turns, user_text)
        trimmed = trim_messages(
            messages,
            max_tokens=int(self.options["max_tokens"]),
            strategy="last",
            token_counter=content_counter(self.counter),
            start_on="human",
            include_system=True,
            allow_partial=bool(self.options["allow_partial"]),
        )
        sent = from_langchain(trimmed)
        if not sent or sent[-1].origin != "new":
            needed = self.counter.count(self.system_prompt) + self.counter.count(user_text)
            raise ContextOverflow(
                needed,
                int(self.options["max_tokens"]),
                what="trim_messages left out the new message: the system prompt and it",
            )
        return sent, None

    def _after_reply(self, state: Any, user_text: str, reply: str) -> None:
        return None


PARAMS: tuple[dict[str, Any], ...] = (
    {
        "name": "max_tokens",
        "default": 600,
        "help": "trim_messages max_tokens (o200k_base content tokens)",
        "minimum": 1,
        "maximum": 1_000_000,
        "in_label": True,
    },
    {
        "name": "allow_partial",
        "default": False,
        "help": "trim_messages allow_partial: cut the oldest kept message to fit",
        "choices": (False, True),
    },
)
