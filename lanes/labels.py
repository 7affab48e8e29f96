"""A lane's label: what tells it apart from the session's other lanes, unique in the session.

Lanes are keyed by label, not by strategy name, so one strategy can run in several lanes
(other parameters, another model). A lane whose strategy runs nowhere else on the session's
provider is labelled with the bare strategy name, as before labels existed (so saved
sessions and exports of that time read the same). Otherwise the label adds what differs:
the parameters that differ between lanes of that strategy, and the lane's own model:
``summary_buffer (budget=370) · gpt-4o-mini``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from memory.registry import spec

if TYPE_CHECKING:
    from providers.settings import ProviderSettings

LABEL_LIMIT = 64  # the store's lane column holds this many characters


@dataclass(frozen=True)
class LaneIdentity:
    """What a label is made of: the strategy, its parameters, and the lane's own model and
    endpoint (None: the session's provider)."""

    strategy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    model: str | None = None
    endpoint: str | None = None  # a preset name or API kind: shown only when models tie


def _differing(group: Sequence[LaneIdentity]) -> list[str]:
    """The parameter names whose values (defaults filled in) are not the same in every lane."""
    strategy = spec(group[0].strategy)
    filled = [{**strategy.defaults(), **dict(g.params)} for g in group]
    names = [p.name for p in strategy.params]
    return [n for n in names if len({repr(f.get(n)) for f in filled}) > 1]


def _fit(label: str) -> str:
    return label if len(label) <= LABEL_LIMIT else label[: LABEL_LIMIT - 1].rstrip() + "…"


def lane_labels(lanes: Sequence[LaneIdentity]) -> list[str]:
    """One label per lane, in order; ValueError when two lanes would be identical."""
    groups: dict[str, list[LaneIdentity]] = {}
    for lane in lanes:
        groups.setdefault(lane.strategy, []).append(lane)
    labels = []
    for lane in lanes:
        group = groups[lane.strategy]
        label = lane.strategy
        differing = _differing(group) if len(group) > 1 else []
        if differing:
            values = {**spec(lane.strategy).defaults(), **dict(lane.params)}
            label += " (" + ", ".join(f"{n}={values[n]}" for n in differing) + ")"
        if lane.model:
            models = [g.model for g in group if _same_params(g, lane)]
            tie = lane.endpoint and models.count(lane.model) > 1
            label += f" · {lane.model}" + (f" ({lane.endpoint})" if tie else "")
        labels.append(_fit(label))
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ValueError(
                f"two lanes would be identical ({label}): give one other parameters or a model"
            )
        seen.add(label)
    return labels


def _same_params(a: LaneIdentity, b: LaneIdentity) -> bool:
    defaults = spec(a.strategy).defaults()
    return {**defaults, **dict(a.params)} == {**defaults, **dict(b.params)}


def strategy_of(label: str, known: Mapping[str, Any]) -> str:
    """The strategy a label starts with (the label itself when it names none in `known`)."""
    head = label.split(" ", 1)[0]
    return head if head in known else label


@dataclass(frozen=True)
class LaneSpec:
    """Which strategy a lane runs, with which parameters, and optionally its own provider
    settings (None: the session's) and label (None: made by `lanes.labels.lane_labels`)."""

    strategy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    provider: ProviderSettings | None = None
    label: str | None = None

    def identity(self) -> LaneIdentity:
        p = self.provider
        model = getattr(p, "model", None) if p is not None else None
        return LaneIdentity(self.strategy, self.params, model, getattr(p, "kind", None))


def labelled(specs: Sequence[LaneSpec]) -> list[LaneSpec]:
    """The specs with every label filled in (given labels kept); ValueError on a repeat."""
    made = lane_labels([s.identity() for s in specs])
    out = [replace(s, label=s.label or made[i]) for i, s in enumerate(specs)]
    labels = [s.label for s in out]
    wrong = [s.label for s in out if str(s.label).split(" ", 1)[0] != s.strategy]
    if wrong:
        raise ValueError(f"a lane's label starts with its strategy's name; got {wrong}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"each lane needs its own label; got {labels}")
    return out
