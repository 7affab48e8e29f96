"""LangSmith run export (a JSON list or JSON lines of runs): the conversation rebuilt from the
LLM runs' ``inputs`` messages and ``outputs``, in ``start_time`` order, one conversation per
thread (``extra.metadata`` ``thread_id``, ``session_id`` or ``conversation_id``) or else per
``trace_id``. Chain, tool and retriever runs are skipped and counted.

Inputs: ``inputs.messages`` (LangChain serialised messages, maybe one list per prompt, or
OpenAI dicts), ``inputs.prompts`` (text), ``inputs.input``. Outputs: ``generations`` (text or
message), OpenAI ``choices``, ``output`` or ``content``. Tokens from ``prompt_tokens`` /
``completion_tokens`` or the generation's ``usage_metadata`` are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from scenarios.transcripts.core import Item, Tally, Transcript, TranscriptError, TurnUsage, kind_of
from scenarios.transcripts.messages import any_item
from scenarios.transcripts.source import Record
from scenarios.transcripts.traces import Call, Thread, rebuild


def detect(first: Any) -> bool:
    return isinstance(first, dict) and "run_type" in first and "inputs" in first


def _when(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return float("inf")


def _thread_key(run: Mapping[str, Any]) -> str:
    extra = run.get("extra")
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    if isinstance(metadata, dict):
        for key in ("thread_id", "session_id", "conversation_id"):
            if isinstance(metadata.get(key), str | int):
                return str(metadata[key])
    trace = run.get("trace_id") or run.get("id")
    return str(trace)


def _inputs(inputs: Any, tally: Tally, place: str) -> list[Item]:
    if not isinstance(inputs, dict):
        raise TranscriptError(f"{place}: 'inputs' must be an object, not {kind_of(inputs)}")
    messages = inputs.get("messages")
    if isinstance(messages, list):
        if messages and isinstance(messages[0], list):
            messages = messages[0]
        return [
            any_item(m, tally, place=f"{place} inputs.messages[{i}]")
            for i, m in enumerate(messages)
        ]
    prompts = inputs.get("prompts")
    if isinstance(prompts, list) and prompts and isinstance(prompts[0], str):
        return [Item("user", prompts[0], place=f"{place} inputs.prompts[0]")]
    if isinstance(inputs.get("input"), str):
        return [Item("user", inputs["input"], place=f"{place} inputs.input")]
    raise TranscriptError(f"{place}: 'inputs' holds no messages, prompts or input")


def _outputs(outputs: Any, tally: Tally, place: str) -> list[Item]:
    if not isinstance(outputs, dict):
        raise TranscriptError(f"{place}: 'outputs' must be an object, not {kind_of(outputs)}")
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) else generations[0]
        if isinstance(first, dict):
            if isinstance(first.get("message"), dict):
                return [any_item(first["message"], tally, place=f"{place} outputs.generations")]
            if isinstance(first.get("text"), str):
                return [Item("assistant", first["text"], place=f"{place} outputs.generations")]
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return [any_item(message, tally, place=f"{place} outputs.choices[0]")]
    output = outputs.get("output", outputs.get("content"))
    if isinstance(output, str):
        return [Item("assistant", output, place=f"{place} outputs.output")]
    if isinstance(output, dict):
        return [any_item(output, tally, place=f"{place} outputs.output")]
    raise TranscriptError(f"{place}: 'outputs' holds no generation, choice or output")


def _usage(run: Mapping[str, Any]) -> TurnUsage | None:
    def whole(v: Any) -> int | None:
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    found = TurnUsage(whole(run.get("prompt_tokens")), whole(run.get("completion_tokens")))
    if found.input_tokens is None and found.output_tokens is None:
        outputs = run.get("outputs")
        llm = outputs.get("llm_output") if isinstance(outputs, dict) else None
        usage = llm.get("token_usage") if isinstance(llm, dict) else None
        if isinstance(usage, dict):
            found = TurnUsage(
                whole(usage.get("prompt_tokens")), whole(usage.get("completion_tokens"))
            )
    return None if found.input_tokens is None and found.output_tokens is None else found


def read(records: Iterator[Record]) -> Iterator[Transcript]:
    threads: dict[str, Thread] = {}
    for record in records:
        run = record.value
        if not isinstance(run, dict):
            raise TranscriptError(f"{record.where}: a run must be an object, not {kind_of(run)}")
        run_id = str(run.get("id", record.where))
        key = _thread_key(run)
        thread = threads.setdefault(key, Thread(key))
        if run.get("run_type") != "llm":
            thread.tally.skip(f"{run.get('run_type', 'other')} runs")
            continue
        if run.get("error") and not run.get("outputs"):
            thread.tally.skip("failed llm runs")
            continue
        place = f"run {run_id!r}"
        try:
            inputs = _inputs(run.get("inputs"), thread.tally, place)
            outputs = _outputs(run.get("outputs"), thread.tally, place)
        except TranscriptError as exc:
            raise exc.within(f"thread {key}") from None
        start = run.get("start_time")
        when = start if isinstance(start, str) else ""
        thread.calls.append(Call(_when(start), place, inputs, outputs, _usage(run), when))
    number = 0
    for key, thread in threads.items():
        if not thread.calls:
            continue  # a trace with no model call: nothing was said
        number += 1
        try:
            yield rebuild(thread, fmt="langsmith", number=number, title=f"thread {key}")
        except TranscriptError as exc:
            raise exc.within(f"conversation {number} (thread {key})") from None
    if number == 0:
        raise TranscriptError(
            "no LLM runs in the file: the conversation is in the runs of type 'llm'"
        )
