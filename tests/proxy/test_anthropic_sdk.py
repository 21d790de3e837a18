"""The official ``anthropic`` SDK pointed at the proxy (its base URL is the proxy's, without
``/v1``); the upstream replays recorded Messages API replies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anthropic
import pytest

from tests.proxy.conftest import ANTHROPIC, KEY, Proxied, fixture_reply


@pytest.fixture
async def sdk(proxied: Proxied) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(
        base_url=proxied.proxy.url, api_key=KEY, max_retries=0
    ) as client:
        yield client


async def test_a_message_reaches_the_client_unchanged_and_is_recorded(
    proxied: Proxied, sdk: anthropic.AsyncAnthropic
) -> None:
    reply, body = fixture_reply(ANTHROPIC, "text-basic-claude3-opus")
    proxied.upstream.queue(reply)
    raw = await sdk.messages.with_raw_response.create(
        model="claude-haiku-4-5",  # the SDK warns on retired names; the upstream replays anyway
        max_tokens=1024,
        system="Be funny.",
        messages=[{"role": "user", "content": "Tell me a joke about OpenTelemetry"}],
    )
    assert raw.http_response.content == body
    message = await raw.parse()
    assert message.content[0].type == "text"

    sent = proxied.upstream.received[0]
    assert sent.path == "/v1/messages"
    # This SDK version sends its key as ``authorization``; older ones as ``x-api-key``.
    auth = "x-api-key" if "x-api-key" in sent.headers else "authorization"
    assert KEY in sent.headers[auth]

    (record,) = await proxied.records()
    assert (record.provider, record.status) == ("anthropic", "succeeded")
    (step,) = record.steps
    assert step.request.system == "Be funny."
    assert [(m.role, m.content) for m in step.request.messages] == [
        ("user", "Tell me a joke about OpenTelemetry")
    ]
    assert step.response is not None and step.response.text == message.content[0].text
    assert step.response.finish_reason == "stop"
    assert step.raw is not None and step.raw.request["headers"][auth] == "[redacted]"
    assert KEY.encode() not in proxied.stored_bytes()


async def test_a_stream_reaches_the_client_unchanged(
    proxied: Proxied, sdk: anthropic.AsyncAnthropic
) -> None:
    reply, body = fixture_reply(ANTHROPIC, "stream-text-haiku45")
    again, _ = fixture_reply(ANTHROPIC, "stream-text-haiku45")
    proxied.upstream.queue(reply, again)
    request = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hello"}],
    }
    async with sdk.messages.with_streaming_response.create(**request, stream=True) as response:  # type: ignore[call-overload]
        received = b"".join([chunk async for chunk in response.iter_bytes()])
    assert received == body

    async with sdk.messages.stream(**request) as stream:  # type: ignore[arg-type]
        text = "".join([t async for t in stream.text_stream])
    assert text

    records = await proxied.records()
    assert len(records) == 2
    for record in records:
        (step,) = record.steps
        assert step.status == "success"
        assert step.response is not None and step.response.text == text
        assert step.response.usage.output_tokens > 0


async def test_parallel_tool_use_then_results_are_one_run(
    proxied: Proxied, sdk: anthropic.AsyncAnthropic
) -> None:
    first, _ = fixture_reply(ANTHROPIC, "stream-parallel-tool-use-args-split-sonnet35")
    second, _ = fixture_reply(ANTHROPIC, "text-basic-claude3-opus")
    proxied.upstream.queue(first, second)
    request = json.loads(
        (ANTHROPIC / "stream-parallel-tool-use-args-split-sonnet35.request.json").read_text()
    )
    request.pop("stream")
    request["model"] = "claude-haiku-4-5"
    async with sdk.messages.stream(**request) as stream:
        message = await stream.get_final_message()
    uses = [b for b in message.content if b.type == "tool_use"]
    assert len(uses) == 2
    results = [
        {"type": "tool_result", "tool_use_id": u.id, "content": f"result of {u.name}"} for u in uses
    ]
    history = request.pop("messages")
    await sdk.messages.create(
        **request,
        messages=[
            *history,
            {"role": "assistant", "content": [b.model_dump() for b in message.content]},
            {"role": "user", "content": results},
        ],
    )

    (record,) = await proxied.records()
    assert [(s.index, s.attempt) for s in record.steps] == [(1, 1), (2, 1)]
    first_step, second_step = record.steps
    assert first_step.response is not None
    assert [c.name for c in first_step.response.tool_calls] == [u.name for u in uses]
    assert [m.role for m in second_step.request.messages] == ["user", "assistant", "tool", "tool"]
    assert [t.name for t in first_step.request.tools] == ["get_weather", "get_time"]
    assert record.status == "succeeded"


async def test_structured_output_is_recorded_with_its_schema(
    proxied: Proxied, sdk: anthropic.AsyncAnthropic
) -> None:
    reply, body = fixture_reply(ANTHROPIC, "json-schema-output-config-sonnet45")
    proxied.upstream.queue(reply)
    request = json.loads(
        (ANTHROPIC / "json-schema-output-config-sonnet45.request.json").read_text()
    )
    request["model"] = "claude-haiku-4-5"
    raw = await sdk.messages.with_raw_response.create(**request)
    assert raw.http_response.content == body
    assert proxied.upstream.received[0].json() == request

    (record,) = await proxied.records()
    (step,) = record.steps
    fmt = step.request.response_format
    assert fmt is not None and fmt["json_schema"]["schema"]["required"] == [
        "city",
        "country",
        "population",
    ]
    assert step.response is not None and json.loads(step.response.text)["city"] == "London"
