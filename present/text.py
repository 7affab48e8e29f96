"""Plain-text tables for terminals and logs (no Plotly, no Streamlit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A grid: first column left-aligned, the others right-aligned, a rule under the header."""
    grid = [list(map(str, header)), *(list(map(str, r)) for r in rows)]
    widths = [max(len(line[col]) for line in grid) for col in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first, *rest = cells
        return "  ".join(
            [first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))]
        )

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(grid[0]), rule, *(line(r) for r in grid[1:])])
