"""The rendering policy's functions under the UI's name: present/safe.py is their one home
(the exports and figures below the UI use them too). Import from either."""

from __future__ import annotations

from present.safe import html_text, lines, md, md_cell, plain, plotly

__all__ = ["html_text", "lines", "md", "md_cell", "plain", "plotly"]
