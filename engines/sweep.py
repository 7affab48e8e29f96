"""Sweeps: a survival (recall) grid planned as provider batch requests, with its estimate.

How the grid becomes batches, and how upkeep is handled (the plan says it in words, too):

* The scripted conversation uses fixed replies, so every lane's conversation is known
  without a model. Upkeep calls a strategy needs before a probe (summaries, fact
  extraction) are sequential by nature: they run **interactively, in order, before the
  batch is submitted** ("interactive" upkeep, at list prices), or are done by the
  rule-based stand-ins ("stand-in", free). Every upkeep reply is recorded.
* Every probe of the grid then goes out in **one round of batches** at batch prices:
  the request the interactive run would send, built by the same `build_body`.
  Identical requests (two strategies sending the same payload) are sent once.
* Collecting replays the survival engine with the recorded upkeep and the collected
  replies, so rows, verdicts, heat maps and exports come from the same code as an
  interactive run.

Generated replies are not batchable (each depends on the one before): a sweep refuses them.
The recall sweeps (engines/sweep_recall.py) and multi-model sweeps build on the same helpers.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from engines.survival import (
    SurvivalConfig,
    SurvivalConfigError,
    SurvivalResult,
    estimate,
    run_survival,
)
from lanes.binding import bind_settings
from memory.maintenance import NO_UPKEEP, Upkeep
from memory.standins import StaticReply
from memory.types import Completion, ModelFn, Request, Usage
from providers import ProviderError, ProviderSettings, build_body, model_info
from providers.batch import BATCH_DISCOUNT, batch_body, max_lines
from providers.families import family
from storage.store import NewRequest

UPKEEP_MODES = ("stand-in", "interactive")
ASSUMED_REPLY_TOKENS = 60
ASSUMED_SUMMARY_TOKENS = 160


class SweepError(ValueError):
    """A sweep that cannot be planned or run as asked; the message says what to change."""


def body_json(body: Mapping[str, Any]) -> str:
    """A body as compact JSON, keys in the builder's order (what the store keeps, once)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def body_key(body: Mapping[str, Any], raw: str | None = None) -> str:
    """A hash of a request body's JSON (`raw` when already made): the body builder always
    orders keys the same way, so equal requests give equal keys."""
    return hashlib.sha256((raw if raw is not None else body_json(body)).encode()).hexdigest()


def custom_id_of(key: str) -> str:
    """The batch custom_id of a body hash (valid for both providers)."""
    return "r" + key[:40]


def _price(settings: ProviderSettings) -> tuple[float, float] | None:
    info = model_info(settings)
    if info is None and family(settings.kind).hosted:
        info = model_info(settings.with_(base_url=None))  # a proxy of the provider's own API
    if info is None or info.input_per_m is None or info.output_per_m is None:
        return None
    return info.input_per_m, info.output_per_m


def _cost(tokens_in: int, tokens_out: int, price: tuple[float, float] | None, scale: float) -> float | None:  # fmt: skip
    if price is None:
        return None
    return (tokens_in * price[0] + tokens_out * price[1]) * scale / 1_000_000


