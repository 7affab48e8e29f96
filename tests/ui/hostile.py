"""One hostile session for the rendering policy's tests (issue 24, class 2): every string a
file or a colleague controls carries markup that would fetch, link, script or format if it
were drawn raw — the session's name, user turns, replies, lane labels, model names, error
kinds and messages, a carried composition's title and description, a survival run's
strategy labels, a saved sweep's name. Remote addresses are TEST-NET (198.51.100.0/24): the
browser test aborts any request to them, and nothing here contacts one.

`plant(db_url)` writes it into the store the app reads; `hostile_texts()` lists what a page
must show as text."""

from __future__ import annotations

import json
import re
from typing import Any

BEACON = "198.51.100.1"

# each one would do something if it reached a renderer raw
MARKUP = (
    f"![md](http://{BEACON}/md.png)",
    f"<img src=http://{BEACON}/html.png>",
    f"<a href=http://{BEACON}/a>link</a>",
    f"[click](http://{BEACON}/link)",
    "$x^2$ :red[red] :material/home:",
    f"\r\r<script>window.__pwned=1</script>![cr](http://{BEACON}/cr.png)",
)
HOSTILE = " ".join(MARKUP)
# fields held to 64 characters (lane labels, names in lists): one short payload each
SHORT = f"<img src=//{BEACON}/s.png>![s](http://{BEACON}/s.png)"

# what would show that markup was rendered rather than shown
RAW = re.compile(
    r"(?<!\\)!(?<!\\)\[(?:md|s|cr)(?<!\\)\]|(?<!\\)<(?:img|a |script)|(?<!\\):red(?<!\\)\[red"
    r"|(?<!\\)\$x|(?<!\\)\[click"
)


def label(tag: str) -> str:
    """A hostile lane label (the store keeps 64 characters)."""
    return f"{tag} {SHORT}"[:64]


def composition() -> Any:
    from memory.compose import Block, Composition

    return Composition(
        "evil_comp",
        (Block("recent", count=3),),
        title=f"Comp {SHORT}",
        description=HOSTILE,
    )


def export_json(transport: Any) -> str:
    """A session export whose every string field is hostile."""
    from lanes.session import Session
    from memory.lane_spec import LaneSpec
    from memory.registry import REGISTRY, register_composition, unregister_composition
    from present.export import to_json
    from providers.fake import FakeProviderError, FakeReply
    from providers.settings import ProviderSettings
    from storage.store import SavedSession

    comp = composition()
    if comp.name not in REGISTRY:
        register_composition(comp)
    real = transport.stream

    def stream(request, settings, on_delta=None):
        last = request.messages[-1].content if request.messages else ""
        if "fail" in last:
            body = transport.body(request, settings)
            return FakeReply("", None, body, complete=False, error=FakeProviderError(HOSTILE))
        return real(request, settings, on_delta)

    transport.stream = stream
    transport.reply_fn = lambda request: HOSTILE
    try:
        session = Session(
            system_prompt=HOSTILE,
            lanes=[LaneSpec("full"), LaneSpec("window", {"k": 2}), LaneSpec(comp.name)],
            provider=ProviderSettings("openai", "gpt-4o-mini"),
            transport=transport,
            name=HOSTILE,
        )
        session.run_turn(HOSTILE)
        session.run_turn(f"{HOSTILE} fail")
        session.run_turn(HOSTILE)
        data = json.loads(to_json(SavedSession.from_session(session)))
    finally:
        transport.stream = real
        unregister_composition(comp.name)
    data["name"] = HOSTILE
    data["provider"]["model"] = SHORT
    renamed = {}
    for name, lane in data["lanes"].items():
        new = label(name)
        for turn in lane["turns"]:
            turn["lane"] = new
            turn["model"] = SHORT
            if turn["status"] != "ok":
                turn["error_kind"] = SHORT
        renamed[new] = lane
    data["lanes"] = renamed
    return json.dumps(data)


def survival_result() -> dict[str, Any]:
    """A payload-only survival run whose strategy labels are hostile (attached to the session)."""
    from engines.survival import SurvivalConfig, run_survival
    from memory.lane_spec import parse_spec

    config = SurvivalConfig(probe_turns=(2, 3), strategies=(parse_spec("window:k=1"),))
    data = run_survival(config.validate()).as_dict()
    text = json.dumps(data).replace('"window (k=1)"', json.dumps(label("window")))
    return json.loads(text.replace('"window:k=1"', json.dumps(label("window"))))


def plant(transport: Any) -> str:
    """Write the hostile session (with a survival run), composition and sweep into the store
    ($MEMORY_LAB_DB_URL); the session's id."""
    from providers.settings import ProviderSettings
    from storage.store import Store, SweepStore

    store = Store()
    try:
        session_id = store.import_json(export_json(transport))
        store.attach_survival(session_id, survival_result())
        store.compositions.save(composition())
    finally:
        store.close()
    sweeps = SweepStore()
    try:
        settings = ProviderSettings("openai", "gpt-4o-mini").public_dict()
        sweeps.create(name=HOSTILE, settings=settings, config={}, plan={}, upkeep={}, requests=[])
    finally:
        sweeps.close()
    return session_id


def shown(value: str) -> str:
    """Escaped Markdown back to the text it shows."""
    return re.sub(r"\\(.)", r"\1", value.replace("  \n", "\n"))
