"""Parity: each framework lane sends exactly what the framework's own code returns.

For generated conversations, the test drives the framework itself — its own function or
memory object, with its own fake model written here — turn by turn beside the lane, and
requires the lane's recorded request to equal the framework's messages under the lab's one
mapping (leading system messages joined by a blank line into the system text; human = user,
AI = assistant), and the lane's token counts to equal the lab's counter on those messages.
The fake models answer with a function of the words they are shown, so both sides get the
same summary whatever order a framework lists its prompt in.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.maintenance import Upkeep
from memory.tokens import TokenCounter
from memory.types import Completion, Request

pytest.importorskip("langchain_core")  # the framework extra; scripts/setup.sh installs it

COUNTER = TokenCounter("o200k_base")
SYSTEM = "You are FinCoach, a careful personal finance assistant."
WORDS = ["salary", "rent", "Asha", "₹25,000", "fund", "plan", "ok", "my", "is", "goal", "🙂"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
conversations = st.lists(st.tuples(text, text), min_size=2, max_size=9)
PARITY = settings(
    max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def summary_of(pieces: list[str]) -> str:
    words = sum(len(p.split()) for p in pieces)
    return f"Summary: the conversation so far had {words} words about money."


def lab_model(request: Request) -> Completion:
    return Completion(summary_of([request.system, *(m.content for m in request.messages)]))


def lab_extractor(request: Request) -> Completion:
    words = sum(len(m.content.split()) for m in request.messages)
    return Completion(f"<fact>the user wrote {words} words</fact>")


def content(message: Any) -> str:
    value = message.content
    return value if isinstance(value, str) else "".join(p["text"] for p in value)


def mapped(messages: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    """The documented mapping, written independently of the lane code."""
    system: list[str] = []
    rest: list[tuple[str, str]] = []
    for role, body in messages:
        if role == "system" and not rest:
            system.append(body)
        else:
            rest.append((role, body))
    return "\n\n".join(system), rest


def lc_pairs(messages: list[Any]) -> list[tuple[str, str]]:
    names = {"human": "user", "ai": "assistant", "system": "system"}
    return [(names[m.type], content(m)) for m in messages]


def check_turn(request: Request, expected: list[tuple[str, str]]) -> None:
    system, rest = mapped(expected)
    assert request.system == system
    assert [(m.role, m.content) for m in request.messages] == rest
    assert request.tokens == COUNTER.request(request.system, request.messages)


def run_lane(name: str, params: dict[str, Any], conversation: list[tuple[str, str]],
             framework_turn: Callable[[int, str], list[tuple[str, str]]],
             framework_reply: Callable[[int, str, str], None]) -> None:  # fmt: skip
    from memory.registry import create
    from plugins.loading import load_frameworks

    load_frameworks()
    lane = create(name, SYSTEM, counter=COUNTER, upkeep=Upkeep(lab_model, lab_extractor),
                  params=params)  # fmt: skip
    for index, (user, reply) in enumerate(conversation, 1):
        request = lane.prepare(user)
        check_turn(request, framework_turn(index, user))
        lane.commit(user, reply)
        framework_reply(index, user, reply)


def lc_counter(messages: list[Any]) -> int:
    return sum(COUNTER.count(content(m)) for m in messages)


def lc_fake_model() -> Any:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class Fake(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "parity-fake"

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            text_ = summary_of([content(m) for m in messages])
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text_))])

        def get_num_tokens_from_messages(self, messages: Any, tools: Any = None) -> int:
            return lc_counter(messages)

    return Fake()


@given(conversation=conversations, max_tokens=st.integers(40, 400), partial=st.booleans())
@PARITY
def test_langgraph_trim(conversation, max_tokens, partial) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

    history: list[Any] = [SystemMessage(SYSTEM)]

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        out = trim_messages([*history, HumanMessage(user)], max_tokens=max_tokens, strategy="last",
                            token_counter=lc_counter, start_on="human", include_system=True,
                            allow_partial=partial)  # fmt: skip
        return lc_pairs(out)

    def after(index: int, user: str, reply: str) -> None:
        history.extend([HumanMessage(user), AIMessage(reply)])

    # a message that does not fit is a ContextOverflow, not a parity case
    fits = COUNTER.count(SYSTEM) + max(COUNTER.count(u) for u, _ in conversation) <= max_tokens
    if fits:
        run_lane("langgraph_trim", {"max_tokens": max_tokens, "allow_partial": partial},
                 conversation, turn, after)  # fmt: skip


def classic_memory(name: str, limit: int) -> Any:
    from langchain_classic import memory as classic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "langchain_window":
            return classic.ConversationBufferWindowMemory(k=limit, return_messages=True)
        if name == "langchain_token_buffer":
            return classic.ConversationTokenBufferMemory(
                llm=lc_fake_model(), max_token_limit=limit, return_messages=True
            )
        return classic.ConversationSummaryBufferMemory(
            llm=lc_fake_model(), max_token_limit=limit, return_messages=True
        )


@pytest.mark.parametrize(
    ("name", "param", "limits"),
    [
        ("langchain_window", "k", st.integers(0, 4)),
        ("langchain_token_buffer", "max_token_limit", st.integers(10, 300)),
        ("langchain_summary_buffer", "max_token_limit", st.integers(10, 300)),
    ],
)
@given(data=st.data())
@PARITY
def test_langchain_classic(name, param, limits, data) -> None:
    conversation = data.draw(conversations)
    limit = data.draw(limits)
    memory = classic_memory(name, limit)

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            history = memory.load_memory_variables({})["history"]
        return [("system", SYSTEM), *lc_pairs(history), ("user", user)]

    def after(index: int, user: str, reply: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory.save_context({"input": user}, {"output": reply})

    run_lane(name, {param: limit}, conversation, turn, after)


@given(conversation=conversations, trigger=st.integers(30, 300), keep=st.integers(1, 6))
@PARITY
def test_langchain_summarization(conversation, trigger, keep) -> None:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage, HumanMessage

    middleware = SummarizationMiddleware(
        model=lc_fake_model(), trigger=("tokens", trigger), keep=("messages", keep),
        token_counter=lc_counter,
    )  # fmt: skip
    state: list[Any] = []

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        nonlocal state
        messages = [*state, HumanMessage(user)]
        update = middleware.before_model({"messages": messages}, None)  # type: ignore[arg-type]
        if update is not None:
            messages = [m for m in update["messages"] if m.type != "remove"]
        state = messages
        return [("system", SYSTEM), *lc_pairs(messages)]

    def after(index: int, user: str, reply: str) -> None:
        state.append(AIMessage(reply))

    run_lane("langchain_summarization", {"trigger_tokens": trigger, "keep_messages": keep},
             conversation, turn, after)  # fmt: skip


def with_new_message(pairs: list[tuple[str, str]], user: str) -> list[tuple[str, str]]:
    """LangMem can fold the new message into its summary too; the lab then sends it last."""
    return pairs if pairs and pairs[-1] == ("user", user) else [*pairs, ("user", user)]


@given(conversation=conversations, max_tokens=st.integers(130, 300), summary=st.integers(16, 128))
@PARITY
def test_langmem_summarize(conversation, max_tokens, summary) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langmem.short_term import summarize_messages

    history: list[Any] = [SystemMessage(SYSTEM, id="s")]
    running: list[Any] = [None]

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        result = summarize_messages(
            [*history, HumanMessage(user, id=f"n{index}")], running_summary=running[0],
            model=lc_fake_model(), max_tokens=max_tokens, max_tokens_before_summary=max_tokens,
            max_summary_tokens=summary, token_counter=lc_counter,
        )  # fmt: skip
        running[0] = result.running_summary
        return with_new_message(lc_pairs(result.messages), user)

    def after(index: int, user: str, reply: str) -> None:
        history.extend([HumanMessage(user, id=f"n{index}"), AIMessage(reply, id=f"r{index}")])

    run_lane("langmem_summarize", {"max_tokens": max_tokens, "max_tokens_before_summary": max_tokens,
             "max_summary_tokens": summary}, conversation, turn, after)  # fmt: skip


def sk_fake_service() -> Any:
    from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase
    from semantic_kernel.contents import AuthorRole, ChatMessageContent

    class Fake(ChatCompletionClientBase):
        async def _inner_get_chat_message_contents(self, chat_history: Any, settings: Any) -> Any:
            text_ = summary_of([m.content or "" for m in chat_history.messages])
            return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=text_)]

    return Fake(ai_model_id="parity-fake")


@pytest.mark.parametrize("name", ["sk_truncation", "sk_summarization"])
@given(data=st.data())
@PARITY
def test_semantic_kernel(name, data) -> None:
    from semantic_kernel.contents import (
        AuthorRole,
        ChatHistorySummarizationReducer,
        ChatHistoryTruncationReducer,
        ChatMessageContent,
    )

    conversation = data.draw(conversations)
    target, threshold = data.draw(st.integers(2, 6)), data.draw(st.integers(0, 3))
    history = [ChatMessageContent(role=AuthorRole.SYSTEM, content=SYSTEM)]

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        nonlocal history
        history.append(ChatMessageContent(role=AuthorRole.USER, content=user))
        if name == "sk_truncation":
            reducer: Any = ChatHistoryTruncationReducer(
                messages=history, target_count=target, threshold_count=threshold
            )
        else:
            reducer = ChatHistorySummarizationReducer(
                messages=history, service=sk_fake_service(), target_count=target,
                threshold_count=threshold,
            )  # fmt: skip
        asyncio.run(reducer.reduce())
        history = list(reducer.messages)
        return [(m.role.value, m.content or "") for m in history]

    def after(index: int, user: str, reply: str) -> None:
        history.append(ChatMessageContent(role=AuthorRole.ASSISTANT, content=reply))

    run_lane(
        name, {"target_count": target, "threshold_count": threshold}, conversation, turn, after
    )


@given(conversation=st.lists(st.tuples(text, text), min_size=2, max_size=6),
       limit=st.integers(60, 400), flush=st.integers(10, 80))  # fmt: skip
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_llamaindex_memory(conversation, limit, flush) -> None:
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.memory import FactExtractionMemoryBlock, Memory

    class Fake(CustomLLM):
        @property
        def metadata(self) -> Any:
            return LLMMetadata(is_chat_model=True)

        def chat(self, messages: Any, **kw: Any) -> Any:
            words = sum(
                len((m.content or "").split()) for m in messages if m.role.value != "system"
            )
            return ChatResponse(
                message=ChatMessage(
                    role="assistant", content=f"<fact>the user wrote {words} words</fact>"
                )
            )

        async def achat(self, messages: Any, **kw: Any) -> Any:
            return self.chat(messages)

        def complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            raise AssertionError("not used")

        def stream_complete(self, prompt: str, formatted: bool = False, **kw: Any) -> Any:
            raise AssertionError("not used")

    memory = Memory.from_defaults(
        session_id="parity", token_limit=limit, chat_history_token_ratio=0.5, token_flush_size=flush,
        tokenizer_fn=lambda t: [0] * COUNTER.count(t),
        memory_blocks=[FactExtractionMemoryBlock(name="extracted_info", llm=Fake(), priority=1)],
    )  # fmt: skip

    def turn(index: int, user: str) -> list[tuple[str, str]]:
        memory.put(ChatMessage(role="user", content=user))
        return [("system", SYSTEM), *((m.role.value, m.content or "") for m in memory.get())]

    def after(index: int, user: str, reply: str) -> None:
        memory.put(ChatMessage(role="assistant", content=reply))

    run_lane("llamaindex_memory", {"token_limit": limit, "chat_history_token_ratio": 0.5,
             "token_flush_size": flush}, conversation, turn, after)  # fmt: skip


def test_langmem_folding_the_new_message_still_sends_it_last() -> None:
    """LangMem's cut-off can fall on the new message itself: its own result then holds only
    the summary. The lane sends that, then the new message, and says so in its notes."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langmem.short_term import summarize_messages

    from memory.registry import create
    from plugins.frameworks.langchain_summarization import FOLDED_NEW
    from plugins.loading import load_frameworks

    load_frameworks()
    params = {"max_tokens": 200, "max_tokens_before_summary": 60, "max_summary_tokens": 40}
    lane = create("langmem_summarize", SYSTEM, counter=COUNTER,
                  upkeep=Upkeep(lab_model, lab_extractor), params=params)  # fmt: skip
    history: list[Any] = [SystemMessage(SYSTEM, id="s")]
    running: Any = None
    turns = [
        ("my salary is ₹25,000", "ok " * 60),
        ("rent " * 30, "noted"),
        ("plan " * 120, "x"),
        ("and my goal?", "a fund"),  # the turns after a fold: the summary knows what it holds
        ("thanks", "ok"),
    ]
    folded = 0
    for index, (user, reply) in enumerate(turns, 1):
        result = summarize_messages(
            [*history, HumanMessage(user, id=f"n{index}")], running_summary=running,
            model=lc_fake_model(), max_tokens=params["max_tokens"],
            max_tokens_before_summary=params["max_tokens_before_summary"],
            max_summary_tokens=params["max_summary_tokens"], token_counter=lc_counter,
        )  # fmt: skip
        running = result.running_summary
        own = lc_pairs(result.messages)
        request = lane.prepare(user)
        check_turn(request, with_new_message(own, user))
        if own[-1] != ("user", user):
            folded += 1
            assert request.account is not None and FOLDED_NEW in request.account.notes
        lane.commit(user, reply)
        history.extend([HumanMessage(user, id=f"n{index}"), AIMessage(reply, id=f"r{index}")])
    assert folded, "the conversation should make LangMem fold the new message at least once"