@dataclass(frozen=True)
class SweepEstimate:
    """What a sweep will send and cost, shown before anything is submitted."""

    provider: str
    model: str
    cells: int  # probes of the grid (rows)
    requests: int  # batch requests (probes; identical ones are merged once planned)
    input_tokens: int  # probe prompts, counted locally
    output_tokens: int  # probes x the assumed reply length
    max_output_tokens: int  # probes x max_tokens: the ceiling
    upkeep: str  # "stand-in" or "interactive"
    upkeep_calls: int
    upkeep_input_tokens: int
    upkeep_output_tokens: int
    batches: int
    batch_cost: float | None  # probes at batch prices (half the list price)
    live_cost: float | None  # the same probes sent one by one, at list prices
    upkeep_cost: float | None  # interactive upkeep at list prices
    exact_requests: bool = False  # True once planned: identical requests merged
    count_source: str = "counted locally"  # or "exact: <the provider's counting endpoint>"

    @property
    def total_cost(self) -> float | None:
        if self.batch_cost is None:
            return None
        return self.batch_cost + (self.upkeep_cost or 0.0)

    @property
    def upkeep_sentence(self) -> str:
        probes = (
            f"then all {self.requests:,} requests go out in one round of {self.batches} batch(es)"
        )
        if self.upkeep == "interactive" and self.upkeep_calls:
            return (
                f"Upkeep: {self.upkeep_calls:,} summary/extraction calls run interactively, in "
                f"turn order, at list prices before submitting; {probes} at batch prices."
            )
        if self.upkeep == "interactive":
            return f"Upkeep: none of these strategies needs any; {probes} at batch prices."
        return (
            "Upkeep: done by rule-based stand-ins (no calls, optimistic); "
            f"{probes} at batch prices."
        )

    def lines(self) -> list[str]:
        """The estimate as short lines for the page and the CLI."""

        def money(value: float | None) -> str:
            return (
                "unknown (no catalog price for this model)" if value is None else f"${value:,.4f}"
            )

        out = [
            f"{self.provider} · {self.model}: {self.cells:,} probes → "
            f"{self.requests:,} batch requests" + ("" if self.exact_requests else " (at most)"),
            f"probe tokens: {self.input_tokens:,} in ({self.count_source}), "
            f"~{self.output_tokens:,} out "
            f"(assumed {ASSUMED_REPLY_TOKENS} per reply; at most {self.max_output_tokens:,})",
            f"cost at batch prices ({BATCH_DISCOUNT:.0%} of list): {money(self.batch_cost)}"
            + (f" (one by one: {money(self.live_cost)})" if self.live_cost is not None else ""),
        ]
        if self.upkeep == "interactive" and self.upkeep_calls:
            out.append(
                f"upkeep: {self.upkeep_calls:,} calls, {self.upkeep_input_tokens:,} tokens in, "
                f"~{self.upkeep_output_tokens:,} out, at list prices: {money(self.upkeep_cost)}"
            )
        out.append(self.upkeep_sentence)
        if self.total_cost is not None:
            out.append(f"estimated total: ${self.total_cost:,.4f}")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_cost": self.total_cost, "upkeep_sentence": self.upkeep_sentence}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepEstimate:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


def check_batchable(config: SurvivalConfig, settings: ProviderSettings, upkeep: str) -> None:
    """SweepError unless this grid can go through a batch API."""
    config.validate()
    check_settings(settings, upkeep)
    if config.replies != "fixed":
        raise SweepError(
            "generated replies depend on each other and cannot be batched: choose fixed replies "
            "(the probes are batched), or run the grid interactively"
        )


def check_settings(settings: ProviderSettings, upkeep: str) -> None:
    """SweepError unless `settings` has a batch API and `upkeep` is a known mode."""
    if upkeep not in UPKEEP_MODES:
        raise SweepError(f"upkeep is one of {', '.join(UPKEEP_MODES)}; got {upkeep!r}")
    if not family(settings.kind).has_batch:
        raise SweepError(
            f"{family(settings.kind).label} has no batch API: choose OpenAI or Anthropic, or "
            "run a local OpenAI-compatible server (vLLM) interactively"
        )


def check_models(arms: Sequence[ProviderSettings]) -> None:
    """SweepError unless the models of a sweep are named once each (rows are labelled by
    model name)."""
    if not arms:
        raise SweepError("name at least one model")
    names = [a.model for a in arms]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SweepError(f"each model once per sweep: {', '.join(twice)} is named twice")


