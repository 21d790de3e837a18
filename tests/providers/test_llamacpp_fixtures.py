"""The bodies recorded from the real llama-cpp-python server (``fixtures/llamacpp/``, written by
``tests/local_model/capture.py``) replayed offline through the ``openai`` adapter with its
``llama.cpp`` profile: what each reply parses to, and the clear error for each quirk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.core.errors import ProviderError
from inspector.core.provider import Completed, ToolCallChunk
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.openai import OpenAIProvider
from inspector.providers.openai_wire import (
    PROFILES,
    ServerProfile,
    build_body,
    request_from_wire,
)
from tests.providers.wire import replying

FIXTURES = Path(__file__).parent / "fixtures" / "llamacpp"
CASES: dict[str, dict[str, Any]] = {
    c["name"]: c for c in json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8"))
}
LLAMA = PROFILES["llama.cpp"]


def recorded_request(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / f"{name}.request.json").read_text("utf-8"))
    return body


def model_for(body: dict[str, Any]) -> ModelConfig:
    return ModelConfig(
        provider="openai",
        name=body["model"],
        base_url="http://127.0.0.1:8642/v1",
        temperature=body.get("temperature"),
        max_tokens=body.get("max_tokens"),
        stream=bool(body.get("stream")),
    )


def engine_request(body: dict[str, Any]) -> StepRequest:
    """The engine request a recorded body stands for; a role the engine cannot express (the
    request recorded to provoke a validation error) becomes a user message."""
    roles = ("system", "user", "assistant", "tool")
    messages = [
        m if m["role"] in roles else {"role": "user", "content": m["content"]}
        for m in body["messages"]
    ]
    return request_from_wire({**body, "messages": messages})


async def replay(
    name: str, profile: ServerProfile = LLAMA
) -> tuple[list[Any], list[httpx.Request]]:
    """Runs the recorded request through the adapter; every HTTP call gets the recorded reply."""
    case = CASES[name]
    body = recorded_request(name)
    seen: list[httpx.Request] = []
    reply = (FIXTURES / case["response"]).read_bytes()
    handler = replying(case["status"], reply, content_type=case["content_type"], seen=seen)
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider(model_for(body), client=client, profile=profile)
    try:
        chunks = [c async for c in provider.stream(engine_request(body))]
    finally:
        await client.aclose()
    return chunks, seen


def completed(chunks: list[Any]) -> Completed:
    assert isinstance(chunks[-1], Completed)
    return chunks[-1]


def test_every_recording_is_listed_with_its_files() -> None:
    names = {p.name.split(".")[0] for p in FIXTURES.glob("*.request.json")}
    assert names == set(CASES)
    for case in CASES.values():
        assert (FIXTURES / case["response"]).exists()


async def test_text() -> None:
    done = completed((await replay("text"))[0])
    assert done.response.text and not done.response.tool_calls
    assert done.response.finish_reason == "stop"
    assert done.response.usage.input_tokens == 58 and done.response.usage.output_tokens == 15


async def test_stream_text_has_no_usage() -> None:
    chunks, _ = await replay("stream-text")
    done = completed(chunks)
    assert done.response.text == "Tell Sam the meeting moved to 4"
    assert done.response.finish_reason == "length"
    assert done.response.usage.input_tokens == 0  # the server sent none


async def test_repeated_id_and_name_in_stream_chunks_merge_into_one_call() -> None:
    # Streamed as recorded: the llama.cpp profile itself would not stream with tools.
    streaming = LLAMA.model_copy(update={"stream_with_tools": True})
    chunks, _ = await replay("stream-named-tool-repeated-id-name", streaming)
    done = completed(chunks)
    [call] = done.response.tool_calls
    assert call.name == "lookup_contact"
    assert call.id.startswith("call__0_lookup_contact_cmpl-")
    assert call.arguments == {"name": "Sam"}
    assert done.response.finish_reason == "tool_calls"
    deltas = [c for c in chunks if isinstance(c, ToolCallChunk)]
    assert len(deltas) > 1 and {d.call_index for d in deltas} == {0}


async def test_auto_tool_call_without_streaming() -> None:
    done = completed((await replay("auto-tool-call"))[0])
    assert [(c.name, c.arguments) for c in done.response.tool_calls] == [
        ("lookup_contact", {"name": "Sam"})
    ]
    assert done.response.text == ""  # content null


async def test_json_object_with_schema() -> None:
    done = completed((await replay("json-object-schema"))[0])
    assert isinstance(json.loads(done.response.text)["body"], str)


@pytest.mark.parametrize(
    "name", ["stream-auto-tool-call-empty", "stream-tool-choice-required-empty"]
)
async def test_an_empty_200_stream_is_a_clear_error(name: str) -> None:
    # Replayed with streaming forced on: the llama.cpp profile would not stream these.
    case = CASES[name]
    body = recorded_request(name)
    handler = replying(200, b"", content_type=case["content_type"])
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    profile = LLAMA.model_copy(update={"stream_with_tools": True, "tool_choice_required": True})
    provider = OpenAIProvider(model_for(body), client=client, profile=profile)
    try:
        with pytest.raises(ProviderError) as caught:
            [c async for c in provider.stream(request_from_wire(body))]
    finally:
        await client.aclose()
    assert caught.value.kind == "EmptyStream"
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("error-500-tool-choice-required", "internal_server_error"),
        ("error-500-json-schema-rejected", "Input should be 'text' or 'json_object'"),
        ("error-500-assistant-content-null", "validation errors"),
        ("error-500-validation-unknown-role", "validation errors"),
    ],
)
async def test_500s_are_one_line_errors_sent_once(name: str, reason: str) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay(name)
    error = caught.value
    assert error.status == 500 and not error.retryable and error.transport_retries == 0
    assert str(error).startswith("openai: HTTP 500: ") and "\n" not in str(error)
    assert reason in str(error)


@pytest.mark.parametrize(
    ("name", "key", "sent"),
    [
        ("error-500-tool-choice-required", "tool_choice", "auto"),
        ("error-500-json-schema-rejected", "response_format", "json_object"),
        ("stream-auto-tool-call-empty", "stream", False),
        ("stream-tool-choice-required-empty", "stream", False),
    ],
)
def test_the_llamacpp_profile_avoids_each_recorded_failure(name: str, key: str, sent: Any) -> None:
    body = recorded_request(name)
    built, _, notes = build_body(request_from_wire(body), model_for(body), LLAMA)
    value = built[key]["type"] if key == "response_format" else built[key]
    assert value == sent
    assert notes


def test_content_null_goes_out_as_empty_string() -> None:
    body = recorded_request("error-500-assistant-content-null")
    built, _, _ = build_body(request_from_wire(body), model_for(body), LLAMA)
    assert built["messages"] == recorded_request("assistant-content-empty")["messages"]
