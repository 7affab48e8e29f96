"""Framework lanes: each framework's memory run by its own code behind the lab's strategy
contract, one module per framework, listed once in `LANES` (what plugins/loading.py
registers). A framework package that is not installed leaves its lanes out of the registry
and in `plugins.loading.unavailable()`, which the pickers show with how to add it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plugins.frameworks import (
    langchain_classic,
    langchain_summarization,
    langgraph_trim,
    llamaindex,
)
from plugins.frameworks import semantic_kernel as sk
from plugins.frameworks.base import FrameworkStrategy


@dataclass(frozen=True)
class FrameworkLane:
    """One framework lane as the registry takes it: its class, its parameters (named as the
    framework names them) and the lab contracts its framework breaks by design."""

    cls: type[FrameworkStrategy]
    params: tuple[dict[str, Any], ...]
    color: str
    known_flaws: tuple[str, ...] = ()


LANES: tuple[FrameworkLane, ...] = (
    FrameworkLane(langgraph_trim.LangGraphTrim, langgraph_trim.PARAMS, "#1E88E5"),
    FrameworkLane(
        langchain_summarization.LangChainSummarization,
        langchain_summarization.MIDDLEWARE_PARAMS,
        "#43A047",
        ("roles alternate",),  # the summary is a human message before a human message
    ),
    FrameworkLane(
        langchain_summarization.LangMemSummarize,
        langchain_summarization.LANGMEM_PARAMS,
        "#8E24AA",
    ),
    FrameworkLane(llamaindex.LlamaIndexMemory, llamaindex.PARAMS, "#F4511E"),
    FrameworkLane(sk.SKTruncation, sk.PARAMS, "#FB8C00"),
    FrameworkLane(
        sk.SKSummarization,
        sk.PARAMS,
        "#6D4C41",
        ("roles alternate",),  # an assistant summary
    ),
    FrameworkLane(langchain_classic.LangChainWindow, langchain_classic.WINDOW_PARAMS, "#00ACC1"),
    FrameworkLane(
        langchain_classic.LangChainTokenBuffer,
        langchain_classic.TOKEN_PARAMS,
        "#C0CA33",
        ("roles alternate",),  # prunes one message at a time: can start on an assistant
    ),
    FrameworkLane(
        langchain_classic.LangChainSummaryBuffer,
        langchain_classic.SUMMARY_PARAMS,
        "#5E35B1",
        ("budget",),  # its summary is not counted against max_token_limit
    ),
)
