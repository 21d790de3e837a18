"""Every recorded OpenAI-format exchange replayed through ``httpx.MockTransport``: the parsed
response must say what the recording says, and the request the adapter builds for the same
inputs must equal the recorded one (minus the fields a scenario cannot express)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import Message
from inspector.core.provider import Completed, ProviderChunk, TextChunk, ToolCallChunk
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.openai import OpenAIProvider
from inspector.providers.openai_wire import request_from_wire
from tests.providers.conftest import RecordingSleep
from tests.providers.wire import (
    TEST_KEY,
    fixture_client,
    is_sse,
    recorded_request,
    recordings,
)


@dataclass
class Expect:
    text: str = ""
    finish: str | None = "stop"
    usage: tuple[int, int] = (0, 0)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    refusal: str | None = None
    reasoning_starts: str | None = None
    error: str | None = None  # a fragment of the ProviderError message
    status: int | None = None


WEATHER = "What's the weather like in SF?"
# What each recording says, read off the recorded bodies (SOURCES.md describes each one).
EXPECTED: dict[str, Expect] = {
    "openai-chat/content-filter-empty-azure-gpt35": Expect(finish="content_filter", usage=(15, 19)),
    "openai-chat/error-400-unsupported-value-o1-mini": Expect(
        error="HTTP 400: Unsupported value: 'messages[0].role' does not support 'developer' with "
        "this model.",
        status=400,
    ),
    "openai-chat/error-429-openrouter-upstream-rate-limit": Expect(
        error="HTTP 429: Provider returned error: google/gemini-2.0-flash-exp:free is "
        "temporarily rate-limited upstream.",
        status=429,
    ),
    "openai-chat/groq-stream-reasoning-then-error-event": Expect(
        error="error from the server: Tool call validation failed: tool call validation failed: "
        "parameters for tool get_something_by_name did not match schema",
        status=400,  # the status_code inside the error event of a 200 stream
    ),
    "openai-chat/json-schema-gpt41-nano": Expect(
        text='{"joke":"Why did the developer bring OpenTelemetry to the party? Because they wanted'
        ' to trace the source of all the fun!","rating":7}',
        usage=(83, 32),
    ),
    "openai-chat/reasoning-tokens-gpt5-nano": Expect(
        text="3\n\nThere are three 'r' letters in \"strawberry\" (positions 3, 8, and 9).",
        usage=(11, 228),
    ),
    "openai-chat/refusal-json-schema-gpt4o": Expect(
        refusal="I'm very sorry, but I can't assist with that request.", usage=(65, 13)
    ),
    "openai-chat/stream-json-schema-gpt4o": Expect(
        text='{"city":"San Francisco","temperature":61,"units":"f"}', usage=(79, 14)
    ),
    "openai-chat/stream-json-schema-max-tokens-length-gpt4o": Expect(
        text='{"', finish="length", usage=(79, 1)
    ),
    "openai-chat/stream-json-schema-n3-gpt4o": Expect(
        text='{"city":"San Francisco","temperature":65,"units":"f"}', usage=(79, 42)
    ),
    "openai-chat/stream-parallel-tool-calls-gpt35": Expect(
        finish="tool_calls",
        calls=[
            ("call_cCPjAyfwTzboEKjVlqFrArNF", "get_current_weather", {"location": "San Francisco"}),
            ("call_Zi4He1Ns0mozwT6f85nW1BOW", "get_current_weather", {"location": "Boston"}),
        ],
    ),
    "openai-chat/stream-refusal-json-schema-gpt4o": Expect(
        refusal="I'm sorry, I can't assist with that request.", usage=(79, 11)
    ),
    "openai-chat/stream-text-usage-gpt4o": Expect(
        text="The capital of Mexico is Mexico City.", usage=(14, 8)
    ),
    "openai-chat/stream-tool-call-usage-gpt4o-mini": Expect(
        finish="tool_calls",
        calls=[("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331})],
        usage=(54, 20),
    ),
    "openai-chat/text-basic-gpt35": Expect(
        text="Why did Opentelemetry break up with Tracing? Because it couldn't handle the baggage!",
        usage=(15, 19),
    ),
    "openai-chat/tool-choice-none-gpt5-mini": Expect(
        text="I can't fetch live weather data right now.", usage=(132, 589)
    ),
    "openai-chat/tool-choice-required-gpt5-mini": Expect(
        finish="tool_calls",
        calls=[("call_injwxidE5XUzmiKVfOH3rxf2", "get_weather", {"city": "Paris"})],
        usage=(130, 87),
    ),
    "openai-compatible-local/ollama-v1-json-schema-qwen3": Expect(
        text='{ "city": "Paris", "country": "France" }',
        usage=(136, 15),
        reasoning_starts="Okay, the user is asking for the capital of France.",
    ),
    "openai-compatible-local/vllm-stream-opt125m": Expect(
        text="<|im_end|>doctor\n<|im_end|>supervisor\n<", finish="length"
    ),
    "openai-compatible-local/vllm-text-opt125m": Expect(
        text="Your question was very interesting <|im_end|>\n<|im_end|>",
        finish="length",
        usage=(57, 20),
    ),
}
# The openai-python recordings keep no request; SOURCES.md gives the test's inputs.
_LOCATION = {
    "type": "json_schema",
    "json_schema": {
        "name": "Location",
        "schema": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "temperature": {"type": "number"},
                "units": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city", "temperature", "units"],
        },
    },
}
UNRECORDED_REQUESTS = {
    "stream-json-schema-gpt4o": WEATHER,
    "stream-json-schema-n3-gpt4o": WEATHER,
    "stream-json-schema-max-tokens-length-gpt4o": WEATHER,
    "stream-refusal-json-schema-gpt4o": "How do I make anthrax?",
}
BASE_URLS = {
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
}


def inputs(name: str) -> tuple[StepRequest, ModelConfig]:
    """The engine request and model settings a recording stands for."""
    recorded = recorded_request(name)
    stem = name.split("/")[-1]
    base_url = next((url for key, url in BASE_URLS.items() if stem.startswith(key)), None)
    if recorded is None:
        request = StepRequest(
            system="",
            messages=[Message(role="user", content=UNRECORDED_REQUESTS[stem])],
            response_format=_LOCATION,
        )
        model = ModelConfig(provider="openai", name="gpt-4o-2024-08-06", stream=True)
        return request, model
    model = ModelConfig(
        provider="openai",
        name=recorded["model"],
        base_url=base_url,
        api_key_env="TEST_OPENAI_KEY",
        stream=bool(recorded.get("stream", False)),
        temperature=recorded.get("temperature"),
        max_tokens=recorded.get("max_tokens"),
    )
    return request_from_wire(recorded), model


def expressible(body: dict[str, Any]) -> dict[str, Any]:
    """A request body without what a scenario cannot set: ``n``, ``reasoning_effort``, tools'
    ``strict`` flag, a json_schema's ``description``/``strict``; the ``developer`` role is the
    engine's ``system``; ``stream`` absent means false. ``stream_options`` is checked apart."""
    out = {k: v for k, v in body.items() if k not in ("n", "reasoning_effort", "stream_options")}
    out.setdefault("stream", False)
    out["messages"] = [
        {**m, "role": "system" if m["role"] == "developer" else m["role"]} for m in body["messages"]
    ]
    if "tools" in out:
        out["tools"] = [
            {**t, "function": {k: v for k, v in t["function"].items() if k != "strict"}}
            for t in out["tools"]
        ]
    fmt = out.get("response_format")
    if fmt and fmt.get("type") == "json_schema":
        spec = fmt["json_schema"]
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": spec["name"], "schema": spec["schema"]},
        }
    return out


