"""Seed 000's model-free growth table, reproduced to the token, and its live-demo message counts.

The figures are quoted, with their source, in docs/seed-figures.md.
"""

from memory.registry import create
from memory.replay import growth_factor, growth_table, replay
from scenarios import fincoach


def test_fincoach_system_prompt_is_132_tokens(counter):
    assert counter.count(fincoach.SYSTEM_PROMPT) == 132


def test_growth_table_matches_the_seed_exactly(counter):
    full = create("full", fincoach.SYSTEM_PROMPT, counter=counter)
    steps = replay(fincoach.SIMULATED_TURNS, {"full": full}, counter=counter, reply_tokens=80)
    rows = growth_table(steps, "full", counter)
    assert [r.prompt_tokens for r in rows] == [149, 238, 334, 423, 513, 605, 700, 791, 882, 976]
    assert [r.message_tokens for r in rows] == [17, 9, 16, 9, 10, 12, 15, 11, 11, 14]
    assert [r.history_tokens for r in rows] == [17, 106, 202, 291, 381, 473, 568, 659, 750, 844]
    assert rows[-1].sent_so_far == 5611
    assert f"{growth_factor(rows):.2f}" == "6.55"


def test_demo_requests_hold_2_4_6_8_10_messages(counter):
    full = create("full", fincoach.SYSTEM_PROMPT, counter=counter)
    steps = replay(fincoach.DEMO_TURNS, {"full": full}, counter=counter)
    # +1: the system message the provider body puts first
    assert [len(s.requests["full"].messages) + 1 for s in steps] == [2, 4, 6, 8, 10]
