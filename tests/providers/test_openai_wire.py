"""The pure mappings and the stream assembler, each on its own; the llama.cpp workarounds."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall, assistant, tool_result, user
from inspector.core.provider import Completed, ProviderChunk, ToolCallChunk
from inspector.core.records import StepRequest, ToolSpec
from inspector.core.scenario import ModelConfig
from inspector.providers.openai import OpenAIProvider, ignored_tool_choice
from inspector.providers.openai_stream import StreamAssembler
from inspector.providers.openai_wire import (
    PROFILES,
    arguments_from_wire,
    build_body,
    completion_from_wire,
    message_to_wire,
    request_from_wire,
    response_format_to_wire,
    select_profile,
    tool_choice_from_wire,
    tool_choice_to_wire,
)
from tests.providers.conftest import RecordingSleep
from tests.providers.wire import replying

OPENAI = PROFILES["openai"]
LLAMA = PROFILES["llama.cpp"]
WEATHER = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {}})
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
NATIVE = {"type": "json_schema", "json_schema": {"name": "final_answer", "schema": SCHEMA}}


def model(**kwargs: Any) -> ModelConfig:
    return ModelConfig.model_validate({"provider": "openai", "name": "m", **kwargs})


@pytest.mark.parametrize(
    ("base_url", "name", "expected"),
    [
        (None, "gpt-4o", "openai"),
        ("https://api.openai.com/v1", "gpt-4o", "openai"),
        ("http://localhost:11434/v1", "qwen3", "ollama"),
        ("http://127.0.0.1:8642/v1", "gemma", "llama.cpp"),
        ("http://10.0.0.5:9000/v1", "x.gguf", "llama.cpp"),
        ("https://openrouter.ai/api/v1", "a/b", "openrouter"),
        ("http://10.0.0.5:9000/v1", "x", "openai-compatible"),
        ("http://10.0.0.5:9000/v1#server=llama.cpp", "x", "llama.cpp"),
    ],
)
def test_select_profile(base_url: str | None, name: str, expected: str) -> None:
    assert select_profile(model(base_url=base_url, name=name)).name == expected


def test_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ProviderError, match="unknown server profile 'nope'"):
        select_profile(model(base_url="http://h/v1#server=nope"))


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"type": "function", "name": "f"}, {"type": "function", "function": {"name": "f"}}),
    ],
)
def test_tool_choice_both_ways(choice: Any, wire: Any) -> None:
    assert tool_choice_to_wire(choice, OPENAI) == (wire, [])
    assert tool_choice_from_wire(wire) == choice


def test_required_becomes_auto_where_unsupported_and_says_so() -> None:
    wire, notes = tool_choice_to_wire("required", LLAMA)
    assert wire == "auto"
    assert "llama.cpp" in notes[0]


def test_json_schema_becomes_json_object_with_schema_where_unsupported() -> None:
    assert response_format_to_wire(NATIVE, OPENAI) == (NATIVE, [])
    wire, notes = response_format_to_wire(NATIVE, LLAMA)
    assert wire == {"type": "json_object", "schema": SCHEMA}
    assert notes


def test_assistant_tool_call_message_content_null_or_empty() -> None:
    call = ToolCall(id="c1", name="f", arguments={})
    msg = assistant(None, (call,))
    assert message_to_wire(msg, OPENAI)["content"] is None
    assert message_to_wire(msg, LLAMA)["content"] == ""
    assert message_to_wire(msg, OPENAI)["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]
    assert message_to_wire(assistant(None), OPENAI)["content"] == ""


def test_tool_result_message() -> None:
    wire = message_to_wire(tool_result("c1", "42", name="f"), OPENAI)
    assert wire == {"role": "tool", "content": "42", "tool_call_id": "c1"}


def test_request_round_trips_through_the_wire() -> None:
    request = StepRequest(
        system="sys",
        messages=[
            user("hi"),
            assistant(None, (ToolCall(id="c1", name="get_weather", arguments={"x": 1}),)),
            tool_result("c1", "sunny"),
        ],
        tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
        response_format=NATIVE,
    )
    body, stream, notes = build_body(request, model(stream=False), OPENAI)
    assert (stream, notes) == (False, [])
    assert request_from_wire(body) == request


def test_llama_cpp_body_applies_every_workaround() -> None:
    request = StepRequest(
        system="",
        messages=[user("hi"), assistant(None, (ToolCall(id="c", name="get_weather"),))],
        tools=[WEATHER],
        tool_choice="required",
        response_format=NATIVE,
    )
    body, stream, notes = build_body(request, model(stream=True), LLAMA)
    assert body["tool_choice"] == "auto"
    assert body["response_format"]["type"] == "json_object"
    assert body["messages"][1]["content"] == ""
    assert stream is False and body["stream"] is False and "stream_options" not in body
    assert len(notes) == 3


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [(None, {}), ("", {}), ("  ", {}), ("{}", {}), ('{"a": 1}', {"a": 1}), ("[1]", "[1]"),
     ("{bad", "{bad")],
)  # fmt: skip
def test_arguments_from_wire(raw: str | None, parsed: Any) -> None:
    assert arguments_from_wire(raw) == parsed


def test_content_filter_choice_without_message() -> None:
    response = completion_from_wire({"choices": [{"index": 0, "finish_reason": "content_filter"}]})
    assert (response.text, response.finish_reason) == ("", "content_filter")


def test_reasoning_content_field() -> None:
    data = {"choices": [{"index": 0, "message": {"content": "x", "reasoning_content": "think"}}]}
    assert completion_from_wire(data).reasoning == "think"


# --- the stream assembler ---------------------------------------------------------------------


def feed(assembler: StreamAssembler, *payloads: Any) -> list[ProviderChunk]:
    out: list[ProviderChunk] = []
    for payload in payloads:
        out.extend(assembler.feed("message", json.dumps(payload)))
    return out


def delta_call(index: int, **fields: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"index": index}
    function = {k: fields.pop(k) for k in ("name", "arguments") if k in fields}
    call.update(fields)
    if function:
        call["function"] = function
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}


def test_repeated_id_and_name_chunks_merge_by_index_never_concatenate() -> None:
    # llama.cpp repeats id and name in every chunk of a call.
    assembler = StreamAssembler()
    chunks = feed(
        assembler,
        delta_call(0, id="call_a", name="get_weather", arguments='{"ci'),
        delta_call(0, id="call_a", name="get_weather", arguments='ty": "Paris"}'),
        delta_call(1, id="call_b", name="get_time", arguments=""),
        delta_call(1, id="call_b", name="get_time"),
    )
    response = assembler.response()
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_time", {}),  # a call with no arguments
    ]
    named = [c for c in chunks if isinstance(c, ToolCallChunk) and c.name]
    assert [(c.call_index, c.name) for c in named] == [(0, "get_weather"), (1, "get_time")]


def test_only_choice_zero_is_followed() -> None:
    assembler = StreamAssembler()
    feed(
        assembler,
        {"choices": [{"index": 1, "delta": {"content": "other"}}]},
        {"choices": [{"index": 0, "delta": {"content": "mine"}, "finish_reason": "stop"}]},
    )
    assert assembler.response().text == "mine"


def test_malformed_json_chunk_is_a_clear_error_keeping_partial_text() -> None:
    assembler = StreamAssembler()
    feed(assembler, {"choices": [{"index": 0, "delta": {"content": "so far"}}]})
    with pytest.raises(ProviderError, match="malformed JSON in a stream chunk") as info:
        assembler.feed("message", '{"choices": [')
    assert info.value.partial_text == "so far"
    assert info.value.kind == "MalformedChunk"


def test_usage_only_final_chunk() -> None:
    assembler = StreamAssembler()
    feed(assembler, {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
    assert assembler.response().usage.output_tokens == 4


# --- forced tool_choice the server ignored ----------------------------------------------------


async def test_ignored_forced_tool_choice_is_recorded_and_not_hidden(
    no_sleep: RecordingSleep,
) -> None:
    body = {"choices": [{"index": 0, "message": {"content": "just text"}, "finish_reason": "stop"}]}
    handler = replying(200, json.dumps(body).encode())
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    request = StepRequest(
        system="",
        messages=[Message(role="user", content="hi")],
        tools=[WEATHER],
        tool_choice={"type": "function", "name": "get_weather"},
    )
    provider = OpenAIProvider(model(stream=False), client=client, sleep=no_sleep)
    chunks = [c async for c in provider.stream(request)]
    completed = chunks[-1]
    assert isinstance(completed, Completed) and completed.raw is not None
    assert completed.response.text == "just text"
    assert completed.response.tool_calls == []
    assert completed.raw.response["warnings"] == [
        "tool_choice forced 'get_weather' but the server answered with no tool call"
    ]
    await client.aclose()


def test_ignored_required_tool_choice() -> None:
    request = StepRequest(system="", messages=[], tools=[WEATHER], tool_choice="required")
    assert ignored_tool_choice(request, completion_from_wire({"choices": []}))