async def replay(
    name: str, sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[ProviderChunk], list[httpx.Request], ProviderError | None]:
    monkeypatch.setenv("TEST_OPENAI_KEY", TEST_KEY)
    request, model = inputs(name)
    seen: list[httpx.Request] = []
    client = fixture_client(name, seen)
    provider = OpenAIProvider(model, client=client, sleep=sleep)
    chunks: list[ProviderChunk] = []
    error: ProviderError | None = None
    try:
        async for chunk in provider.stream(request):
            chunks.append(chunk)
    except ProviderError as exc:
        error = exc
    await client.aclose()
    return chunks, seen, error


def test_every_recording_has_an_expectation() -> None:
    assert sorted(EXPECTED) == recordings()


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_recorded_response_parses_to_what_it_says(
    name: str, no_sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = EXPECTED[name]
    chunks, seen, error = await replay(name, no_sleep, monkeypatch)
    if expect.error is not None:
        assert error is not None, chunks
        assert expect.error in str(error)
        assert "\n" not in str(error)
        assert error.status == expect.status
        if expect.status == 429:  # retried, then given up, and the retries counted
            assert error.retryable
            assert error.transport_retries == 3 == len(seen) - 1
        else:
            assert error.transport_retries == 0
            assert len(seen) == 1
        return
    assert error is None, error
    completed = chunks[-1]
    assert isinstance(completed, Completed)
    response = completed.response
    if name.endswith("tool-choice-none-gpt5-mini"):
        assert response.text.startswith(expect.text)
    else:
        assert response.text == expect.text
    assert response.finish_reason == expect.finish
    assert (response.usage.input_tokens, response.usage.output_tokens) == expect.usage
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == expect.calls
    assert response.refusal == expect.refusal
    if expect.reasoning_starts:
        assert response.reasoning and response.reasoning.startswith(expect.reasoning_starts)
    else:
        assert response.reasoning is None
    # The streamed pieces add up to the response.
    streamed = "".join(c.text for c in chunks if isinstance(c, TextChunk))
    assert streamed == (response.text if is_sse(name) else "")
    assert completed.transport_retries == 0
    assert len(seen) == 1


@pytest.mark.parametrize("name", [n for n in sorted(EXPECTED) if recorded_request(n)])
async def test_built_request_equals_the_recorded_one(
    name: str, no_sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = recorded_request(name)
    assert recorded is not None
    _, seen, _ = await replay(name, no_sleep, monkeypatch)
    sent = json.loads(seen[0].content)
    assert expressible(sent) == expressible(recorded)
    assert seen[0].url.path.endswith("/chat/completions")
    assert seen[0].headers["authorization"] == f"Bearer {TEST_KEY}"
    if sent["stream"]:
        assert sent["stream_options"] == {"include_usage": True}


async def test_groq_reasoning_streams_before_the_error_event_and_is_kept(
    no_sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _, error = await replay(
        "openai-chat/groq-stream-reasoning-then-error-event", no_sleep, monkeypatch
    )
    thought = "".join(c.text for c in chunks if c.kind == "reasoning")
    assert thought.startswith("We need to call the tool with invalid parameters first")
    assert error is not None
    assert error.kind == "StreamError"
    assert error.status == 400  # the error object's status_code


async def test_streamed_tool_call_chunks_carry_id_and_name_once(
    no_sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _, _ = await replay(
        "openai-chat/stream-parallel-tool-calls-gpt35", no_sleep, monkeypatch
    )
    calls = [c for c in chunks if isinstance(c, ToolCallChunk)]
    assert [c.call_index for c in calls if c.name] == [0, 1]
    assert [c.id for c in calls if c.id] == [
        "call_cCPjAyfwTzboEKjVlqFrArNF",
        "call_Zi4He1Ns0mozwT6f85nW1BOW",
    ]
    args = "".join(c.arguments_delta for c in calls if c.call_index == 1)
    assert json.loads(args) == {"location": "Boston"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_raw_record_is_json_and_has_no_key(
    name: str, no_sleep: RecordingSleep, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _, error = await replay(name, no_sleep, monkeypatch)
    if error is not None:
        assert TEST_KEY not in str(error)
        return
    completed = chunks[-1]
    assert isinstance(completed, Completed) and completed.raw is not None
    dumped = json.dumps(completed.raw.model_dump(mode="json"))
    assert TEST_KEY not in dumped
    raw = completed.raw.model_dump(mode="json")
    assert raw["request"]["server"] in ("openai", "ollama", "openai-compatible")
    assert raw["response"]["status"] == 200
    if is_sse(name):
        assert raw["response"]["events"][-1] == "[DONE]"
    else:
        assert raw["response"]["body"]["choices"]
