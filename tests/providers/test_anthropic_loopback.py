"""Whole turns through ``run_turn`` with ``model.provider = "anthropic"`` over real HTTP: the
loopback server on 127.0.0.1 streams recorded Messages API bodies in slow chunks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from inspector.core.events import Event
from inspector.core.loop import run_turn
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.providers.anthropic import AnthropicProvider
from tests.providers.anthropic_fixtures import TEST_KEY, response_file
from tests.providers.loopback import LoopbackServer, sse_reply

TOOLS_STREAM = "stream-parallel-tool-use-args-split-sonnet35"
HELLO_STREAM = "stream-text-haiku45"


def scenario(base_url: str) -> Scenario:
    data: dict[str, Any] = {
        "name": "anthropic-loopback",
        "model": {"provider": "anthropic", "name": "claude-3-5-sonnet-20240620",
                  "base_url": base_url},
        "prompt": {"system": "You are a concise assistant.",
                   "user": "What is the weather and current time in San Francisco?"},
        "tools": [
            {"name": "get_weather", "description": "Weather for a location", "result": "18C, fog",
             "parameters": {"type": "object", "properties": {"location": {"type": "string"},
                                                            "unit": {"type": "string"}}}},
            {"name": "get_time", "description": "Time in a time zone", "result": "09:41",
             "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}}},
        ],
    }  # fmt: skip
    return scenario_from_dict(data, source="loopback.toml", base_dir=Path("."))


def slow(name: str, **kwargs: Any) -> Any:
    return sse_reply(response_file(name).read_bytes(), chunk_size=97, **kwargs)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


async def turn(server: LoopbackServer, events: list[Event] | None = None) -> RunRecord:
    s = scenario(server.base_url)
    provider = AnthropicProvider(s.model)
    try:
        return await run_turn(s, provider, (events.append if events is not None else print))
    finally:
        await provider.aclose()


async def test_tool_round_trip(loopback: LoopbackServer) -> None:
    loopback.queue(slow(TOOLS_STREAM, chunk_delay_s=0.002), slow(HELLO_STREAM))
    events: list[Event] = []
    record = await turn(loopback, events)

    assert (record.status, record.termination, record.output) == ("succeeded", "stop", "Hello")
    assert record.provider == "anthropic"
    first, second = record.steps
    assert first.response is not None and second.response is not None
    assert [c.name for c in first.response.tool_calls] == ["get_weather", "get_time"]
    assert (second.status, second.response.text) == ("success", "Hello")
    assert [r.content for r in first.tool_results] == ["18C, fog", "09:41"]
    assert (record.usage.input_tokens, record.usage.output_tokens) == (506 + 10, 153 + 4)
    assert first.ttft_ms is not None and first.latency_ms is not None
    assert any(e.kind == "tool_call_delta" for e in events)

    sent = [r.json() for r in loopback.received]
    assert [r.path for r in loopback.received] == ["/v1/messages", "/v1/messages"]
    assert all(r.headers["x-api-key"] == TEST_KEY for r in loopback.received)
    assert sent[1]["system"] == "You are a concise assistant."
    assert sent[1]["tool_choice"] == {"type": "auto"}
    user_turn, assistant_turn, results_turn = sent[1]["messages"]
    assert user_turn["content"][0]["text"].startswith("What is the weather")
    assert assistant_turn["role"] == "assistant"
    assert [b["type"] for b in assistant_turn["content"]] == ["text", "tool_use", "tool_use"]
    assert assistant_turn["content"][1]["input"] == {
        "location": "San Francisco, CA",
        "unit": "celsius",
    }
    assert results_turn == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_014x5X91kx3fvdhpLvwXZWE2",
             "content": "18C, fog"},
            {"type": "tool_result", "tool_use_id": "toolu_0121kXsENLvoDZ72LCuAnCCz",
             "content": "09:41"},
        ],
    }  # fmt: skip
    # The record keeps the raw exchange, the key redacted.
    assert first.raw is not None
    assert first.raw.request["body"] == sent[0]
    assert TEST_KEY not in json.dumps(record.model_dump(mode="json"))


async def test_stream_cut_off_mid_way_is_a_step_error_keeping_the_text(
    loopback: LoopbackServer,
) -> None:
    body = response_file(TOOLS_STREAM).read_bytes()
    cut = body.index(b" Let me fetch that data")
    loopback.queue(slow(TOOLS_STREAM, cut_after=cut))
    record = await turn(loopback)

    assert (record.status, record.termination) == ("error", "provider_error")
    (step,) = record.steps
    assert step.status == "error"
    assert step.response is not None
    assert step.response.text == (
        "Certainly! I can help you with that information. To get the weather and current time in"
        " San Francisco, I'll need to use two separate functions."
    )
    assert step.error is not None and "anthropic:" in step.error
    assert record.error is not None and "\n" not in record.error.message


async def test_cancel_mid_stream_closes_the_connection(loopback: LoopbackServer) -> None:
    body = response_file(TOOLS_STREAM).read_bytes()
    loopback.queue(slow(TOOLS_STREAM, hold_after=body.index(b"information")))
    first_text = asyncio.Event()

    def sink(event: Event) -> None:
        if event.kind == "text_delta":
            first_text.set()

    s = scenario(loopback.base_url)
    provider = AnthropicProvider(s.model)
    task = asyncio.create_task(run_turn(s, provider, sink))
    await first_text.wait()
    task.cancel()
    record = await task
    await provider.aclose()

    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert record.steps[0].status == "cancelled"
    assert record.steps[0].response is not None
    assert record.steps[0].response.text.startswith("Certainly!")
    # The server saw the client hang up while it was still holding the stream open.
    assert await asyncio.to_thread(loopback.received[0].disconnected.wait, 10)


async def test_native_structured_output_uses_output_config(loopback: LoopbackServer) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                       "bio": {"type": "string"}},
        "required": ["name", "age", "bio"],
        "additionalProperties": False,
    }  # fmt: skip
    data: dict[str, Any] = {
        "name": "anthropic-native-output",
        "model": {
            "provider": "anthropic",
            "name": "claude-sonnet-4-5",
            "base_url": loopback.base_url,
        },
        "prompt": {"user": "Invent a good dog"},
        "output": {"schema": schema},
        "policy": {"output_mode": "native"},
    }
    s = scenario_from_dict(data, source="native.toml", base_dir=Path("."))
    loopback.queue(slow("stream-json-schema-output-config-sonnet45"))
    provider = AnthropicProvider(s.model)
    record = await run_turn(s, provider)
    await provider.aclose()

    assert record.status == "succeeded"
    assert record.output["name"] == "Biscuit" and record.output["age"] == 4
    sent = loopback.received[0].json()
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": schema}}
    assert "tools" not in sent and "tool_choice" not in sent
