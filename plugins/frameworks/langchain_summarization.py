"""`langchain_summarization`: LangChain v1's `SummarizationMiddleware`, as `create_agent` runs
it before each model call: past its `trigger` it replaces the older messages with one human
message holding a summary written by its own prompt, keeping what `keep` says. The agent's
state (its message list, rewritten when a summary is made) is the lane's state; the system
prompt travels apart, as `create_agent(system_prompt=...)` sends it.

`langmem_summarize`: LangMem's `summarize_messages` with a `RunningSummary`, as its
`SummarizationNode` runs it: the full message list goes in each turn, the running summary
says which messages it already covers, and the model sees the system prompt, the summary as
a system message, then the messages since.

Both count with the lab's o200k_base content tokens (no per-message overhead) and send their
summary calls through the lab's upkeep model.
"""

from __future__ import annotations

import warnings
from typing import Any

from memory.errors import InvalidParameter
from plugins.frameworks.base import Framework, FrameworkStrategy, Sent
from plugins.frameworks.lc import content_counter, from_langchain, to_langchain, upkeep_model

LANGCHAIN = Framework("LangChain", "langchain", "langchain")
LANGMEM = Framework("LangMem", "langmem", "langmem")


class LangChainSummarization(FrameworkStrategy):
    name = "langchain_summarization"
    title = "LangChain SummarizationMiddleware"
    description = (
        "langchain.agents.middleware.SummarizationMiddleware(trigger=('tokens', N), "
        "keep=('messages', K)): older messages replaced by a summary message"
    )
    framework = LANGCHAIN
    uses_summary = True

    def _start(self) -> list[Any]:
        return []

    def _middleware(self) -> Any:
        from langchain.agents.middleware import SummarizationMiddleware

        return SummarizationMiddleware(
            model=upkeep_model(self.bridge, self.counter),
            trigger=("tokens", int(self.options["trigger_tokens"])),
            keep=("messages", int(self.options["keep_messages"])),
            token_counter=content_counter(self.counter),
        )

    def _before_model(self, state: list[Any], user_text: str) -> tuple[list[Sent], Any]:
        from langchain_core.messages import HumanMessage, SystemMessage

        messages = [*state, HumanMessage(user_text, id="new")]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            update = self._middleware().before_model({"messages": messages}, None)
        if update is not None:
            # the update starts with RemoveMessage(REMOVE_ALL_MESSAGES): the list is replaced
            messages = [m for m in update["messages"] if m.type != "remove"]
        sent = from_langchain([SystemMessage(self.system_prompt, id="system"), *messages])
        return sent, messages

    def _after_reply(self, state: list[Any], user_text: str, reply: str) -> list[Any]:
        from langchain_core.messages import AIMessage

        index = len(self.history)
        for message in state:
            if message.id == "new":
                message.id = f"u{index}"
        return [*state, AIMessage(reply, id=f"a{index}")]

    def _summarised(self, state: list[Any]) -> set[int]:
        if not any(m.additional_kwargs.get("lc_source") == "summarization" for m in state):
            return set()
        kept = {int(m.id[1:]) for m in state if isinstance(m.id, str) and m.id[1:].isdigit()}
        first = min(kept) if kept else len(self.history) + 1
        return set(range(1, first))

    def _dump(self, state: list[Any]) -> Any:
        from langchain_core.messages import messages_to_dict

        return messages_to_dict(state)

    def _load(self, data: Any) -> Any:
        if data is None:
            return super()._load(data)
        from langchain_core.messages import messages_from_dict

        return messages_from_dict(data)


FOLDED_NEW = (
    "LangMem folded the new message into its summary too; the lab sent the message after "
    "what LangMem returned, since a model call needs it"
)


