"""Whole turns through the engine and the ``openai`` adapter against the real local model.

The model is a tiny base model: its words mean nothing, so every check is about structure —
statuses, what was sent, what was recorded — never wording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.core.events import Event, StepStarted, TextDelta
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord, Step
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.providers.openai import OpenAIProvider
from inspector.resources import resolve_scenario

pytestmark = pytest.mark.local_model

SMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
}
LOOKUP: dict[str, Any] = {
    "name": "lookup_contact",
    "description": "Find a contact's phone number by name.",
    "parameters": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
    "result": "Sam Carter: +1 555 0100",
}
SYSTEM = "You write SMS messages. Look up the contact first."


def scenario_data(base_url: str, *, stream: bool = True, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "local",
        "model": {
            "provider": "openai",
            "name": "gemma-3-270m",
            "base_url": base_url,
            "stream": stream,
            "temperature": 0,  # greedy: the same request gives the same reply
            "max_tokens": 32,
            "timeout_s": 50,
        },
        "prompt": {"system": SYSTEM, "user": "Tell Sam the meeting moved to 3pm."},
        "policy": {"max_steps": 3, "max_attempts": 2},
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


async def run(data: dict[str, Any], tmp_path: Path) -> tuple[RunRecord, list[Event]]:
    scenario = scenario_from_dict(data, source="local.toml", base_dir=tmp_path)
    provider = build_provider(scenario)
    assert isinstance(provider, OpenAIProvider)
    events: list[Event] = []
    try:
        record = await run_turn(scenario, provider, events.append)
    finally:
        await provider.aclose()
    return record, events


def body(step: Step) -> dict[str, Any]:
    assert step.raw is not None
    sent: dict[str, Any] = step.raw.request["body"]
    return sent


def notes(step: Step) -> list[str]:
    assert step.raw is not None
    assert step.raw.request["server"] == "llama.cpp"
    found: list[str] = step.raw.request["notes"]
    return found


def assert_well_formed(record: RunRecord) -> None:
    """Whatever the model said: every step finished, none failed at the transport, each was
    timed and recorded raw, and the turn ended for a reason the policy knows."""
    assert record.steps
    for step in record.steps:
        assert step.status in ("success", "empty", "failed_validation"), step.error
        assert step.response is not None
        assert step.latency_ms is not None
        assert step.raw is not None and step.raw.response["status"] == 200
    assert record.status in ("succeeded", "failed")
    assert record.termination is not None
    assert record.budgets.transport_retries == 0


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_plain_text_turn(base_url: str, tmp_path: Path, stream: bool) -> None:
    record, events = await run(scenario_data(base_url, stream=stream), tmp_path)
    assert_well_formed(record)
    first = record.steps[0]
    assert body(first)["stream"] is stream
    assert "tools" not in body(first) and notes(first) == []
    assert body(first)["messages"][0] == {"role": "system", "content": SYSTEM}
    if stream:
        assert first.raw is not None and first.raw.response["events"][-1] == "[DONE]"
        assert first.ttft_ms is not None
        streamed = "".join(e.text for e in events if isinstance(e, TextDelta) and e.index == 1)
        assert first.response is not None and streamed == first.response.text
    else:
        assert first.raw is not None and "choices" in first.raw.response["body"]
        assert first.response is not None and first.response.usage.input_tokens > 0
    assert first.response is not None and first.response.finish_reason in ("stop", "length")
    assert sum(isinstance(e, StepStarted) for e in events) == len(record.steps)


async def test_tool_turn_runs_the_tool_and_sends_its_result_back(
    base_url: str, tmp_path: Path
) -> None:
    """Streaming is asked for, but llama.cpp sends an empty stream when the model picks a tool:
    the adapter asks without streaming (a recorded note), the call arrives, the tool runs, and
    the assistant message goes back with content "" (null would be a 500)."""
    data = scenario_data(
        base_url,
        tools=[LOOKUP],
        prompt={"system": SYSTEM, "user": "Look up Sam's number."},
        policy={"max_steps": 2, "on_step_cap": "raise"},
    )
    record, _ = await run(data, tmp_path)
    first = record.steps[0]
    assert body(first)["tool_choice"] == "auto"
    assert body(first)["stream"] is False
    assert any("not streamed" in n for n in notes(first))
    assert first.response is not None
    calls = first.response.tool_calls
    assert [c.name for c in calls] == ["lookup_contact"]
    assert calls[0].id and isinstance(calls[0].arguments, dict)
    assert [r.tool_call_id for r in first.tool_results] == [calls[0].id]
    assert first.tool_results[0].content == LOOKUP["result"]
    second = record.steps[1]
    assert second.status != "error", second.error
    sent = body(second)["messages"]
    echoed = [m for m in sent if m["role"] == "assistant" and m.get("tool_calls")]
    assert echoed and echoed[0]["content"] == ""
    assert echoed[0]["tool_calls"][0]["function"]["name"] == "lookup_contact"
    tool_message = {"role": "tool", "content": LOOKUP["result"], "tool_call_id": calls[0].id}
    assert tool_message in sent
    # The last allowed step disables tools (B2): tool_choice "none" may stream again.
    assert body(second)["tool_choice"] == "none"


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_native_output_mode_sends_json_object_with_the_schema(
    base_url: str, tmp_path: Path, stream: bool
) -> None:
    data = scenario_data(
        base_url, stream=stream, output={"schema": SMS_SCHEMA}, policy={"output_mode": "native"}
    )
    record, _ = await run(data, tmp_path)
    assert_well_formed(record)
    first = record.steps[0]
    assert body(first)["response_format"] == {"type": "json_object", "schema": SMS_SCHEMA}
    assert any("json_schema sent as json_object" in n for n in notes(first))
    assert body(first)["stream"] is stream
    # The server constrains the reply with the schema: the output check passes on step 1.
    output_verdicts = [v for v in first.verdicts if v.validator == "output"]
    assert all(v.ok for v in output_verdicts), output_verdicts
    assert record.status == "succeeded"
    assert isinstance(record.output, dict) and isinstance(record.output["body"], str)


async def test_tool_output_mode_forces_the_final_answer_tool(base_url: str, tmp_path: Path) -> None:
    data = scenario_data(base_url, output={"schema": SMS_SCHEMA}, policy={"output_mode": "tool"})
    record, _ = await run(data, tmp_path)
    assert_well_formed(record)
    first = record.steps[0]
    assert body(first)["tool_choice"] == {"type": "function", "function": {"name": "final_answer"}}
    assert body(first)["stream"] is False
    assert first.response is not None
    assert [c.name for c in first.response.tool_calls] == ["final_answer"]
    assert record.status == "succeeded"
    assert isinstance(record.output, dict) and isinstance(record.output["body"], str)


async def test_tool_output_mode_with_user_tools_sends_auto_not_required(
    base_url: str, tmp_path: Path
) -> None:
    """The engine asks for tool_choice "required" here (B3); llama.cpp answers that with a 500,
    so the adapter sends "auto" and says so; a plain-text reply is then judged by the loop."""
    data = scenario_data(
        base_url,
        tools=[LOOKUP],
        output={"schema": SMS_SCHEMA},
        policy={"output_mode": "tool", "max_steps": 3},
    )
    record, _ = await run(data, tmp_path)
    first = record.steps[0]
    assert first.request.tool_choice == "required"
    assert body(first)["tool_choice"] == "auto"
    assert any('"required" sent as "auto"' in n for n in notes(first))
    assert all(s.status != "error" for s in record.steps), [s.error for s in record.steps]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_prompted_output_mode(base_url: str, tmp_path: Path, stream: bool) -> None:
    data = scenario_data(
        base_url, stream=stream, output={"schema": SMS_SCHEMA}, policy={"output_mode": "prompted"}
    )
    record, _ = await run(data, tmp_path)
    assert_well_formed(record)
    first = record.steps[0]
    assert "response_format" not in body(first) and "tools" not in body(first)
    assert "JSON Schema" in body(first)["messages"][0]["content"]
    # Whatever the base model wrote, each final step was judged against the schema.
    for step in record.steps:
        if step.status != "empty":
            assert [v.validator for v in step.verdicts][:1] == ["output"]


async def test_demo_retries_on_real_validator_failures(base_url: str, tmp_path: Path) -> None:
    scenario = resolve_scenario("demo:local-model", [f"model.base_url={base_url}"])
    provider = build_provider(scenario)
    try:
        record = await run_turn(scenario, provider, lambda _e: None)
    finally:
        assert isinstance(provider, OpenAIProvider)
        await provider.aclose()
    assert_well_formed(record)
    assert record.scenario == "local-model"
    # A real retry: every attempt but the last was judged and got feedback.
    for step in record.steps[:-1]:
        assert step.feedback
    if record.status == "failed":
        assert record.termination in ("validator_exhausted", "step_cap")
        assert (
            any(not v.ok for v in record.steps[-1].verdicts) or record.steps[-1].status == "empty"
        )
