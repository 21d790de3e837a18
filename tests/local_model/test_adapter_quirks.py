"""Each llama.cpp quirk through the ``openai`` adapter: with the ``llama.cpp`` profile it works
(a workaround recorded in the step's notes), and with the capability switched back on it ends in
a clear one-line ``ProviderError`` — never a hang, a garbled call or a stray httpx error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import ToolCall, assistant, tool_result, user
from inspector.core.provider import Completed, ProviderChunk, ToolCallChunk
from inspector.core.records import StepRequest, ToolSpec
from inspector.core.scenario import ModelConfig
from inspector.providers.openai import OpenAIProvider
from inspector.providers.openai_wire import PROFILES, ServerProfile

pytestmark = pytest.mark.local_model

LLAMA = PROFILES["llama.cpp"]
LOOKUP = ToolSpec(
    name="lookup_contact",
    description="Find a contact's phone number by name.",
    parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
}
SYSTEM = "You write SMS messages. Look up the contact first."
WRITE = [user("Tell Sam the meeting moved to 3pm.")]
LOOK_UP = [user("Look up Sam's number.")]  # greedy Gemma 3 270M picks the tool for this one
PINNED = {"type": "function", "name": "lookup_contact"}


def provider(base_url: str, *, stream: bool, **capabilities: bool) -> OpenAIProvider:
    model = ModelConfig(
        provider="openai",
        name="gemma-3-270m",
        base_url=base_url,
        temperature=0,
        max_tokens=32,
        stream=stream,
        timeout_s=50,
    )
    profile: ServerProfile = LLAMA.model_copy(update=capabilities)
    return OpenAIProvider(model, profile=profile)


async def call(p: OpenAIProvider, request: StepRequest) -> tuple[list[ProviderChunk], Completed]:
    chunks = [chunk async for chunk in p.stream(request)]
    last = chunks[-1]
    assert isinstance(last, Completed)
    return chunks, last


def sent(done: Completed) -> dict[str, Any]:
    assert done.raw is not None
    body: dict[str, Any] = done.raw.request["body"]
    return body


def notes(done: Completed) -> list[str]:
    assert done.raw is not None
    found: list[str] = done.raw.request["notes"]
    return found


def assert_clear(error: ProviderError, status: int | None) -> None:
    message = str(error)
    assert message.startswith("openai: ") and "\n" not in message
    assert error.status == status
    assert not error.retryable and error.transport_retries == 0


# -- streamed tool-call chunks repeat id and name --------------------------------------------


async def test_streamed_tool_call_fragments_are_merged_by_index(base_url: str) -> None:
    # stream_with_tools on: a pinned tool_choice does stream on this server.
    p = provider(base_url, stream=True, stream_with_tools=True)
    try:
        chunks, done = await call(
            p, StepRequest(system=SYSTEM, messages=LOOK_UP, tools=[LOOKUP], tool_choice=PINNED)
        )
    finally:
        await p.aclose()
    assert sent(done)["stream"] is True
    assert done.raw is not None
    fragments = [
        c
        for e in done.raw.response["events"]
        if e != "[DONE]"
        for c in json.loads(e)["choices"][0]["delta"].get("tool_calls") or []
    ]
    assert len(fragments) > 1 and all(f["function"]["name"] for f in fragments)  # the quirk
    calls = done.response.tool_calls
    assert [c.name for c in calls] == ["lookup_contact"]
    assert calls[0].id == fragments[0]["id"]
    assert isinstance(calls[0].arguments, dict)
    deltas = [c for c in chunks if isinstance(c, ToolCallChunk)]
    assert {d.call_index for d in deltas} == {0}
    assert json.loads("".join(d.arguments_delta for d in deltas)) == calls[0].arguments


# -- tool_choice "required" ------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_required_is_sent_as_auto(base_url: str, stream: bool) -> None:
    p = provider(base_url, stream=stream)
    try:
        _, done = await call(
            p, StepRequest(system=SYSTEM, messages=LOOK_UP, tools=[LOOKUP], tool_choice="required")
        )
    finally:
        await p.aclose()
    assert sent(done)["tool_choice"] == "auto"
    assert any('"required" sent as "auto"' in n for n in notes(done))
    assert [c.name for c in done.response.tool_calls] == ["lookup_contact"]


async def test_required_without_the_workaround_is_a_clear_500(base_url: str) -> None:
    p = provider(base_url, stream=False, tool_choice_required=True)
    try:
        with pytest.raises(ProviderError) as caught:
            await call(
                p,
                StepRequest(system=SYSTEM, messages=WRITE, tools=[LOOKUP], tool_choice="required"),
            )
    finally:
        await p.aclose()
    assert_clear(caught.value, 500)
    assert "HTTP 500" in str(caught.value)


async def test_required_streamed_without_the_workaround_is_a_clear_empty_stream(
    base_url: str,
) -> None:
    p = provider(base_url, stream=True, tool_choice_required=True, stream_with_tools=True)
    try:
        with pytest.raises(ProviderError) as caught:
            await call(
                p,
                StepRequest(system=SYSTEM, messages=WRITE, tools=[LOOKUP], tool_choice="required"),
            )
    finally:
        await p.aclose()
    assert caught.value.kind == "EmptyStream"
    assert "empty stream" in str(caught.value)
    assert "\n" not in str(caught.value)


# -- "auto" while streaming, the model picks a tool --------------------------------------------


async def test_auto_with_tools_is_not_streamed_and_the_call_arrives(base_url: str) -> None:
    p = provider(base_url, stream=True)
    try:
        _, done = await call(
            p, StepRequest(system=SYSTEM, messages=LOOK_UP, tools=[LOOKUP], tool_choice="auto")
        )
    finally:
        await p.aclose()
    assert sent(done)["stream"] is False
    assert any("not streamed" in n for n in notes(done))
    assert [c.name for c in done.response.tool_calls] == ["lookup_contact"]
    assert done.response.finish_reason == "tool_calls"


async def test_auto_streamed_without_the_workaround_is_a_clear_empty_stream(base_url: str) -> None:
    p = provider(base_url, stream=True, stream_with_tools=True)
    try:
        with pytest.raises(ProviderError) as caught:
            await call(
                p, StepRequest(system=SYSTEM, messages=LOOK_UP, tools=[LOOKUP], tool_choice="auto")
            )
    finally:
        await p.aclose()
    assert caught.value.kind == "EmptyStream"


# -- response_format json_schema ---------------------------------------------------------------

JSON_SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "sms", "schema": SCHEMA}}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
async def test_json_schema_is_sent_as_json_object_with_the_schema(
    base_url: str, stream: bool
) -> None:
    p = provider(base_url, stream=stream)
    try:
        _, done = await call(
            p, StepRequest(system=SYSTEM, messages=WRITE, response_format=JSON_SCHEMA_FORMAT)
        )
    finally:
        await p.aclose()
    assert sent(done)["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert any("json_object" in n for n in notes(done))
    reply = json.loads(done.response.text)  # the server's grammar keeps it to the schema
    assert isinstance(reply["body"], str)


async def test_json_schema_without_the_workaround_is_a_clear_500(base_url: str) -> None:
    p = provider(base_url, stream=False, json_schema=True)
    try:
        with pytest.raises(ProviderError) as caught:
            await call(
                p, StepRequest(system=SYSTEM, messages=WRITE, response_format=JSON_SCHEMA_FORMAT)
            )
    finally:
        await p.aclose()
    assert_clear(caught.value, 500)
    assert "json_object" in str(caught.value)  # the server's own reason, on one line


# -- assistant content null --------------------------------------------------------------------

LOOKUP_CALL = ToolCall(id="call_1", name="lookup_contact", arguments={"name": "Sam"})
AFTER_TOOL = [
    *LOOK_UP,
    assistant(None, (LOOKUP_CALL,)),
    tool_result("call_1", "Sam Carter: +1 555 0100", name="lookup_contact"),
]


async def test_assistant_content_null_is_sent_as_empty_string(base_url: str) -> None:
    p = provider(base_url, stream=False)
    try:
        _, done = await call(
            p, StepRequest(system=SYSTEM, messages=AFTER_TOOL, tools=[LOOKUP], tool_choice="auto")
        )
    finally:
        await p.aclose()
    echoed = [m for m in sent(done)["messages"] if m["role"] == "assistant"]
    assert echoed[0]["content"] == ""
    assert done.response.finish_reason in ("stop", "length", "tool_calls")


async def test_validation_errors_are_500s_reported_once_not_retried(base_url: str) -> None:
    """content null is a request validation error on this server, and it answers 500: the
    adapter must not retry it as a server fault, and must show the server's reason."""
    p = provider(base_url, stream=False, null_content=True)
    try:
        with pytest.raises(ProviderError) as caught:
            await call(
                p,
                StepRequest(system=SYSTEM, messages=AFTER_TOOL, tools=[LOOKUP], tool_choice="auto"),
            )
    finally:
        await p.aclose()
    assert_clear(caught.value, 500)
    assert "validation error" in str(caught.value)


# -- the kept-alive connection after an error ------------------------------------------------


async def test_the_call_after_an_error_gets_a_fresh_connection(base_url: str) -> None:
    """An empty stream leaves the kept-alive connection dead; the next call on the same provider
    must not fail (nor need a retry) because of it."""
    p = provider(base_url, stream=True, tool_choice_required=True, stream_with_tools=True)
    try:
        with pytest.raises(ProviderError):
            await call(
                p,
                StepRequest(system=SYSTEM, messages=WRITE, tools=[LOOKUP], tool_choice="required"),
            )
        for _ in range(3):
            _, done = await call(p, StepRequest(system=SYSTEM, messages=WRITE))
            assert done.transport_retries == 0
            assert done.response.finish_reason in ("stop", "length")
    finally:
        await p.aclose()
