"""The Anthropic provider over ``MockTransport``: retries (529, error events), keys and headers,
broken bodies."""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx
import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import user
from inspector.core.provider import Completed, ProviderChunk, TextChunk
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.anthropic import AnthropicProvider
from tests.providers.anthropic_fixtures import TEST_KEY, mock_client, response_file
from tests.providers.conftest import RecordingSleep

REQUEST = StepRequest(system="", messages=[user("Say just hello")])
# Hand-written in the documented envelope: no 529 was ever recorded (see SOURCES.md).
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
SSE = {"content-type": "text/event-stream"}


def sse_event(data: Mapping[str, object]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def hello_stream() -> httpx.Response:
    return httpx.Response(
        200, content=response_file("stream-text-haiku45").read_bytes(), headers=SSE
    )


def message_start() -> bytes:
    return sse_event({"type": "message_start", "message": {"id": "m", "usage": {}}})


def overloaded_stream(text: str = "") -> httpx.Response:
    body = message_start()
    if text:
        start = {"type": "text", "text": ""}
        body += sse_event({"type": "content_block_start", "index": 0, "content_block": start})
        text_delta = {"type": "text_delta", "text": text}
        body += sse_event({"type": "content_block_delta", "index": 0, "delta": text_delta})
    return httpx.Response(200, content=body + sse_event(OVERLOADED), headers=SSE)


def provider(
    client: httpx.AsyncClient, sleep: RecordingSleep, **model: object
) -> AnthropicProvider:
    config = ModelConfig.model_validate(
        {"provider": "anthropic", "name": "claude-haiku-4-5", **model}
    )
    return AnthropicProvider(config, client=client, sleep=sleep)


async def run(p: AnthropicProvider) -> list[ProviderChunk]:
    return [chunk async for chunk in p.stream(REQUEST)]


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


async def test_529_overloaded_is_retried_and_counted(no_sleep: RecordingSleep) -> None:
    client, served = mock_client(
        [httpx.Response(529, json=OVERLOADED, headers={"retry-after": "2"}), hello_stream()]
    )
    chunks = await run(provider(client, no_sleep))
    final = chunks[-1]
    assert isinstance(final, Completed)
    assert final.response.text == "Hello"
    assert final.transport_retries == 1
    assert no_sleep.delays == [2.0]  # retry-after honoured
    assert len(served.requests) == 2


async def test_529_until_the_budget_is_spent_is_an_error_with_the_count(
    no_sleep: RecordingSleep,
) -> None:
    client, served = mock_client(lambda request: httpx.Response(529, json=OVERLOADED))
    with pytest.raises(ProviderError) as caught:
        await run(provider(client, no_sleep))
    error = caught.value
    assert str(error) == "anthropic: HTTP 529: Overloaded"
    assert error.status == 529 and error.retryable
    assert error.transport_retries == 3 == len(served.requests) - 1


async def test_overloaded_event_before_any_content_is_retried(no_sleep: RecordingSleep) -> None:
    client, served = mock_client([overloaded_stream(), hello_stream()])
    chunks = await run(provider(client, no_sleep))
    final = chunks[-1]
    assert isinstance(final, Completed) and final.response.text == "Hello"
    assert final.transport_retries == 1
    assert len(no_sleep.delays) == 1 and len(served.requests) == 2


async def test_overloaded_event_after_content_ends_the_step_with_its_text(
    no_sleep: RecordingSleep,
) -> None:
    client, served = mock_client([overloaded_stream("Hel"), hello_stream()])
    seen: list[ProviderChunk] = []
    with pytest.raises(ProviderError) as caught:
        async for chunk in provider(client, no_sleep).stream(REQUEST):
            seen.append(chunk)
    assert seen == [TextChunk(text="Hel")]
    error = caught.value
    assert error.kind == "StreamErrorEvent" and error.partial_text == "Hel"
    assert error.transport_retries == 0 and len(served.requests) == 1  # never replayed twice


async def test_overloaded_events_until_the_budget_is_spent(no_sleep: RecordingSleep) -> None:
    client, served = mock_client(lambda request: overloaded_stream())
    with pytest.raises(ProviderError, match="overloaded_error: Overloaded") as caught:
        await run(provider(client, no_sleep))
    assert caught.value.transport_retries == 3 and len(served.requests) == 4


async def test_key_from_a_named_variable_is_sent_and_never_shown(
    monkeypatch: pytest.MonkeyPatch, no_sleep: RecordingSleep
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("MY_GATEWAY_KEY", TEST_KEY)
    unauthorized = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    client, served = mock_client([httpx.Response(401, json=unauthorized)])
    with pytest.raises(ProviderError) as caught:
        await run(provider(client, no_sleep, api_key_env="MY_GATEWAY_KEY"))
    assert served.requests[0].headers["x-api-key"] == TEST_KEY
    error = caught.value
    assert str(error) == "anthropic: HTTP 401: invalid x-api-key"
    assert not error.retryable and error.transport_retries == 0
    assert TEST_KEY not in repr(error.__dict__) + str(error)


async def test_missing_key_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, no_sleep: RecordingSleep
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    config = ModelConfig(provider="anthropic", name="m")
    client, served = mock_client([hello_stream()])
    p = AnthropicProvider(config, client=client, sleep=no_sleep, keyring_get=lambda s, n: None)
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY") as caught:
        await run(p)
    assert caught.value.kind == "MissingApiKey" and served.requests == []


async def test_scenario_headers_and_params_go_out_and_are_recorded_redacted(
    no_sleep: RecordingSleep,
) -> None:
    client, served = mock_client([hello_stream()])
    p = provider(
        client,
        no_sleep,
        base_url="https://gateway.example/anthropic/v1/",
        headers={
            "anthropic-version": "2099-01-01",
            "anthropic-beta": "x",
            "x-gw-token": "gw-secret-1",
        },
        params={"team": "qa"},
    )
    final = (await run(p))[-1]
    sent = served.requests[0]
    assert str(sent.url) == "https://gateway.example/anthropic/v1/messages?team=qa"
    assert sent.headers["anthropic-version"] == "2099-01-01"  # the scenario's wins
    assert sent.headers["anthropic-beta"] == "x"
    assert isinstance(final, Completed) and final.raw is not None
    recorded = json.dumps(final.raw.request)
    assert "gw-secret-1" not in recorded and TEST_KEY not in recorded


async def test_non_streaming_body_that_is_not_json(no_sleep: RecordingSleep) -> None:
    client, _ = mock_client([httpx.Response(200, content=b"<html>gateway</html>")])
    with pytest.raises(ProviderError, match="not JSON") as caught:
        await run(provider(client, no_sleep, stream=False))
    assert caught.value.kind == "MalformedResponse"


async def test_stream_answered_with_one_json_message_is_read_as_such(
    no_sleep: RecordingSleep,
) -> None:
    body = response_file("text-basic-claude3-opus").read_bytes()
    client, served = mock_client([httpx.Response(200, content=body)])
    chunks = await run(provider(client, no_sleep))
    assert served.body()["stream"] is True
    (final,) = chunks
    assert isinstance(final, Completed)
    assert final.response.text.startswith("Sure, here's a joke about OpenTelemetry")
    assert (
        final.raw is not None and final.raw.response["body"]["id"] == "msg_01TPXhkPo8jy6yQMrMhjpiAE"
    )


async def test_stream_cut_off_keeps_the_text(no_sleep: RecordingSleep) -> None:
    whole = response_file("stream-parallel-tool-use-args-split-sonnet35").read_bytes()
    cut = whole[: whole.index(b'" for you."')]
    client, _ = mock_client([httpx.Response(200, content=cut, headers=SSE)])
    with pytest.raises(ProviderError, match="cut off") as caught:
        await run(provider(client, no_sleep))
    error = caught.value
    assert error.kind == "StreamCutOff"
    assert error.partial_text.startswith("Certainly! I can help you")
    assert error.partial_text.endswith("Let me fetch that data")
