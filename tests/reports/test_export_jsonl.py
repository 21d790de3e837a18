"""The JSONL export: a versioned header, then one versioned event per line that parses back to
the event; events rebuilt from a record when none were stored; no key survives."""

from __future__ import annotations

import json

from inspector.core.events import Event, RunFinished, StepFinished
from inspector.core.live import LiveRun
from inspector.core.loop import run_turn
from inspector.core.records import RawExchange, RunRecord
from inspector.providers.factory import build_provider
from inspector.reports.jsonl import JSONL_VERSION, jsonl_lines, read_jsonl
from inspector.reports.synthetic_events import TimedEvent, events_from_record
from inspector.resources import resolve_scenario
from tests.helpers.runs import demo_record, demo_run

OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 6
ANTHROPIC_KEY = "sk-ant-api03-" + "Zz9_yY8-" * 8


def _timed(events: list) -> list[TimedEvent]:  # type: ignore[type-arg]
    return [TimedEvent(float(i), e) for i, e in enumerate(events)]


async def test_header_then_one_versioned_event_per_line() -> None:
    record, events = await demo_run("retry-feedback")
    lines = list(jsonl_lines(record, _timed(events)))
    header = json.loads(lines[0])
    assert header == {
        "version": JSONL_VERSION,
        "kind": "header",
        "run_id": record.run_id,
        "record_version": record.version,
        "scenario": "retry-feedback",
        "status": "succeeded",
        "events": len(events),
        "synthesized": False,
        "exported_by": header["exported_by"],
    }
    assert header["exported_by"].startswith("agent-inspector ")
    assert len(lines) == len(events) + 1
    for line in lines[1:]:
        assert "\n" not in line
        assert json.loads(line)["version"] == JSONL_VERSION
    _, read = read_jsonl(lines)
    assert [r.event for r in read] == events
    assert [r.t_ms for r in read] == [float(i) for i in range(len(events))]
    kinds = [json.loads(line)["kind"] for line in lines[1:]]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert {"step_started", "text_delta", "verdicts", "attempt_cleared"} <= set(kinds)
    assert {"feedback_injected", "tool_executed", "step_finished"} <= set(kinds)


async def test_events_rebuilt_from_a_record_fold_back_into_it() -> None:
    for demo in ("retry-feedback", "invalid-output-fallback", "final-answer-tool", "step-cap"):
        record, streamed = await demo_run(demo)
        rebuilt = events_from_record(record)
        live = LiveRun()
        for timed in rebuilt[:-1]:
            live.apply(timed.event)
        assert [s.as_step() for s in live.steps] == record.steps, demo
        assert live.header is not None and live.header.policy == record.policy
        last = rebuilt[-1].event
        assert isinstance(last, RunFinished) and last.record == record
        # The same kinds of event as the engine published, but each text in one delta.
        kinds = {e.kind for e in streamed} - {"text_delta", "tool_call_delta"}
        assert kinds <= {t.event.kind for t in rebuilt}, demo
        times = [t.t_ms for t in rebuilt]
        assert times == sorted(times) and times[0] == 0.0


async def test_rebuilt_times_follow_the_step_latencies() -> None:
    record = await demo_record("retry-feedback")
    rebuilt = events_from_record(record)
    finished = [t for t in rebuilt if isinstance(t.event, StepFinished)]
    elapsed = 0.0
    for timed, step in zip(finished, record.steps, strict=True):
        elapsed += step.latency_ms or 0.0
        assert timed.t_ms == round(elapsed, 3)
    assert rebuilt[-1].t_ms == max(record.duration_ms, round(elapsed, 3))


async def test_a_fallback_run_rebuilds_its_fallback_event() -> None:
    record = await demo_record("invalid-output-fallback")
    kinds = [t.event.kind for t in events_from_record(record)]
    assert kinds[-2:] == ["fallback_used", "run_finished"]
    synthesized = list(jsonl_lines(record, events_from_record(record), synthesized=True))
    assert json.loads(synthesized[0])["synthesized"] is True


async def test_no_key_survives_in_raw_bodies_headers_or_prompts() -> None:
    record = await demo_record("retry-feedback")
    raw = RawExchange(
        request={
            "headers": {"Authorization": f"Bearer {OPENAI_KEY}", "X-Api-Key": ANTHROPIC_KEY},
            "body": {"model": "demo", "note": f"key={OPENAI_KEY}"},
        },
        response={"echo": f"Authorization: Bearer {OPENAI_KEY}", "other": ANTHROPIC_KEY},
    )
    steps = [record.steps[0].model_copy(update={"raw": raw}), *record.steps[1:]]
    source = dict(record.scenario_source)
    source["model"] = {**source["model"], "headers": {"authorization": "Bearer abcdefgh12345"}}
    leaky = record.model_copy(
        update={"steps": steps, "scenario_source": source, "output": f"my key is {OPENAI_KEY}"}
    )
    text = "\n".join(jsonl_lines(leaky, events_from_record(leaky)))
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "abcdefgh12345", "A1b2C3d4", "Zz9_yY8"):
        assert secret not in text
    assert "[redacted]" in text
    # Still valid JSON, and what is not a secret is kept.
    for line in text.splitlines():
        json.loads(line)
    assert "Sam Carter: +1 555 0100" in text
    assert '"api_key_env"' in text  # the name of an env var is not a key


def test_a_record_without_steps_exports_its_start_and_end() -> None:
    record = RunRecord.model_validate(
        {
            "run_id": "r0",
            "scenario": "s",
            "started_at": "2026-01-01T00:00:00+00:00",
            "policy": {},
            "status": "cancelled",
            "termination": "cancelled",
            "budgets": {"max_attempts": 3, "max_steps": 20},
        }
    )
    lines = [json.loads(line) for line in jsonl_lines(record, events_from_record(record))]
    assert [line["kind"] for line in lines] == ["header", "run_started", "run_finished"]


async def test_a_credential_named_argument_in_the_script_is_redacted() -> None:
    # The step's tool call loses its ``password`` argument; the scenario's script, which
    # restates it in run_started and the record, lost nothing: the secret was there twice.
    arguments = 'script.0.tool_calls.0.arguments={ name = "Sam", password = "tooltoolpw42" }'
    scenario = resolve_scenario("demo:retry-feedback", [arguments])  # as if written in the file
    script = [entry.model_copy(update={"delay_ms": 0.0}) for entry in scenario.script]
    scenario = scenario.model_copy(update={"script": script})
    events: list[Event] = []
    record = await run_turn(scenario, build_provider(scenario), events.append)
    text = "\n".join(jsonl_lines(record, _timed(events)))
    assert "tooltoolpw42" not in text
    source = json.loads(text.splitlines()[1])["scenario_source"]
    assert source["script"][0]["tool_calls"][0]["arguments"] == {
        "name": "Sam",
        "password": "[redacted]",
    }
    assert source["tools"] == record.scenario_source["tools"]  # the user's schemas stay
