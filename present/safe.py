"""The one rendering policy: untrusted text (replies, user turns, imported labels, names,
model names, error messages — anything a file, a colleague or a model wrote) is shown as
text, wherever it is drawn. Each surface has its escaping here and nowhere else:

- `plain` / `md`: Streamlit Markdown (st.markdown, captions, alerts, labels). Every ASCII
  punctuation character is backslash-escaped (CommonMark), so no image, link, HTML, LaTeX or
  `:material/...:` directive can start; `md(template, **values)` fills a trusted template
  with escaped values.
- `html_text`: inside HTML (presentation mode's blocks, the HTML report): `& < > " '` as
  entities and every line ending (`\\r\\n`, `\\r`, `\\n`) as `<br>`, so no blank line can end
  a Markdown HTML block and let the rest render as Markdown.
- `plotly`: Plotly's pseudo-HTML (trace names, tick labels, titles, hover text): `& < >`
  as entities, so `<a href>`, `<b>` or `<br>` in a label stay text.
- `md_cell`: a Markdown export's table cell or line: escaped, one line.

Pure functions over strings: no Streamlit, no Plotly (the UI re-exports them, ui/safe.py).
"""

from __future__ import annotations

import html
import re
import string
from typing import Any

_ESCAPES = str.maketrans({c: "\\" + c for c in string.punctuation})
_LINE_ENDS = re.compile(r"\r\n|\r|\n|\u2028|\u2029|\x85|\x0b|\x0c")
_LONE_SURROGATES = re.compile(r"[\ud800-\udfff]")


def lines(text: str) -> list[str]:
    """`text` split at every line ending Markdown or HTML may honour; a lone surrogate (kept
    byte for byte in the store, but no page, chart or file can encode it) drawn as U+FFFD."""
    return _LINE_ENDS.split(_LONE_SURROGATES.sub("\ufffd", text))


def plain(text: object) -> str:
    """`text` as Markdown that renders to exactly `text` (no image, link, HTML or markup)."""
    return "  \n".join(line.translate(_ESCAPES) for line in lines(str(text)))


class _Escaping(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        return plain(format(value, format_spec))


_FORMATTER = _Escaping()


def md(template: str, /, *args: Any, **values: Any) -> str:
    """A trusted Markdown `template` (code, never data) filled like `str.format`, each value
    escaped by `plain`: `md("**{title}** · {n:,} tokens", title=label, n=count)`."""
    return _FORMATTER.format(template, *args, **values)


_DIRECTIVES = str.maketrans({":": "&#58;", "$": "&#36;"})


def html_text(text: object) -> str:
    """`text` for inside HTML: entities for markup characters, `<br>` for each line end;
    `:` and `$` as entities too, so Streamlit's `:icon:` and LaTeX never read them when
    the HTML sits in st.markdown."""
    return "<br>".join(html.escape(line).translate(_DIRECTIVES) for line in lines(str(text)))


def plotly(text: object) -> str:
    """`text` for a Plotly label (trace name, tick, title, hover): its pseudo-HTML inert."""
    return html.escape(" ".join(lines(str(text))), quote=False)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|])")


def md_cell(text: object) -> str:
    """`text` for a Markdown export (a table cell, a list item), on one line, still readable
    as a plain file: markup characters as HTML entities, the Markdown ones that make links,
    images, emphasis or table cells backslash-escaped, `:` and `$` as entities (no Streamlit
    directive or LaTeX when the export is shown in the app)."""
    one = " ".join(lines(str(text)))
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one, quote=False)).translate(_DIRECTIVES)
