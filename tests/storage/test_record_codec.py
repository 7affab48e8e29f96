"""Every field of a valid export, mutated one at a time (deleted, or swapped for a value of
another type or out of range): the import box answers with a SessionFormatError that names
the field, or the session loads faithfully and then opens, continues and exports like any
other. Never another exception, and never a session that imports but breaks later.

The export is built from a real run (three lanes, upkeep records, a survival result), and
the walk reaches every key of every object and the first item of every list, so a field
added to the records later is walked too. The walk over the request bodies is kept: a body
is shown and exported, so a broken one must not break those either.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.survival import SurvivalConfig, run_survival
from lanes import session as session_module
from lanes.session import Session
from present import export
from providers.fake import FakeTransport
from storage.store import SavedSession, SessionFormatError, Store, read_export
from tests.storage.store_support import make_session
from ui import persistence
from ui.app_state import AppConfig

DELETE = object()
MUTATIONS: tuple[Any, ...] = (
    DELETE,
    "x",
    -1,
    2**70,
    None,
    [],
    {},
    True,
    "\x00\ud800",
)


@pytest.fixture(scope="module")
def valid() -> dict[str, Any]:
    session = make_session(lanes=("summary_buffer", "hybrid"))  # upkeep, facts, retrieval
    for text in ("Hi, I'm Chiru.", "My salary is ₹1,20,000 a month."):
        session.run_turn(text)
    survival = run_survival(SurvivalConfig(probe_turns=(2, 4)).validate()).as_dict()
    data: dict[str, Any] = json.loads(
        export.to_json(SavedSession.from_session(session, survival=survival))
    )
    return data


@pytest.fixture
def fake_transport(monkeypatch) -> FakeTransport:
    """A continued session answers from the fake, not the embedded model; the HTML report's
    figures are serialised as JSON instead of Plotly's page script (the same figure data,
    a tenth of the time: the walk renders a few thousand reports)."""
    transport = FakeTransport()
    monkeypatch.setattr(session_module, "ProvidersTransport", lambda: transport)
    monkeypatch.setattr(export, "_fig_html", lambda fig, div_id: fig.to_json())
    return transport


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key of every object and the first item of every list, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list) and node:
        yield (*prefix, 0)
        yield from paths(node[0], (*prefix, 0))


def mutated(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parent: Any = out
    for step in path[:-1]:
        parent = parent[step]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return out


def survives(text: str, store: Store, *, report: bool = True) -> None:
    """What every later reader does with an imported session: the import box, Open (the
    Sessions page's config and the live session), and every export (`report`: the HTML
    report too, the one slow reader)."""
    try:
        read_export(text)
    except SessionFormatError:
        return
    saved = store.load(store.import_json(text))
    config = persistence.config_for(saved, AppConfig.default())
    live = persistence.restore(saved, config)
    assert isinstance(live, Session)
    for writer in (export.to_json, export.to_csv, export.to_markdown):
        writer(saved)
    if report:
        export.to_html(saved)
    for name in saved.strategies:
        saved.params(name), saved.strategy(name), saved.lane_provider(name)
    store.list()


# the fixtures only patch in a fake transport, the same for every example
MUTATED_EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_the_walk_reaches_records_bodies_and_settings(valid):
    found = {tuple(str(s) for s in p) for p in paths(valid)}
    assert ("settings", "provider", "max_tokens") in found
    assert any(p[-1] == "billed_input" for p in found)
    assert any("maintenance" in p and p[-1] == "counted" for p in found)
    assert any("body" in p and p[-1] == "messages" for p in found)
    assert len(found) > 100


def test_every_field_mutated_fails_clearly_or_loads_faithfully(valid, tmp_path, fake_transport):
    store = Store(f"sqlite:///{tmp_path / 'codec.sqlite3'}")
    failures: list[str] = []
    for path in paths(valid):
        for value in MUTATIONS:
            text = json.dumps(mutated(valid, path, value))
            try:
                survives(text, store, report=False)
            except Exception as exc:  # noqa: BLE001 (every other exception is the finding)
                where = ".".join(str(s) for s in path)
                shown = "deleted" if value is DELETE else repr(value)
                failures.append(f"{where} = {shown}: {type(exc).__name__}: {exc}"[:300])
    assert not failures, f"{len(failures)} mutations broke a reader:\n" + "\n".join(failures[:60])


def test_a_wrong_field_is_named_by_its_path(valid):
    bad = mutated(valid, ("settings", "provider", "max_tokens"), "lots")
    with pytest.raises(SessionFormatError, match=r"settings\.provider\.max_tokens"):
        read_export(json.dumps(bad))
    lane = next(iter(valid["lanes"]))
    bad = mutated(valid, ("lanes", lane, "turns", 0, "counted"), "many")
    with pytest.raises(SessionFormatError, match=rf"lanes\.{lane}\.turns\[0\]\.counted"):
        read_export(json.dumps(bad))


@MUTATED_EXAMPLES
@given(data=st.data())
def test_the_html_report_of_a_mutated_export_is_built_or_refused(
    valid, tmp_path_factory, fake_transport, data
):
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('report') / 'codec.sqlite3'}")
    path = data.draw(st.sampled_from(list(paths(valid))))
    survives(json.dumps(mutated(valid, path, data.draw(st.sampled_from(MUTATIONS)))), store)


@MUTATED_EXAMPLES
@given(data=st.data())
def test_several_fields_mutated_at_once_fail_clearly_or_load(
    valid, tmp_path_factory, fake_transport, data
):
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('many') / 'codec.sqlite3'}")
    every = list(paths(valid))
    chosen = data.draw(st.lists(st.sampled_from(every), min_size=2, max_size=5, unique=True))
    doc = valid
    for path in chosen:
        try:
            doc = mutated(doc, path, data.draw(st.sampled_from(MUTATIONS)))
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed this path
            continue
    survives(json.dumps(doc), store)


@pytest.mark.parametrize("odd", ["my pin is 12\x0034", "emoji \ud83d broken"])
@pytest.mark.parametrize(
    "where",
    [("user_turns", 0), ("lanes", "*", "turns", 0, "user"), ("name",), ("info", "name")],
)
def test_text_a_column_cannot_hold_is_refused_naming_the_field(valid, odd, where):
    data = copy.deepcopy(valid)
    data.setdefault("info", {}).setdefault("name", "x")
    targets = [data]
    for step in where[:-1]:
        targets = [v for t in targets for v in (t.values() if step == "*" else [t[step]])]
    for target in targets:
        target[where[-1]] = odd
    shown = ".".join(str(s) for s in where if s != "*").replace(".0", r"\[0\]")
    with pytest.raises(SessionFormatError, match=rf"{shown.split('.')[0]}.*position"):
        read_export(json.dumps(data))


MARKS = "\u200f\u05e9\u05dc\u05d5\u05dd\u200e 👩\u200d👩\u200d👧 line\r\nend \ufeffbom"


def test_rtl_zwj_cr_and_bom_round_trip_byte_for_byte_in_every_text_field(valid, tmp_path):
    """Every text of the export (but the id and labels, which name things) carries the marks;
    after import, load and export, every one comes back exactly."""
    data = copy.deepcopy(valid)

    def marked(node: Any, key: Any = None) -> Any:
        if isinstance(node, dict):
            return {k: marked(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [marked(v, key) for v in node]
        if isinstance(node, str) and key in {"user", "reply", "content", "summary", "name"}:
            return node + MARKS
        return node

    data["user_turns"] = [u + MARKS for u in data["user_turns"]]
    data["lanes"] = {n: marked(lane) for n, lane in data["lanes"].items()}
    for lane in data["lanes"].values():  # a lane's record says what its turn's user said
        for record in lane["turns"]:
            record["user"] = data["user_turns"][record["turn"] - 1]
    data["name"] = data["info"]["name"] = data["name"] + MARKS
    store = Store(f"sqlite:///{tmp_path / 'marks.sqlite3'}")
    saved = store.load(store.import_json(json.dumps(data)))
    again = json.loads(export.to_json(saved))
    assert again["user_turns"] == data["user_turns"]
    assert saved.info.name == data["name"]
    for name, lane in data["lanes"].items():
        assert again["lanes"][name]["turns"] == lane["turns"]
        assert again["lanes"][name]["memory"] == lane["memory"]
    for records in saved.records.values():
        assert all(r.user == saved.user_turns[r.turn - 1] for r in records)


def test_a_field_a_newer_app_added_anywhere_is_ignored(valid, tmp_path):
    failures = []
    for path in paths(valid):
        if isinstance(path[-1], int):
            continue
        doc = copy.deepcopy(valid)
        parent: Any = doc
        for step in path[:-1]:
            parent = parent[step]
        if not isinstance(parent, dict) or "body" in path or path[:-1] == ("lanes",):
            continue
        parent["added_by_a_newer_app"] = [1, "x"]
        try:
            read_export(json.dumps(doc))
        except SessionFormatError as exc:
            failures.append(f"{'.'.join(map(str, path[:-1]))}: {exc}")
    assert not failures, "\n".join(failures[:20])
