"""Where a request goes is decided by the person at the keyboard, never by a file (issue 24,
class 1). One saved session names foreign endpoints for the session and for a lane; every
load path (LOAD_PATHS) must leave the calls on the provider typed here, carry a typed key only
to the URL it was typed for, and show what the file named — taken only by the main page's
button. A source guard lists every place a saved session becomes a live one, so a new load
path fails here until it is walked."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engines.sessions import RunOptions, continue_stored
from lanes import endpoint_policy
from lanes.session import Session
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from present.export import to_json
from providers.settings import ProviderChoice, ProviderSettings
from storage.store import SavedSession, Store
from tests.ui.conftest import APP, ROOT
from ui import navigation
from ui.app_state import AppConfig, keyed_settings
from ui.persistence import lane_specs

EVIL = "http://198.51.100.7:9/v1"  # TEST-NET-2: never contacted
EVIL_LANE = "http://198.51.100.8:9/v1"
TYPED_URL = "http://127.0.0.1:8080/v1"
KEY = "sk-typed-in-the-sidebar-0123456789"

TYPED = {
    "offline": AppConfig.default(),
    "own-url-and-key": AppConfig.default().replace(
        provider=ProviderChoice("custom", "my-model", base_url=TYPED_URL, api_key=KEY)
    ),
}


def hostile_saved(transport) -> SavedSession:
    """A session saved on foreign endpoints (the session's, and one lane's own)."""
    config = AppConfig(
        provider=ProviderChoice("custom", "their-model", base_url=EVIL),
        lanes=(
            LaneSpec("full", {}),
            LaneSpec(
                "window",
                REGISTRY["window"].defaults(),
                provider=ProviderChoice("custom", "their-lane-model", base_url=EVIL_LANE),
            ),  # fmt: skip
        ),
    )
    session = Session(
        system_prompt="You are helpful.",
        lanes=lane_specs(config),
        provider=keyed_settings(config.provider),
        transport=transport,
    )
    Store().track(session, app=config.as_saved())
    session.run_turn("Hi, I'm Chiru.")
    session.run_turn("What is my name?")
    return Store().load(session.id)


def every_setting(session: Session) -> list[ProviderSettings]:
    return [
        session.provider,
        session.maintenance,
        *session.providers.values(),
        *session.upkeep_providers.values(),
    ]


def assert_the_user_decides(session: Session, typed: AppConfig) -> None:
    for settings in every_setting(session):
        assert settings.base_url not in (EVIL, EVIL_LANE), settings
        if settings.api_key:  # a typed key goes only where it was typed for
            assert settings.api_key == KEY and settings.base_url == TYPED_URL
    want = keyed_settings(typed.provider)
    assert (session.provider.kind, session.provider.base_url) == (want.kind, want.base_url)


def sessions_page(typed: AppConfig) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["config"] = typed
    at.switch_page("pages/3_Sessions.py").run()
    assert not at.exception, at.exception
    return at


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception
    return at


# ---- the load paths: each returns the live Session it made ---------------------------------
def sessions_continue(saved: SavedSession, typed: AppConfig, tmp: Path) -> Session:
    at = click(sessions_page(typed), "Continue on the main page")
    return at.session_state["session"]


def sessions_present(saved: SavedSession, typed: AppConfig, tmp: Path) -> Session:
    at = click(sessions_page(typed), "Present (presentation mode)")
    assert at.session_state["presentation"] is True
    return at.session_state["session"]


def import_then_continue(saved: SavedSession, typed: AppConfig, tmp: Path) -> Session:
    Store().delete(saved.id)  # only the imported copy remains
    at = sessions_page(typed)
    at.text_area(key="import_text").set_value(to_json(saved)).run()
    click(at, "Restore this export as a saved session")
    assert Store().list(), "the export was not restored"
    return click(at, "Continue on the main page").session_state["session"]


def recorded_demo_file(saved: SavedSession, typed: AppConfig, tmp: Path) -> Session:
    from ui.demo_controls import load_recorded

    path = tmp / "recorded.json"
    path.write_text(to_json(saved), encoding="utf-8")
    session, _ = load_recorded(typed, path)
    return session


def library_continue(saved: SavedSession, typed: AppConfig, tmp: Path) -> Session | None:
    try:
        return continue_stored(
            Store(), saved.id, RunOptions(provider=keyed_settings(typed.provider))
        )
    except ValueError as exc:  # a lane's own custom endpoint: refused, its provider asked for
        assert "never decides where a request goes" in str(exc)
        return None


LOAD_PATHS: dict[str, Callable[[SavedSession, AppConfig, Path], Session | None]] = {
    "Sessions page · Continue": sessions_continue,
    "Sessions page · Present": sessions_present,
    "Sessions page · import, restore, continue": import_then_continue,
    "main page · recorded demo file": recorded_demo_file,
    "library · engines.sessions.continue_stored": library_continue,
}
# every module that turns a saved session into a live one, and the path above that walks it
WALKED = {
    "ui/persistence.py": "Sessions page",
    "ui/demo_controls.py": "recorded demo",
    "engines/sessions.py": "library",
}


@pytest.mark.parametrize("typed", list(TYPED))
@pytest.mark.parametrize("path", list(LOAD_PATHS))
def test_every_load_path_runs_on_the_provider_typed_here(fake_transport, tmp_path, path, typed):
    saved = hostile_saved(fake_transport)
    session = LOAD_PATHS[path](saved, TYPED[typed], tmp_path)
    if session is None:  # refused with the policy's message
        return
    assert session.turn == 2 and len(session.lanes) == 2
    assert_the_user_decides(session, TYPED[typed])


def test_every_place_a_saved_session_comes_alive_is_walked():
    callers = set()
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".venv/", "tests/", "bench/", "lanes/session.py")):
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(
            r"(?<!def )\b(?:from_snapshot|sessions\.resume|continue_stored|config_for|saved_choice)\(",
            text,
        ):
            callers.add(rel)
    assert callers == set(WALKED), "a new load path: walk it in LOAD_PATHS, then list it"


def test_the_library_import_ignores_the_files_endpoint(fake_transport, tmp_path):
    import memorylab as ml

    saved = hostile_saved(fake_transport)
    path = tmp_path / "export.json"
    path.write_text(to_json(saved), encoding="utf-8")
    sid = ml.import_transcript(path, ["full"], db_url=f"sqlite:///{tmp_path / 'lib.db'}")
    loaded = ml.load_session(sid, db_url=f"sqlite:///{tmp_path / 'lib.db'}").saved
    assert EVIL not in to_json(loaded).replace(to_json(saved), "")
    assert loaded.settings["provider"]["base_url"] in (None, *endpoint_policy.fixed_urls())


def test_the_file_s_endpoint_is_shown_and_taken_only_by_the_button(fake_transport):
    saved = hostile_saved(fake_transport)
    typed = TYPED["own-url-and-key"]
    at = click(sessions_page(typed), "Continue on the main page")
    at.switch_page(navigation.MAIN_PAGE).run()
    assert not at.exception, at.exception
    shown = " ".join(re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)
    assert EVIL in shown and EVIL_LANE in shown and TYPED_URL in shown
    assert_the_user_decides(at.session_state["session"], typed)
    click(at, "Use the endpoints this session was saved with")
    adopted = at.session_state["session"]
    assert adopted.id == saved.id and adopted.turn == 2
    urls = {s.base_url for s in every_setting(adopted)}
    assert urls == {EVIL, EVIL_LANE}
    assert not any(s.api_key for s in every_setting(adopted))  # the key stays with its URL
    assert not any(EVIL in w.value for w in at.warning)  # taken: the notice is gone


def test_the_policy_keeps_a_typed_key_with_its_url():
    typed = ProviderChoice("custom", "m", base_url=TYPED_URL, api_key=KEY)
    same = ProviderChoice("custom", "their-model", base_url=TYPED_URL + "/", temperature=0.5)
    followed = endpoint_policy.follow(same, typed)
    assert followed.same and followed.runs.model == "their-model" and followed.runs.api_key == KEY
    other = endpoint_policy.follow(ProviderChoice("custom", "x", base_url=EVIL), typed)
    assert other.differs and other.runs == typed
    assert (
        endpoint_policy.adopt(ProviderChoice("custom", "x", base_url=EVIL), typed).api_key is None
    )
    # an official API is one endpoint whatever URL a file writes beside it
    openai = ProviderChoice("openai", "gpt-4o-mini", api_key=KEY)
    assert (
        endpoint_policy.follow(
            ProviderChoice("openai", "gpt-4.1", base_url=EVIL), openai
        ).runs.api_key
        == KEY
    )
    # a saved sweep's arm: its URL is refused unless typed now; its key variable is not read
    saved = {
        "kind": "openai_compatible",
        "model": "m",
        "base_url": EVIL,
        "key_env": "OPENAI_API_KEY",
    }
    with pytest.raises(endpoint_policy.EndpointNotTyped):
        endpoint_policy.sweep_settings(saved, api_key=KEY)
    assert endpoint_policy.sweep_settings(saved, api_key=KEY, typed_urls=[EVIL]).api_key == KEY
    official = {
        "kind": "openai",
        "model": "m",
        "base_url": None,
        "key_env": "AWS_SECRET_ACCESS_KEY",
    }
    called = endpoint_policy.sweep_settings(official)
    assert called.base_url is None and called.needed_key_env == "OPENAI_API_KEY"