def make_estimate(
    settings: ProviderSettings,
    *,
    cells: int,
    requests: int,
    input_tokens: int,
    upkeep: str,
    upkeep_calls: int,
    upkeep_input_tokens: int,
    exact_requests: bool = False,
) -> SweepEstimate:
    """An estimate from counts: output assumed, costs at the catalog's batch and list prices."""
    price = _price(settings)
    output = requests * min(ASSUMED_REPLY_TOKENS, settings.max_tokens)
    up_out = upkeep_calls * ASSUMED_SUMMARY_TOKENS
    return SweepEstimate(
        provider=settings.kind,
        model=settings.model,
        cells=cells,
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output,
        max_output_tokens=requests * settings.max_tokens,
        upkeep=upkeep,
        upkeep_calls=upkeep_calls,
        upkeep_input_tokens=upkeep_input_tokens,
        upkeep_output_tokens=up_out,
        batches=max(1, -(-requests // max_lines(settings))),
        batch_cost=_cost(input_tokens, output, price, BATCH_DISCOUNT),
        live_cost=_cost(input_tokens, output, price, 1.0),
        upkeep_cost=_cost(upkeep_input_tokens, up_out, price, 1.0)
        if upkeep == "interactive"
        else 0.0,
        exact_requests=exact_requests,
    )


def total_lines(estimates: Sequence[SweepEstimate]) -> list[str]:
    """Every model's estimate, then (with several) the sweep's totals."""
    out: list[str] = []
    for est in estimates:
        out += est.lines()
    if len(estimates) > 1:
        costs = [e.total_cost for e in estimates]
        money = "unknown" if None in costs else f"${sum(c or 0.0 for c in costs):,.4f}"
        out.append(
            f"all {len(estimates)} models: {sum(e.requests for e in estimates):,} requests, "
            f"{sum(e.input_tokens for e in estimates):,} tokens in, estimated total {money}"
        )
    return out


def estimate_sweep(
    config: SurvivalConfig, settings: ProviderSettings, *, upkeep: str = "stand-in"
) -> SweepEstimate:
    """Requests, tokens and cost of a sweep, from a model-free dry run (nothing is sent)."""
    check_batchable(config, settings, upkeep)
    est = estimate(
        config,
        with_model=True,
        model_maintenance=upkeep == "interactive",
        assumed_reply_tokens=ASSUMED_REPLY_TOKENS,
        assumed_summary_tokens=ASSUMED_SUMMARY_TOKENS,
    )
    return make_estimate(
        settings,
        cells=est.rows,
        requests=est.probe_calls,
        input_tokens=est.prompt_tokens,
        upkeep=upkeep,
        upkeep_calls=est.maintenance_calls,
        upkeep_input_tokens=est.maintenance_tokens,
    )


@dataclass(frozen=True)
class SweepPlan:
    """Everything a sweep sends (for one model), and what turns its replies into a result.

    `config` is a SurvivalConfig (kind "survival") or a recall grid (kind "recall",
    engines/sweep_recall.py); either has `as_dict()`."""

    config: Any
    settings: ProviderSettings
    upkeep: str
    requests: tuple[NewRequest, ...]
    upkeep_records: Mapping[str, Mapping[str, Any]]
    estimate: SweepEstimate
    notes: tuple[str, ...] = field(default=())
    kind: str = "survival"


def _usage_dict(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {"input": usage.input, "output": usage.output, "details": dict(usage.details)}


def _usage_of(data: Mapping[str, Any] | None) -> Usage | None:
    if not data:
        return None
    return Usage(data.get("input"), data.get("output"), dict(data.get("details") or {}))


def _recording(fn: ModelFn, settings: ProviderSettings, store: dict[str, dict[str, Any]], lock: threading.Lock) -> ModelFn:  # fmt: skip
    def call(request: Request) -> Completion:
        done = fn(request)
        with lock:
            store[body_key(build_body(request, settings))] = {
                "text": done.text,
                "usage": _usage_dict(done.usage),
                "model": done.model,
            }
        return done

    return call


def replaying(settings: ProviderSettings, records: Mapping[str, Mapping[str, Any]]) -> ModelFn:
    def call(request: Request) -> Completion:
        body = build_body(request, settings)
        found = records.get(body_key(body))
        if found is None:
            raise ProviderError(
                "this upkeep call was not recorded when the sweep was planned (the strategy "
                "code changed?): plan the sweep again",
                provider=settings.kind,
            )
        return Completion(
            text=str(found["text"]), usage=_usage_of(found.get("usage")), body=body,
            model=found.get("model"),
        )  # fmt: skip

    return call


def prepare_sweep(
    config: SurvivalConfig,
    settings: ProviderSettings,
    *,
    upkeep: str = "stand-in",
    upkeep_fn: ModelFn | None = None,
) -> SweepPlan:
    """Run the grid's conversation (and interactive upkeep, if chosen) and collect every probe
    request as a batch request. Interactive upkeep calls the model now (list prices)."""
    est = estimate_sweep(config, settings, upkeep=upkeep)
    found: dict[str, NewRequest] = {}
    lock = threading.Lock()
    records: Mapping[str, Mapping[str, Any]] = {}
    models = NO_UPKEEP
    if upkeep == "interactive":  # the upkeep an interactive run uses, recorded
        summarize, records = recording(settings, upkeep_fn)
        models = Upkeep.using(summarize)
    capture = capturing(settings, found, lock)
    dry = run_survival(config, send=capture, upkeep=models, workers=1)
    requests = tuple(found.values())
    notes = tuple(n for n in dry.notes if not n.startswith("payload only"))
    est = planned_estimate(est, requests, settings)
    return SweepPlan(config, settings, upkeep, requests, records, est, notes)


def capturing(
    settings: ProviderSettings, found: dict[str, NewRequest], lock: threading.Lock
) -> Callable[[Request, Callable[[str], None] | None], StaticReply]:
    """A sender that answers nothing and keeps each request's batch body in `found` (by its
    hash: identical requests once, counted in `probes`)."""

    def capture(request: Request, on_delta: Callable[[str], None] | None) -> StaticReply:
        body = batch_body(request, settings)
        raw = body_json(body)
        key = body_key(body, raw)
        with lock:
            old = found.get(key)
            probes = (old.probes if old else 0) + 1
            found[key] = NewRequest(custom_id_of(key), body, request.tokens.content, probes, raw)
        return StaticReply("", model=settings.model)

    return capture


def recording(settings: ProviderSettings, fn: ModelFn | None) -> tuple[ModelFn, dict[str, dict[str, Any]]]:  # fmt: skip
    """Interactive upkeep: `fn` (or the settings' own model function) with every completion
    recorded by its body's hash, and the records."""
    records: dict[str, dict[str, Any]] = {}
    return _recording(
        fn or bind_settings(settings)[1], settings, records, threading.Lock()
    ), records


def planned_estimate(
    est: SweepEstimate, requests: tuple[NewRequest, ...], settings: ProviderSettings
) -> SweepEstimate:
    """`est` with the planned requests' exact number and locally counted tokens."""
    tokens_in = sum(r.prompt_tokens for r in requests)
    tokens_out = len(requests) * min(ASSUMED_REPLY_TOKENS, settings.max_tokens)
    price = _price(settings)
    return replace(
        est,
        requests=len(requests),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        max_output_tokens=len(requests) * settings.max_tokens,
        batch_cost=_cost(tokens_in, tokens_out, price, BATCH_DISCOUNT),
        live_cost=_cost(tokens_in, tokens_out, price, 1.0),
        exact_requests=True,
    )


def with_exact_counts(plan: SweepPlan) -> SweepPlan:
    """The plan with each request's input counted by the provider's own counting endpoint
    (free; one call per request), and its estimate labelled exact. Unchanged when the
    endpoint cannot count or no key is set."""
    from providers.counting import count_body

    counted: list[NewRequest] = []
    source = ""
    for r in plan.requests:
        found = count_body(r.body, plan.settings)
        if found is None:
            return plan
        source = found.source
        counted.append(replace(r, prompt_tokens=found.tokens))
    tokens = sum(r.prompt_tokens for r in counted)
    price = _price(plan.settings)
    est = replace(
        plan.estimate,
        input_tokens=tokens,
        count_source=f"exact: {source}",
        batch_cost=_cost(tokens, plan.estimate.output_tokens, price, BATCH_DISCOUNT),
        live_cost=_cost(tokens, plan.estimate.output_tokens, price, 1.0),
    )
    return replace(plan, requests=tuple(counted), estimate=est)


def replay(
    config: SurvivalConfig,
    settings: ProviderSettings,
    *,
    upkeep: str,
    upkeep_records: Mapping[str, Mapping[str, Any]],
    replies: Mapping[str, Any],
    note: str | None = None,
) -> SurvivalResult:
    """The survival result of a sweep: the engine run again, each probe answered by its
    collected reply (`replies`: custom_id -> Reply) and upkeep by its recorded completion.
    A probe with no reply yet gets an error row saying so."""

    def answer(request: Request, on_delta: Callable[[str], None] | None) -> Any:
        cid = custom_id_of(body_key(batch_body(request, settings)))
        reply = replies.get(cid)
        if reply is None:
            return StaticReply("", complete=False, model=settings.model,
                               error=ProviderError("no reply collected for this probe yet"))  # fmt: skip
        return reply

    models = NO_UPKEEP
    if upkeep == "interactive":
        models = Upkeep.using(replaying(settings, upkeep_records))
    result = run_survival(config, send=answer, upkeep=models, workers=1)
    if note:
        result.notes.append(note)
    result.model = settings.model
    return result


def config_from_dict(data: Mapping[str, Any]) -> SurvivalConfig:
    """A saved `SurvivalConfig.as_dict()` back as a config."""
    from_dict = getattr(SurvivalConfig, "from_dict", None)
    if callable(from_dict):  # the engine's own reader, when it has one
        return from_dict(data)
    from engines.survival import Fact
    from memory.lane_spec import LaneSpec
    from scenarios.filler import FillerTurn

    try:
        filler = data.get("filler")
        return SurvivalConfig(
            facts=tuple(Fact.from_dict(f) for f in data["facts"]),
            probe_turns=tuple(int(t) for t in data["probe_turns"]),
            strategies=tuple(
                LaneSpec(s["name"], dict(s.get("params") or {})) for s in data["strategies"]
            ),
            filler=None
            if filler in (None, "built-in")
            else tuple(FillerTurn(t["user"], t.get("reply")) for t in filler),
            filler_seed=int(data.get("filler_seed", 0)),
            replies=str(data.get("replies", "fixed")),
            system_prompt=str(data["system_prompt"]),
            encoding=str(data.get("encoding", "o200k_base")),
        ).validate()
    except (KeyError, TypeError) as exc:
        raise SurvivalConfigError(f"the saved sweep config is incomplete: {exc}") from None
