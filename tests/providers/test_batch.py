"""Batch submit / poll / collect with the real openai and anthropic SDKs against a fake endpoint."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import BadRequest, ProviderSettings, build_body, stream
from providers.batch import (
    STREAM_ONLY_FIELDS,
    BatchExpired,
    BatchLine,
    BatchNotSupported,
    batch_body,
    batch_line,
    check_custom_id,
    collect,
    poll,
    reply_from_dict,
    submit,
)
from tests.providers.conftest import FAMILIES, REQUEST, TEST_KEY, make_request, settings_for
from tests.providers.fake_batch_server import FakeBatchServer, echo


def batch_settings(server: FakeBatchServer, family: str, model: str = "ok") -> ProviderSettings:
    if family == "anthropic":
        return ProviderSettings("anthropic", model, base_url=server.url, api_key=TEST_KEY)
    return ProviderSettings("openai_compatible", model, base_url=server.url + "/v1",
                            api_key=TEST_KEY)  # fmt: skip


def lines_for(settings: ProviderSettings, n: int) -> list[BatchLine]:
    out = []
    for i in range(n):
        req = make_request(("user", f"fact number {i}"), ("user", "What was it?"))
        out.append(batch_line(f"r{i:03d}", req, settings))
    return out


def wait_ended(batch_id: str, settings: ProviderSettings, limit: int = 10):
    states = []
    for _ in range(limit):
        status = poll(batch_id, settings)
        states.append(status.state)
        if status.ended:
            return status, states
    raise AssertionError(f"batch never ended: {states}")


@pytest.mark.parametrize("family", FAMILIES)
def test_batch_line_body_is_the_live_body_byte_for_byte(fake, fb, family):
    """The live call's recorded wire body, minus only the streaming fields, serialises to the
    very bytes of the body the batch endpoint received for the same request (canonical JSON:
    the SDK orders a live call's keys by its own signature, so keys are sorted on both sides)."""
    live_settings = settings_for(fake, family, "ok", max_tokens=91)
    reply = stream(REQUEST, live_settings)
    assert reply.ok
    live_wire = fake.requests[0].json
    assert live_wire == build_body(REQUEST, live_settings)

    settings = batch_settings(fb, family).with_(
        max_tokens=91, temperature=live_settings.temperature
    )
    # the same settings but the endpoint's URL: bodies never hold URLs, so they must match
    assert build_body(REQUEST, settings) == build_body(REQUEST, live_settings)
    submit([batch_line("only", REQUEST, settings)], settings)
    batch = next(iter(fb.batches.values()))
    received = batch.lines[0]["body"]
    expected = {k: v for k, v in live_wire.items() if k not in STREAM_ONLY_FIELDS}
    assert (
        json.dumps(received, sort_keys=True).encode()
        == json.dumps(expected, sort_keys=True).encode()
    )
    assert set(live_wire) - set(received) == {"stream", *(("stream_options",) if family == "openai" else ())}  # fmt: skip
    assert not any(TEST_KEY in r.raw.decode("utf-8", "replace") for r in fb.requests)


@pytest.mark.parametrize("family", FAMILIES)
def test_submit_poll_through_in_progress_then_collect(fb, family):
    settings = batch_settings(fb, family)
    fb.polls_before_done = 2
    lines = lines_for(settings, 3)
    status = submit(lines, settings, metadata={"sweep": "t1"})
    assert status.state == "running" and not status.ended
    ended, states = wait_ended(status.batch_id, settings)
    assert states == ["running", "running", "ended"]
    assert ended.succeeded == 3 and ended.failed == 0
    results = collect(ended, settings, {line.custom_id: line.body for line in lines})
    assert [r.custom_id for r in results] == ["r000", "r001", "r002"]  # request order kept
    for line, result in zip(lines, results, strict=True):
        assert result.ok and result.state == "succeeded"
        assert result.reply.text == echo(line.body)
        assert result.reply.body == line.body
        usage = result.reply.usage
        assert usage is not None and usage.input and usage.output == len(result.reply.text.split())
    if family == "anthropic":  # the prompt-cache split is kept, input counts the whole prompt
        assert results[0].reply.usage.details["cached_tokens"] == 4


@pytest.mark.parametrize("family", FAMILIES)
def test_partial_failure_lists_failed_lines_with_typed_errors(fb, family):
    settings = batch_settings(fb, family)
    lines = lines_for(settings, 4)
    fb.fail_next = {"r001"}
    fb.expire_next = {"r003"}
    status, _ = wait_ended(submit(lines, settings).batch_id, settings)
    if family == "openai":
        assert status.raw_status == "expired"
    results = {r.custom_id: r for r in collect(status, settings, {ln.custom_id: ln.body for ln in lines})}  # fmt: skip
    assert [c for c, r in results.items() if r.ok] == ["r000", "r002"]
    assert results["r001"].state == "errored"
    assert isinstance(results["r001"].reply.error, BadRequest)
    assert results["r003"].state == "expired"
    assert isinstance(results["r003"].reply.error, BatchExpired)
    assert "resubmit" in str(results["r003"].reply.error)

    # resubmitting only the failed lines: they succeed this time
    retry = [ln for ln in lines if not results[ln.custom_id].ok]
    again, _ = wait_ended(submit(retry, settings).batch_id, settings)
    second = collect(again, settings, {ln.custom_id: ln.body for ln in retry})
    assert [r.custom_id for r in second] == ["r001", "r003"] and all(r.ok for r in second)
    assert [ln["custom_id"] for ln in list(fb.batches.values())[-1].lines] == ["r001", "r003"]


@pytest.mark.parametrize("family", FAMILIES)
def test_whole_batch_expired(fb, family):
    settings = batch_settings(fb, family, model="batch-expire")
    lines = lines_for(settings, 2)
    status, _ = wait_ended(submit(lines, settings).batch_id, settings)
    results = collect(status, settings, {ln.custom_id: ln.body for ln in lines})
    assert all(r.state == "expired" and not r.ok for r in results)
    assert all(isinstance(r.reply.error, BatchExpired) for r in results)


def test_collect_refuses_a_running_batch_and_embedded_has_no_batch_api(fb):
    settings = batch_settings(fb, "openai")
    fb.polls_before_done = 5
    status = submit(lines_for(settings, 1), settings)
    with pytest.raises(ValueError, match="still"):
        collect(status, settings, {"r000": {}})
    with pytest.raises(BatchNotSupported):
        submit(lines_for(settings, 1), ProviderSettings("embedded", "smol"))


def test_bad_key_at_submit_is_a_clear_provider_error(fb, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings = ProviderSettings("openai", "gpt-4o-mini", base_url=None)
    from providers import AuthError

    with pytest.raises(AuthError, match="OPENAI_API_KEY"):
        submit(lines_for(settings.with_(api_key=None), 1), settings)


def test_reply_round_trips_through_public_dict(fb):
    settings = batch_settings(fb, "openai")
    lines = lines_for(settings, 1)
    fb.fail_next = {"r000"}
    status, _ = wait_ended(submit(lines, settings).batch_id, settings)
    failed = collect(status, settings, {"r000": lines[0].body})[0].reply
    back = reply_from_dict(json.loads(json.dumps(failed.public_dict())))
    assert type(back.error) is type(failed.error) and str(back.error) == str(failed.error)
    assert back.public_dict() == failed.public_dict()


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=70))
def test_custom_ids_either_accepted_by_both_providers_or_refused(text):
    pattern_ok = 0 < len(text) <= 64 and all(c in "-_" or (c.isascii() and c.isalnum()) for c in text)  # fmt: skip
    if pattern_ok:
        assert check_custom_id(text) == text
    else:
        with pytest.raises(ValueError):
            check_custom_id(text)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=30)), max_size=6),
    st.sampled_from(["openai", "anthropic"]),
    st.one_of(st.none(), st.floats(0, 2)),
)
def test_batch_body_is_build_body_minus_streaming_fields(messages, kind, temperature):
    settings = ProviderSettings(kind, "m", temperature=temperature)
    request = make_request(*messages)
    live = build_body(request, settings)
    batched = batch_body(request, settings)
    assert list(batched) == [k for k in live if k not in STREAM_ONLY_FIELDS]
    assert all(batched[k] == live[k] for k in batched)


@given(st.text(min_size=0, max_size=60), st.text(min_size=1, max_size=60))
@settings(max_examples=40, deadline=None)
def test_a_line_written_from_its_saved_json_is_the_line_written_from_its_dict(system, user):
    from providers.families.anthropic import anthropic_requests
    from providers.families.openai import openai_jsonl

    settings_ = ProviderSettings("openai", "gpt-4o-mini", api_key=TEST_KEY)
    body = batch_body(make_request(("user", user), system=system), settings_)
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    from_dict = openai_jsonl([BatchLine("r1", body)])
    from_raw = openai_jsonl([BatchLine("r1", {}, raw)])
    assert json.loads(from_raw) == json.loads(from_dict)
    assert json.loads(from_raw)["body"] == body
    assert anthropic_requests([BatchLine("r1", {}, raw)])[0]["params"] == body
