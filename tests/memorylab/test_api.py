"""The library API: each call against the engine it wraps, frames with the documented columns,
and the contracts that hold for any input (hypothesis)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memorylab as ml
from engines.simulator import SimConfig, simulate
from memory.errors import InvalidParameter, UnknownStrategy
from memory.lane_spec import LaneSpec
from memory.registry import REGISTRY
from memory.tokens import TokenCounter, get_encoding
from present.export import to_json
from storage.store import SessionFormatError


def test_strategies_lists_the_registry_with_defaults():
    infos = ml.strategies()
    assert [i.name for i in infos] == list(REGISTRY)
    window = next(i for i in infos if i.name == "window")
    assert window.defaults == {"k": 3} and window.needs_model is False
    assert next(i for i in infos if i.name == "summary").needs_model is True


def test_create_reads_the_cli_form_and_refuses_bad_ones():
    s = ml.create("window:k=2", "Be brief.")
    assert s.name == "window" and s.k == 2
    assert ml.create("hybrid").upkeep.summarize is not None  # stand-ins when no model is given
    with pytest.raises(UnknownStrategy, match="windw"):
        ml.create("windw")
    with pytest.raises(InvalidParameter):
        ml.create("window:k=-1")


def test_count_tokens_of_text_and_messages_is_tiktoken_exact():
    counter = TokenCounter("o200k_base")
    text = "Hello, Chiru! ₹1,20,000"
    assert ml.count_tokens(text) == len(get_encoding("o200k_base").encode(text))
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    assert ml.count_tokens(messages) == counter.count("Hi") + counter.count("Hello")
    assert ml.count_tokens("Hello", encoding="cl100k_base") == 1


def test_replay_agrees_with_the_simulator_for_every_strategy():
    names = ["full", "window:k=2", "token_window:budget=400", "retrieval"]
    run = ml.replay(ml.FINCOACH_TURNS, names)
    sim = simulate(SimConfig(strategies=tuple(LaneSpec(n.split(":")[0]) for n in names[:1])))
    frame = run.to_frame()
    assert list(frame.columns) == [
        "strategy", "turn", "user_tokens", "prompt_tokens", "sent_so_far", "messages",
        "kept_turns", "dropped_turns", "summarised_turns", "retrieved_turns", "upkeep_calls",
        "upkeep_tokens",
    ]  # fmt: skip
    full = frame[frame.strategy == "full"]
    assert list(full.prompt_tokens) == [r.prompt_tokens for r in sim.rows["full"]]
    assert list(full.messages) == [2 * t for t in range(1, 11)]
    assert run.labels == (
        "full",
        "window (k=2)",
        "token_window (budget=400)",
        "retrieval (k=2, recall_budget=4000)",
    )


def test_replay_uses_recorded_replies_and_the_transcripts_system_prompt(tmp_path):
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "I'm Chiru."},
                {"role": "assistant", "content": "Hi Chiru."},
                {"role": "user", "content": "Name?"},
            ]
        ),
        encoding="utf-8",
    )
    run = ml.replay(ml.read_transcript(chat), ["full"], reply_tokens=5)
    assert run.payload("full", 2) == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "I'm Chiru."},
        {"role": "assistant", "content": "Hi Chiru."},
        {"role": "user", "content": "Name?"},
    ]
    assert run.system_tokens == ml.count_tokens("You are terse.")


def test_survival_grid_matches_the_engine_and_takes_custom_facts():
    grid = ml.survival(
        ["window:k=2"],
        probe_turns=(2, 3, 4),
        facts=[{"key": "city", "plant": "I live in Pune.", "probe": "Where?", "answers": ["Pune"]}],
    )
    assert grid.grid().loc["window (k=2)"].tolist() == [1.0, 1.0, 0.0]
    frame = grid.to_frame()
    assert len(frame) == 3 and set(frame.fact) == {"city"}
    assert grid.result.mode == "payload-only"


def test_load_session_reads_a_store_and_a_json_export_alike(tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("User: one\nAssistant: 1\nUser: two\nAssistant: 2\n", encoding="utf-8")
    db = f"sqlite:///{tmp_path / 's.db'}"
    sid = ml.import_transcript(chat, ["full", "window:k=1"], db_url=db, name="numbers")
    stored = ml.load_session(sid, db_url=db)
    assert stored.name == "numbers" and stored.user_turns == ("one", "two")
    assert len(stored.rows) == 4 and {r.status for r in stored.rows} == {"ok"}
    export = tmp_path / "export.json"
    export.write_text(to_json(stored.saved), encoding="utf-8")
    from_file = ml.load_session(export)
    assert from_file.rows == stored.rows
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{"lanes": [' + b"\xff")
    with pytest.raises(SessionFormatError, match="broken.json is not UTF-8 text"):
        ml.load_session(broken)
    listed = ml.list_sessions(db_url=db)
    assert listed.id.tolist() == [sid] and listed.turns.tolist() == [2]


def test_list_sessions_of_an_empty_store_is_an_empty_frame(tmp_path):
    frame = ml.list_sessions(db_url=f"sqlite:///{tmp_path / 'empty.db'}")
    assert frame.empty and "id" in frame.columns


texts = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=60,
).filter(lambda t: t.strip() != "")


@settings(max_examples=40, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), st.integers(0, 40))
def test_replay_totals_are_running_sums_for_any_conversation(turns, reply_tokens):
    run = ml.replay(turns, ["full", "window:k=1"], reply_tokens=reply_tokens)
    frame = run.to_frame()
    for label in run.labels:
        rows = frame[frame.strategy == label]
        assert list(rows.sent_so_far) == list(rows.prompt_tokens.cumsum())
        assert list(rows.user_tokens) == [ml.count_tokens(t) for t in turns]
        assert run.total(label) == rows.prompt_tokens.sum()
    # the full buffer never sends less than the window
    full = frame[frame.strategy == "full"].prompt_tokens.tolist()
    window = frame[frame.strategy == "window (k=1)"].prompt_tokens.tolist()
    assert all(f >= w for f, w in zip(full, window, strict=True))
