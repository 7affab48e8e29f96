"""Issue 10 on a real PostgreSQL server (one server for the module): characters PostgreSQL
refuses (NUL, lone surrogates) in replies, an imported id over 64 characters, and SIGKILL at
random moments over 50 turns."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from present import export
from providers.fake import FakeTransport
from storage.store import Store
from tests.storage.kill_support import LANES, kill_run
from tests.storage.store_support import make_session
from tests.storage.test_store_postgres import postgres_server

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def test_a_reply_with_nul_and_a_lone_surrogate_is_saved_exactly(pg_url):
    transport = FakeTransport(reply_fn=lambda r: "odd \x00 reply \udc80 here")
    session = make_session(transport, lanes=("full", "window"))
    session.name = "name with \x00 inside"
    tracker = Store(pg_url).track(session)
    session.run_turn("hi")
    assert tracker.error is None
    saved = Store(pg_url).load(session.id)
    assert saved.records == session.records()
    assert saved.records["full"][0].reply == "odd \x00 reply \udc80 here"


def test_an_overlong_imported_id_gets_a_new_one(pg_url):
    session = make_session(lanes=("full",))
    store = Store(pg_url)
    store.track(session)
    session.run_turn("hello")
    data = json.loads(export.to_json(store.load(session.id)))
    data["id"] = data["info"]["id"] = "y" * 80
    new_id = store.import_json(json.dumps(data))
    assert len(new_id) <= 64 and store.load(new_id).user_turns == ("hello",)


def test_sigkill_at_random_points_over_50_turns_loses_nothing(pg_url):
    report = kill_run(pg_url, turns=50, seed=11)
    assert report.kills >= 1 and report.turns == 50
    # only the lanes of the turn in flight at each kill may be missing, never a saved one
    assert report.lost == 0
    assert report.completed >= report.attempted - report.kills * len(LANES)


def test_a_query_password_is_masked_in_the_caption_and_every_store_error(pg_url):
    """Issue 24, class 3: ``?password=`` in the database URL, on a real server."""
    from providers.redaction import forget_all
    from storage.errors import StoreError
    from storage.sweeps import SweepNotFound, SweepStore

    secret = "pgQuerySecret-5521x"
    forget_all()
    url = f"{pg_url}?password={secret}"
    store = Store(url)
    assert secret not in store.display_url and "127.0.0.1" in store.display_url  # the caption
    sweeps = SweepStore(url)
    assert secret not in sweeps.display_url
    with pytest.raises(SweepNotFound) as missing:
        sweeps.sweep("nosuchsweep")
    assert secret not in str(missing.value)
    with pytest.raises(StoreError) as failed:
        Store(url.replace("/postgres?", "/no_such_database?"))
    assert secret not in str(failed.value) and "no_such_database" in str(failed.value)