class LangMemSummarize(FrameworkStrategy):
    name = "langmem_summarize"
    title = "LangMem summarize_messages"
    description = (
        "langmem.short_term.summarize_messages with a RunningSummary: messages past "
        "max_tokens_before_summary folded into a running summary"
    )
    framework = LANGMEM
    uses_summary = True
    budget_param = "max_tokens"

    def _start(self) -> Any:
        if int(self.options["max_summary_tokens"]) >= int(self.options["max_tokens"]):
            raise InvalidParameter(
                "langmem_summarize: max_summary_tokens must be less than max_tokens "
                f"(got {self.options['max_summary_tokens']} and {self.options['max_tokens']})"
            )
        return None  # the RunningSummary; None until the first summary

    def _before_model(self, state: Any, user_text: str) -> tuple[list[Sent], Any]:
        from langmem.short_term import summarize_messages

        messages = to_langchain(self.system_prompt, self.history.turns, user_text)
        # the running summary remembers ids across turns: the new message gets the id it
        # keeps once it is a turn (a shared "new" would match every later new message)
        new_id = messages[-1].id = f"u{len(self.history) + 1}"
        before = self.options.get("max_tokens_before_summary") or None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = summarize_messages(
                messages,
                running_summary=state,
                model=upkeep_model(self.bridge, self.counter),
                max_tokens=int(self.options["max_tokens"]),
                max_tokens_before_summary=int(before) if before else None,
                max_summary_tokens=int(self.options["max_summary_tokens"]),
                token_counter=content_counter(self.counter),
            )
        for message in result.messages:
            if message.type == "system" and message.id not in ("system", None):
                message.id = None
            elif message.id == new_id:
                message.id = "new"
        sent = from_langchain(result.messages)
        self._folded_new = not sent or sent[-1].origin != "new"
        if self._folded_new:
            # LangMem folded the new message into its summary as well (its cut-off is the
            # first message after which the rest fits, which can be the last one): a model
            # call needs the user's message, so the lab sends it after what LangMem returned
            sent.append(Sent("user", user_text, "new"))
        return sent, result.running_summary

    def _notes(self) -> tuple[str, ...]:
        notes = super()._notes()
        if getattr(self, "_folded_new", False):
            notes += (FOLDED_NEW,)
        return notes

    def _after_reply(self, state: Any, user_text: str, reply: str) -> Any:
        return state

    def _summarised(self, state: Any) -> set[int]:
        if state is None:
            return set()
        ids = state.summarized_message_ids
        return {int(m[1:]) for m in ids if isinstance(m, str) and m[:1] == "u" and m[1:].isdigit()}

    def _dump(self, state: Any) -> Any:
        if state is None:
            return {"summary": None}
        return {
            "summary": state.summary,
            "summarized_message_ids": sorted(state.summarized_message_ids),
            "last_summarized_message_id": state.last_summarized_message_id,
        }

    def _load(self, data: Any) -> Any:
        if data is None:
            return super()._load(data)
        if data.get("summary") is None:
            return None
        from langmem.short_term import RunningSummary

        return RunningSummary(
            summary=data["summary"],
            summarized_message_ids=set(data["summarized_message_ids"]),
            last_summarized_message_id=data["last_summarized_message_id"],
        )


MIDDLEWARE_PARAMS: tuple[dict[str, Any], ...] = (
    {
        "name": "trigger_tokens",
        "default": 4000,
        "help": "trigger=('tokens', N): summarise past N tokens (LangChain's docs example: 4000)",
        "minimum": 1,
        "maximum": 1_000_000,
        "in_label": True,
    },
    {
        "name": "keep_messages",
        "default": 20,
        "help": "keep=('messages', K): the newest K messages stay (the default, 20)",
        "minimum": 0,
        "maximum": 1000,
        "in_label": True,
    },
)
LANGMEM_PARAMS: tuple[dict[str, Any], ...] = (
    {"name": "max_tokens", "default": 256,
     "help": "max_tokens of the messages returned (LangMem's docs example: 256)",
     "minimum": 1, "maximum": 1_000_000, "in_label": True},
    {"name": "max_tokens_before_summary", "default": 256,
     "help": "max_tokens_before_summary (0: same as max_tokens; docs example: 256)",
     "minimum": 0, "maximum": 1_000_000},
    {"name": "max_summary_tokens", "default": 128, "help": "max_summary_tokens (docs example: 128)",
     "minimum": 1, "maximum": 100_000},
)  # fmt: skip
