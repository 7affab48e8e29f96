"""The one strategy picker: pills of registered strategies, plus "extra variants" typed as
the CLI writes them (`window:k=10; summary_buffer:budget=1200`).

Used by the main page's sidebar, Fact survival, Token growth and the Sessions page's
replay form. Every option comes from the registry, so a newly registered strategy shows up
on every page without touching them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from memory.lane_spec import LaneSpec, parse_variants
from memory.registry import REGISTRY
from ui.safe import plain

VARIANTS_HELP = "More strategy settings, written name:key=value, separated by ';'."


def every_strategy(first: Sequence[LaneSpec] = ()) -> dict[str, LaneSpec]:
    """Options by label: `first` (e.g. the main page's lanes), then every other registered
    strategy at its defaults."""
    out = {c.label: c for c in first}
    have = {c.name for c in first}
    out.update({c.label: c for c in (LaneSpec(n) for n in REGISTRY if n not in have)})
    return out


def by_name() -> dict[str, LaneSpec]:
    """One option per registered strategy, keyed by name (for lanes, which are by name)."""
    return {name: LaneSpec(name) for name in REGISTRY}


@dataclass(frozen=True)
class Picked:
    """What the picker holds: the chosen options and the extra variants' text."""

    keys: tuple[str, ...]
    variants: str = ""

    def choices(self, options: Mapping[str, LaneSpec]) -> list[LaneSpec]:
        """The chosen options, then the variants (InvalidParameter names a bad variant)."""
        return [options[k] for k in self.keys if k in options] + parse_variants(self.variants)


def strategy_picker(
    options: Mapping[str, LaneSpec],
    default: Sequence[str],
    *,
    key: str,
    label: str = "Strategies",
    titles: bool = False,
    variants: str | None = None,
    placeholder: str = "window:k=10; summary_buffer:budget=1200",
) -> Picked:
    """Pills for `options` (shown by label, or by title with `titles`), and an "Extra
    variants" field when `variants` (its current text) is given."""
    picked = st.pills(
        label,
        list(options),
        selection_mode="multi",
        default=[k for k in default if k in options],
        format_func=(lambda k: plain(options[k].title)) if titles else plain,
        key=key,
        wrap=True,
    )
    extra = ""
    if variants is not None:
        extra = st.text_input(
            "Extra variants",
            variants,
            placeholder=placeholder,
            help=VARIANTS_HELP,
            key=f"{key}-variants",
        )
    return Picked(tuple(picked or ()), extra)
