"""Sample compositions the generated-input contract suites run next to the built-ins.

Together they use every kind of block, every option that changes what is sent (pinned turns
by number and by count, per-block budgets, both summary policies and placements, retrieval by
share and by budget, recent turns by count and by tokens) and a give-way order that differs
from the default one. The suites register each one only while its own test runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memory.compose import Block, Composition
from memory.registry import REGISTRY, register_composition, unregister_composition

SAMPLES: tuple[Composition, ...] = (
    Composition(
        "sample_pinned_window",
        (Block("pinned", first=1), Block("recent", count=3)),
    ),
    Composition(
        "sample_pinned_buffer",
        (
            Block("pinned", turns=(1, 2), budget=300),
            Block("summary", policy="threshold", placement="message", note=True),
            Block("recent"),
        ),
        budget=900,
        give_way=("summary", "recent"),
    ),
    Composition(
        "sample_everything",
        (
            Block("pinned", first=1),
            Block("facts", budget=80),
            Block("summary", budget=60),
            Block("retrieved", top_k=3, budget=400),
            Block("recent", count=2),
        ),
        budget=1200,
        give_way=("retrieved", "facts", "summary", "recent"),
    ),
    Composition(
        "sample_recall_tokens",
        (Block("retrieved", share=0.3, neighbours=0.0), Block("recent", budget=300)),
        budget=700,
    ),
)
SAMPLE_NAMES: list[str] = [c.name for c in SAMPLES]

# A user's own composition, for the tests that register, save and carry one.
MINE = Composition(
    "my_memory",
    (Block("pinned", first=1), Block("summary", budget=80), Block("recent", count=3)),
    budget=900,
    title="My memory",
)


@contextmanager
def registered(name: str) -> Iterator[None]:
    """Registers the sample called `name` (if it is one) for the duration of the block."""
    sample = next((c for c in SAMPLES if c.name == name), None)
    if sample is None or name in REGISTRY:
        yield
        return
    register_composition(sample)
    try:
        yield
    finally:
        unregister_composition(name)
