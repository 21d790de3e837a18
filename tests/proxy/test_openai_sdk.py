"""The official ``openai`` SDK pointed at the proxy; the upstream replays recorded replies.

Each test checks what the client received (byte for byte what the upstream sent), what the
upstream received (the client's request, key included) and what was recorded (no key)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import openai
import pytest
from pydantic import BaseModel

from tests.proxy.conftest import KEY, OPENAI, Proxied, fixture_reply


@pytest.fixture
async def sdk(proxied: Proxied) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=proxied.openai_url, api_key=KEY, max_retries=0
    ) as client:
        yield client


async def test_a_plain_call_reaches_the_client_unchanged_and_is_recorded(
    proxied: Proxied, sdk: openai.AsyncOpenAI
) -> None:
    reply, body = fixture_reply(OPENAI, "text-basic-gpt35")
    proxied.upstream.queue(reply)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    raw = await sdk.chat.completions.with_raw_response.create(
        model="gpt-3.5-turbo",
        messages=messages,  # type: ignore[arg-type]
    )
    assert raw.http_response.content == body
    text = raw.parse().choices[0].message.content
    assert text and text.startswith("Why did Opentelemetry")

    sent = proxied.upstream.received[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json() == {"messages": messages, "model": "gpt-3.5-turbo"}
    assert sent.headers["authorization"] == f"Bearer {KEY}"

    (record,) = await proxied.records()
    assert (record.via, record.provider, record.model) == ("proxy", "openai", "gpt-3.5-turbo")
    assert (record.status, record.termination) == ("succeeded", "stop")
    (step,) = record.steps
    assert (step.index, step.attempt, step.status) == (1, 1, "success")
    assert step.request.system == "Be brief."
    assert [m.content for m in step.request.messages] == ["Hi"]
    assert step.response is not None and step.response.text == text
    assert step.response.usage.input_tokens > 0
    assert step.raw is not None
    assert step.raw.request["body"] == sent.json()
    assert step.raw.request["headers"]["authorization"] == "[redacted]"
    assert step.raw.response["body"] == json.loads(body)
    assert KEY.encode() not in proxied.stored_bytes()
    assert KEY[3:].encode() not in proxied.stored_bytes()


async def test_a_stream_reaches_the_client_unchanged_chunk_by_chunk(
    proxied: Proxied, sdk: openai.AsyncOpenAI
) -> None:
    reply, body = fixture_reply(OPENAI, "stream-text-usage-gpt4o")
    again, _ = fixture_reply(OPENAI, "stream-text-usage-gpt4o")
    proxied.upstream.queue(reply, again)
    messages = [{"role": "user", "content": "What is the capital of Mexico?"}]
    async with sdk.chat.completions.with_streaming_response.create(
        model="gpt-4o",
        messages=messages,
        stream=True,  # type: ignore[arg-type]
    ) as response:
        received = b"".join([chunk async for chunk in response.iter_bytes()])
    assert received == body

    # Separate conversations (the same first message, no reply sent back): two runs.
    stream = await sdk.chat.completions.create(
        model="gpt-4o",
        messages=messages,
        stream=True,  # type: ignore[arg-type]
    )
    pieces = [c.choices[0].delta.content async for c in stream if c.choices]
    text = "".join(p for p in pieces if p)
    assert text == "The capital of Mexico is Mexico City."

    records = await proxied.records()
    assert len(records) == 2
    for record in records:
        (step,) = record.steps
        assert step.status == "success"
        assert step.response is not None and step.response.text == text
        assert step.response.finish_reason == "stop"
        assert step.ttft_ms is not None and step.latency_ms is not None
        assert step.raw is not None and step.raw.response["events"][-1] == "[DONE]"
    deltas = [e for e in proxied.events if e.kind == "text_delta"]
    assert "".join(e.text for e in deltas) == text * 2  # type: ignore[union-attr]


async def test_a_tool_call_and_its_result_are_one_run(
    proxied: Proxied, sdk: openai.AsyncOpenAI
) -> None:
    first, _ = fixture_reply(OPENAI, "stream-tool-call-usage-gpt4o-mini")
    second, _ = fixture_reply(OPENAI, "text-basic-gpt35")
    proxied.upstream.queue(first, second)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "multiply",
                "description": "Multiply two numbers.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                },
            },
        }
    ]
    messages: list[dict[str, object]] = [{"role": "user", "content": "What is 1231 * 2331?"}]
    stream = await sdk.chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        tools=tools,
        stream=True,  # type: ignore[arg-type]
    )
    calls: dict[int, dict[str, str]] = {}
    async for chunk in stream:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            if delta.function:
                call["name"] += delta.function.name or ""
                call["arguments"] += delta.function.arguments or ""
    call = calls[0]
    assert call["name"] == "multiply"
    arguments = json.loads(call["arguments"])
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call["id"], "type": "function", "function": call}],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": str(arguments["a"] * 2331)},
    ]
    await sdk.chat.completions.create(
        model="gpt-4o-mini",
        messages=messages,
        tools=tools,  # type: ignore[arg-type]
    )

    (record,) = await proxied.records()
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "success"),
        (2, 1, "success"),
    ]
    first_step, second_step = record.steps
    assert first_step.response is not None
    assert [c.name for c in first_step.response.tool_calls] == ["multiply"]
    assert first_step.response.tool_calls[0].arguments == arguments
    assert [t.name for t in first_step.request.tools] == ["multiply"]
    assert [m.role for m in second_step.request.messages] == ["user", "assistant", "tool"]
    assert first_step.feedback == []
    assert record.status == "succeeded"


class Joke(BaseModel):
    joke: str
    rating: int


async def test_structured_output_is_parsed_by_the_client_and_recorded(
    proxied: Proxied, sdk: openai.AsyncOpenAI
) -> None:
    reply, _ = fixture_reply(OPENAI, "json-schema-gpt41-nano")
    proxied.upstream.queue(reply)
    completion = await sdk.chat.completions.parse(
        model="gpt-4.1-nano",
        messages=[{"role": "user", "content": "Tell me a joke about opentelemetry"}],
        response_format=Joke,
    )
    parsed = completion.choices[0].message.parsed
    assert parsed is not None and parsed.rating == 7

    (record,) = await proxied.records()
    (step,) = record.steps
    fmt = step.request.response_format
    assert fmt is not None and fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["required"] == ["joke", "rating"]
    assert record.scenario_source["output"]["schema"]["required"] == ["joke", "rating"]
    assert step.response is not None and json.loads(step.response.text)["rating"] == 7
