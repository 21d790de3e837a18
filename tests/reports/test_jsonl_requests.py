"""Issue 18 item 9: a JSONL export writes each request as its difference from one written
before it, stays one JSON object per line, and ``read_jsonl`` rebuilds every event exactly."""

from __future__ import annotations

import json

import pytest

from inspector.core.events import StepStarted
from inspector.core.records import RunRecord
from inspector.reports.jsonl import event_line, jsonl_lines, read_jsonl
from inspector.reports.jsonl_requests import RequestDeltas
from inspector.reports.synthetic_events import events_from_record
from tests.helpers.runs import demo_record
from tests.store.synthetic import every_shape, long_turn


def _round_trip(record: RunRecord) -> list[str]:
    events = events_from_record(record)
    lines = list(jsonl_lines(record, events))
    _, read = read_jsonl(lines)
    assert [(r.t_ms, r.event) for r in read] == [(t.t_ms, t.event) for t in events]
    return lines


def test_a_long_turn_with_raw_bodies_reads_back_exactly() -> None:
    lines = _round_trip(long_turn(30))
    started = [json.loads(x) for x in lines if '"kind":"step_started"' in x]
    assert "messages" in started[0]["request"]  # the first request is written whole
    for number, line in enumerate(started[1:], start=2):
        assert "messages" not in line["request"]
        delta = line["request"]["messages_from"]
        assert delta["step"] == number - 1 and delta["keep"] == 2 * number - 3
        assert len(delta["added"]) == 2


@pytest.mark.parametrize(
    "demo", ["retry-feedback", "step-cap", "final-answer-tool", "invalid-output-fallback"]
)
async def test_every_demo_reads_back_exactly(demo: str) -> None:
    _round_trip(await demo_record(demo))


async def test_histories_that_drop_messages_read_back_exactly() -> None:
    # feedback "latest" and dropped attempts: a request keeps less than its predecessor sent
    for overrides in (
        ["policy.feedback_history=latest"],
        ["policy.keep_failed_attempts=false"],
        ["policy.feedback_history=none", "policy.keep_failed_attempts=false"],
    ):
        _round_trip(await demo_record("retry-feedback", *overrides))


def test_every_record_shape_reads_back_exactly() -> None:
    _round_trip(every_shape())


def test_the_file_grows_with_the_distinct_content_not_its_square() -> None:
    short = sum(len(x) for x in jsonl_lines(long_turn(50), events_from_record(long_turn(50))))
    long = sum(len(x) for x in jsonl_lines(long_turn(400), events_from_record(long_turn(400))))
    assert long / 400 < 1.2 * short / 50


def test_a_repeated_request_points_at_its_own_step() -> None:
    record = long_turn(3)
    deltas = RequestDeltas()
    events = events_from_record(record)
    lines = [event_line(t, deltas) for t in events]
    finished = [x for x in lines if x["kind"] == "step_finished"]
    for line in finished:
        delta = line["step"]["request"]["messages_from"]
        index = line["step"]["index"]
        assert delta["step"] == index and delta["added"] == []
        raw = line["step"]["raw"]["request"]
        # The first raw body of the file is whole; later ones continue the one before.
        assert "messages" in raw if index == 1 else raw["messages_from"]["step"] == index - 1


def test_a_version_1_file_with_whole_requests_still_reads() -> None:
    record = long_turn(4)
    events = events_from_record(record)
    lines = [json.dumps({"version": 1, "kind": "header", "run_id": record.run_id})]
    lines += [
        json.dumps({"version": 1, "t_ms": t.t_ms, **t.event.model_dump(mode="json")})
        for t in events
    ]
    header, read = read_jsonl(lines)
    assert header["version"] == 1
    assert [r.event for r in read] == [t.event for t in events]


def test_a_line_that_is_not_an_export_is_named() -> None:
    record = long_turn(3)
    lines = list(jsonl_lines(record, events_from_record(record)))
    with pytest.raises(ValueError, match=r"^line 1: .*header"):
        read_jsonl(lines[1:])
    with pytest.raises(ValueError, match=r"^line 3: "):
        read_jsonl([*lines[:2], "{not json", *lines[2:]])
    # A delta whose base was never written (a line dropped): said, not a wrong request.
    without_first_step = [x for x in lines if '"index":1,' not in x]
    with pytest.raises(ValueError, match="not written before"):
        read_jsonl(without_first_step)


def test_step_started_requests_are_shared_views_after_reading() -> None:
    record = long_turn(20, raw=False)
    _, read = read_jsonl(jsonl_lines(record, events_from_record(record)))
    requests = [r.event.request.messages for r in read if isinstance(r.event, StepStarted)]
    assert len({id(m.items) for m in requests}) == 1  # type: ignore[attr-defined]
