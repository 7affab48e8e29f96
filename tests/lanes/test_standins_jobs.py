"""Model-free stand-ins, background jobs and the provider binding used by the lab's tools."""

from __future__ import annotations

import json
import threading
import time

import pytest

from engines.survival import DEFAULT_FACTS
from lanes import jobs
from lanes.binding import describe, preset_settings
from memory.maintenance import extraction_request, summary_request
from memory.numbers import Answer
from memory.standins import (
    FIXED_REPLIES,
    ExtractiveSummariser,
    RuleExtractor,
    SizedExtractor,
    SizedSummariser,
    fixed_reply,
    fixed_sender,
)
from memory.types import Turn


def test_fixed_replies_state_no_fact_and_cycle():
    for reply in FIXED_REPLIES:
        for fact in DEFAULT_FACTS:
            assert not any(Answer(a).found_in(reply) for a in fact.answers)
    assert fixed_reply(1) == fixed_reply(1 + len(FIXED_REPLIES))
    seen = []
    reply = fixed_sender("ok")(None, seen.append)
    assert reply.text == "ok" and reply.complete and seen == ["ok"]


def test_extractive_summariser_keeps_names_and_amounts_first_come(counter):
    turns = [
        Turn(1, "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000.", "Noted."),
        Turn(2, "What spices should a beginner keep in the kitchen?", "Cumin."),
        Turn(3, "My credit card bill came to ₹18,400 this month.", "Okay."),
    ]
    summary = ExtractiveSummariser()(summary_request(counter, None, turns, words=120)).text
    assert "I'm Chiru." in summary and "₹1,20,000" in summary and "₹18,400" in summary
    assert "spices" not in summary
    # a tight word limit keeps the earliest facts
    short = ExtractiveSummariser()(summary_request(counter, None, turns, words=12)).text
    assert "Chiru" in short and "18,400" not in short
    # the previous summary is carried forward
    again = ExtractiveSummariser()(summary_request(counter, summary, turns[1:2], words=120)).text
    assert "Chiru" in again


def test_rule_extractor_reads_names_and_finance_amounts(counter):
    turn = Turn(
        1, "Hi! I'm Chiru. My monthly take-home salary is ₹1,20,000. I have an FD of 50k.", ""
    )
    reply = RuleExtractor()(extraction_request(counter, {}, turn)).text
    facts = json.loads(reply)["set"]
    assert facts == {"name": "Chiru", "monthly_salary": "₹1,20,000", "fd_amount": "₹50,000"}
    quiet = Turn(2, "I'm planning a trip to Goa. How many days?", "")
    assert json.loads(RuleExtractor()(extraction_request(counter, facts, quiet)).text)["set"] == {}


def test_sized_stand_ins(counter):
    assert counter.count(SizedSummariser(counter, 150)(None).text) == 150
    data = json.loads(SizedExtractor(counter, 20)(None).text)
    assert counter.count(data["set"]["notes"]) == 20
    assert json.loads(SizedExtractor(counter, 0)(None).text)["set"] == {}


def test_a_job_runs_in_the_background_reports_and_can_be_cancelled():
    started = threading.Event()

    def work(job):
        started.set()
        for i in range(200):
            if job.cancel_event.is_set():
                return "stopped"
            job.add(i)
            job.set_progress(i)
            time.sleep(0.01)
        return "finished"

    board = jobs.default_board()
    job = board.submit(work, name="t")
    assert board.get(job.id) is job and started.wait(5)
    assert job.status == jobs.RUNNING
    job.cancel()
    assert job.wait(5)
    assert job.status == jobs.CANCELLED and job.result == "stopped"
    assert 0 < len(job.items()) < 200
    assert board.get(None) is None and board.get("nope") is None


def test_a_failing_job_keeps_its_error():
    def work(job):
        raise RuntimeError("boom")

    job = jobs.default_board().submit(work)
    assert job.wait(5)
    assert job.status == jobs.FAILED and job.error == "RuntimeError: boom"


def test_settings_for_presets():
    settings = preset_settings("embedded", max_tokens=64)
    assert settings.kind == "embedded" and settings.max_tokens == 64 and settings.temperature == 0
    assert describe(settings).startswith("Embedded")
    with pytest.raises(ValueError, match="unknown provider 'nope'"):
        preset_settings("nope")
