"""Prompt-cache figures: a lane keeps the cached / uncached split of a turn's billed input, the
lane figures show it, and costs price cached tokens at the catalog's cache prices."""

from __future__ import annotations

from lanes.lane import Lane, LaneTurn
from memory.standins import StaticReply
from memory.tokens import TokenCounter
from memory.types import Usage
from providers import ProviderSettings, model_info
from providers.catalog import preset
from ui.lane_view import cache_rows


def run_turn(details: dict[str, int]) -> LaneTurn:
    lane = Lane("full", "You are FinCoach.", counter=TokenCounter("o200k_base"))

    def send(request, on_delta):
        return StaticReply("Hello.", usage=Usage(1_000, 10, details), model="claude-haiku-4-5")

    return lane.run(1, "Hi, I'm Chiru.", send)


def test_the_lane_record_keeps_the_cache_split_and_prices_it():
    record = run_turn({"uncached_input_tokens": 200, "cached_tokens": 700, "cache_write_tokens": 100})  # fmt: skip
    assert (record.billed_input, record.cached_input, record.cache_write_input) == (1_000, 700, 100)
    assert cache_rows(record) == [("cached", "700"), ("uncached", "200"), ("cache write", "100")]
    info = model_info(ProviderSettings("anthropic", "claude-haiku-4-5"))
    expected = (200 * 1.00 + 700 * 0.10 + 100 * 1.25 + 10 * 5.00) / 1e6
    assert abs(record.cost(info) - expected) < 1e-12
    price = preset("anthropic").model("claude-haiku-4-5").price  # what the main page uses
    assert abs(record.cost(price) - expected) < 1e-12
    plain = run_turn({})
    assert plain.cached_input is None and cache_rows(plain) == []
    assert abs(plain.cost(price) - (1_000 * 1.00 + 10 * 5.00) / 1e6) < 1e-12


def test_saved_records_round_trip_and_old_ones_still_load():
    record = run_turn({"cached_tokens": 300})
    assert LaneTurn.from_dict(record.as_dict()) == record
    old = record.as_dict()
    del old["cached_input"], old["cache_write_input"]
    assert LaneTurn.from_dict(old).cached_input is None
