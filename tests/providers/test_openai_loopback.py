"""Whole turns through a real HTTP server on 127.0.0.1 serving recorded SSE bodies in slow
chunks: tool round trip, retry after a validation failure, 429 then success, a stream cut off
mid-way, cancellation mid-stream, a read timeout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ProviderError
from inspector.core.events import Event, TextDelta
from inspector.core.loop import Turn, run_turn
from inspector.core.records import StepRequest
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.providers.openai import OpenAIProvider
from tests.providers.conftest import RecordingSleep
from tests.providers.loopback import LoopbackServer, json_reply, sse_reply
from tests.providers.wire import TEST_KEY, response_bytes

TEXT = "openai-chat/stream-text-usage-gpt4o"  # "The capital of Mexico is Mexico City."
TOOL = "openai-chat/stream-tool-call-usage-gpt4o-mini"  # multiply(a=1231, b=2331)
SLOW = {"chunk_size": 97, "chunk_delay_s": 0.002}


def scenario(base_url: str, **extra: Any) -> Scenario:
    data: dict[str, Any] = {
        "name": "loopback",
        "model": {
            "provider": "openai",
            "name": "gpt-4o",
            "base_url": base_url,
            "api_key_env": "LOOPBACK_TEST_KEY",
        },
        "prompt": {"system": "Be brief.", "user": "What is the capital of Mexico?"},
        **extra,
    }
    return scenario_from_dict(data, source="loopback.toml", base_dir=Path.cwd())


_OPEN: list[OpenAIProvider] = []


def provider(s: Scenario, sleep: RecordingSleep) -> OpenAIProvider:
    """A provider owning its client; closed after the test (a turn does not close it)."""
    built = OpenAIProvider(s.model, sleep=sleep)
    _OPEN.append(built)
    return built


@pytest.fixture(autouse=True)
async def close_providers() -> AsyncIterator[None]:
    yield
    while _OPEN:
        await _OPEN.pop().aclose()


def sse_text(text: str) -> bytes:
    """A minimal well-formed stream with ``text`` in two deltas."""
    half = len(text) // 2
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text[:half]}}]},
        {"choices": [{"index": 0, "delta": {"content": text[half:]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}},
    ]
    return b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks) + b"data: [DONE]\n\n"


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPBACK_TEST_KEY", TEST_KEY)


async def test_factory_builds_the_openai_provider(loopback: LoopbackServer) -> None:
    built = build_provider(scenario(loopback.base_url))
    assert isinstance(built, OpenAIProvider)
    assert built.name == "openai"


async def test_tool_round_trip(loopback: LoopbackServer, no_sleep: RecordingSleep) -> None:
    s = scenario(
        loopback.base_url,
        tools=[
            {
                "name": "multiply",
                "description": "Multiply two numbers.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                },
                "result": "2869461",
            }
        ],
    )
    loopback.queue(sse_reply(response_bytes(TOOL), **SLOW), sse_reply(response_bytes(TEXT), **SLOW))
    record = await run_turn(s, provider(s, no_sleep))
    assert record.status == "succeeded", record.error
    first, _ = record.steps
    assert first.response is not None
    assert [(c.name, c.arguments) for c in first.response.tool_calls] == [
        ("multiply", {"a": 1231, "b": 2331})
    ]
    assert first.tool_results[0].content == "2869461"
    assert record.output == "The capital of Mexico is Mexico City."
    assert record.usage.input_tokens == 54 + 14
    sent = loopback.received[1].json()["messages"]
    assert sent[0] == {"role": "system", "content": "Be brief."}
    call_id = "call_1EYWDzueHEp8OsB8jJSEp7WB"
    assert sent[2]["role"] == "assistant"
    assert sent[2]["tool_calls"][0]["id"] == call_id
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"a": 1231, "b": 2331}
    assert sent[3] == {"role": "tool", "tool_call_id": call_id, "content": "2869461"}
    assert all(step.ttft_ms is not None and step.latency_ms is not None for step in record.steps)
    for step in record.steps:
        assert step.raw is not None
        assert TEST_KEY not in json.dumps(step.raw.model_dump(mode="json"))


async def test_retry_after_validation_failure(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario(
        loopback.base_url,
        validators=[{"kind": "max_length", "max": 20, "feedback": "At most 20 characters."}],
    )
    loopback.queue(
        sse_reply(response_bytes(TEXT), **SLOW), sse_reply(sse_text("Mexico City."), **SLOW)
    )
    record = await run_turn(s, provider(s, no_sleep))
    assert record.status == "succeeded", record.error
    assert [step.status for step in record.steps] == ["failed_validation", "success"]
    assert record.output == "Mexico City."
    retry_messages = loopback.received[1].json()["messages"]
    assert any("At most 20 characters." in (m.get("content") or "") for m in retry_messages)


async def test_429_with_retry_after_then_success_is_counted(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario(loopback.base_url)
    loopback.queue(
        json_reply({"error": {"message": "Rate limit reached"}}, 429, headers={"retry-after": "1"}),
        sse_reply(response_bytes(TEXT), **SLOW),
    )
    record = await run_turn(s, provider(s, no_sleep))
    assert record.status == "succeeded", record.error
    assert record.budgets.transport_retries == 1
    assert no_sleep.delays == [1.0]
    assert len(loopback.received) == 2


async def test_cut_off_stream_is_a_step_error_with_partial_text(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario(loopback.base_url)
    body = response_bytes(TEXT)
    cut = body.index(b'"content":" is"')  # after "The capital of Mexico" arrived
    loopback.queue(sse_reply(body, chunk_size=200, cut_after=cut))
    record = await run_turn(s, provider(s, no_sleep))
    assert record.status == "error"
    assert record.termination == "provider_error"
    step = record.steps[-1]
    assert step.status == "error"
    assert step.response is not None
    assert step.response.text == "The capital of Mexico"
    assert step.error is not None and "closed by the server" in step.error
    assert len(loopback.received) == 1  # bytes had arrived: not retried


async def test_cancel_mid_stream_closes_the_connection(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario(loopback.base_url)
    body = response_bytes(TEXT)
    loopback.queue(sse_reply(body, chunk_size=64, hold_after=body.index(b'"content":" is"')))
    first_text = asyncio.Event()

    def sink(event: Event) -> None:
        if isinstance(event, TextDelta):
            first_text.set()

    task = asyncio.create_task(Turn(s, provider(s, no_sleep), sink).run())
    await asyncio.wait_for(first_text.wait(), timeout=10)
    task.cancel()
    record = await task
    assert record.status == "cancelled"
    assert record.steps[-1].status == "cancelled"
    seen = loopback.received[0].disconnected
    assert await asyncio.to_thread(seen.wait, 10), "the server never saw the connection close"


async def test_read_timeout_mid_stream_is_reported(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario_from_dict(
        {
            "name": "t",
            "model": {"provider": "openai", "name": "m", "base_url": loopback.base_url,
                      "timeout_s": 0.3},
            "prompt": {"user": "hi"},
        },
        source="t.toml",
        base_dir=Path.cwd(),
    )  # fmt: skip
    body = response_bytes(TEXT)
    loopback.queue(sse_reply(body, chunk_size=64, hold_after=body.index(b'"content":" of"')))
    with pytest.raises(ProviderError) as info:
        async for _ in provider(s, no_sleep).stream(StepRequest(system="", messages=[])):
            pass
    assert info.value.kind == "ReadTimeout"
    assert info.value.partial_text == "The capital"


def llama_scenario(base_url: str, **model: Any) -> Scenario:
    data = {
        "name": "llama",
        "model": {"provider": "openai", "name": "gemma", "base_url": base_url + "#server=llama.cpp",
                  **model},
        "prompt": {"user": "hi"},
    }  # fmt: skip
    return scenario_from_dict(data, source="llama.toml", base_dir=Path.cwd())


async def test_llama_cpp_500_is_not_retried_and_the_next_call_works(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = llama_scenario(loopback.base_url)
    loopback.queue(
        json_reply({"error": {"code": 500, "message": "validation error", "type": "server_error"}},
                   500),
        sse_reply(sse_text("fine"), chunk_size=40),
    )  # fmt: skip
    llama = provider(s, no_sleep)
    request = StepRequest(system="", messages=[])
    with pytest.raises(ProviderError, match="HTTP 500: validation error") as info:
        async for _ in llama.stream(request):
            pass
    assert info.value.transport_retries == 0
    first_client = llama.http.client
    chunks = [c async for c in llama.stream(request)]
    assert chunks[-1].kind == "completed"
    assert llama.http.client is first_client  # built afresh after the error, then kept
    assert "#" not in loopback.received[1].path
    await llama.aclose()


async def test_empty_200_stream_is_a_clear_error(
    loopback: LoopbackServer, no_sleep: RecordingSleep
) -> None:
    s = scenario(loopback.base_url)
    loopback.queue(sse_reply(b"", chunk_size=10))
    record = await run_turn(s, provider(s, no_sleep))
    assert record.status == "error"
    assert record.error is not None and record.error.type == "EmptyStream"
    assert "empty stream" in record.error.message
