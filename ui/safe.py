"""Untrusted text (model replies, imported transcripts, user turns) shown as text.

Streamlit renders `st.markdown` (and captions, alerts) as Markdown: a reply holding
`![](https://x/?q=...)` would make the viewer's browser fetch that image — a beacon, and
traffic the offline mode does not promise — and `:material/...:` would fetch an icon font.
`plain` escapes every ASCII punctuation character (CommonMark's backslash escapes), so
nothing in the text is read as Markdown, HTML, LaTeX or a Streamlit directive; the text
reads exactly as written, line breaks kept.
"""

from __future__ import annotations

import string

_ESCAPES = str.maketrans({c: "\\" + c for c in string.punctuation})


def plain(text: str) -> str:
    """`text` as Markdown that renders to exactly `text` (no image, link, HTML or markup)."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "  \n".join(line.translate(_ESCAPES) for line in lines)
