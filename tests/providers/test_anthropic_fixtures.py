"""Every recorded Anthropic exchange replayed through ``httpx.MockTransport``: the parsed response
matches the recording, and the request the adapter builds for the same inputs is the recorded one
(up to what a scenario cannot express; see ``anthropic_fixtures.INEXPRESSIBLE``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall, assistant
from inspector.core.provider import (
    Completed,
    ProviderChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
)
from inspector.core.records import StepRequest
from inspector.providers.anthropic import AnthropicProvider
from tests.providers.anthropic_fixtures import (
    TEST_KEY,
    comparable,
    engine_inputs,
    mock_client,
    names,
    recorded_request,
    reply_for,
)


@dataclass
class Expect:
    """What the recording says. ``text`` is exact unless ``text_start`` / ``text_end`` are used."""

    usage: tuple[int, int]
    finish: str
    text: str | None = None
    text_start: str = ""
    text_end: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    refusal_start: str | None = None
    reasoning_start: str | None = None
    reasoning_end: str = ""
    thinking: list[tuple[str, str, str]] = field(default_factory=list)  # type, opaque start, end


THINKING_SIGNATURE = "ErUBCkYIARgCIkBSkP4zKeRwAJMzBdJ123VfDVFJ6e7LwjPRE+0aZeVMjPA45uOsBfFD0trvjU1G"

EXPECTED: dict[str, Expect] = {
    "text-basic-claude3-opus": Expect(
        usage=(17, 220),
        finish="stop",
        text_start="Sure, here's a joke about OpenTelemetry:\n\nWhy did the developer adopt",
        text_end="trace their steps and meter their progress in real life.",
    ),
    "stream-text-haiku45": Expect(usage=(10, 4), finish="stop", text="Hello"),
    "stream-parallel-tool-use-args-split-sonnet35": Expect(
        usage=(506, 153),
        finish="tool_calls",
        text="Certainly! I can help you with that information. To get the weather and current "
        "time in San Francisco, I'll need to use two separate functions. Let me fetch that "
        "data for you.",
        calls=[
            ToolCall(
                id="toolu_014x5X91kx3fvdhpLvwXZWE2",
                name="get_weather",
                arguments={"location": "San Francisco, CA", "unit": "celsius"},
            ),
            ToolCall(
                id="toolu_0121kXsENLvoDZ72LCuAnCCz",
                name="get_time",
                arguments={"timezone": "America/Los_Angeles"},
            ),
        ],
    ),
    "stream-parallel-tool-use-no-args-haiku45": Expect(
        usage=(542, 62),
        finish="tool_calls",
        text="",
        calls=[
            ToolCall(id="toolu_01LtHJmixrs9NcWQkK8hu8hj", name="pelican_name_generator"),
            ToolCall(id="toolu_01N8a4jWyf116qKTMqKKmjyt", name="pelican_name_generator"),
        ],
    ),
    "tool-choice-any-sonnet45": Expect(
        usage=(655, 38),
        finish="tool_calls",
        text="",
        calls=[
            ToolCall(
                id="toolu_01Dxp8hdnkA8bsrVJJ8LB9q1", name="get_weather", arguments={"city": "Paris"}
            )
        ],
    ),
    "tool-choice-none-sonnet45": Expect(
        usage=(567, 16), finish="stop", text="Hello! 👋 How can I help you today?"
    ),
    "json-schema-output-config-sonnet45": Expect(
        usage=(196, 19),
        finish="stop",
        text='{"city":"London","country":"United Kingdom","population":9002488}',
    ),
    "stream-json-schema-output-config-sonnet45": Expect(
        usage=(230, 94),
        finish="stop",
        text_start='{"name": "Biscuit", "age": 4, "bio": "Biscuit is a golden retriever',
        text_end='stealing socks to add to his secret collection under the bed."}',
    ),
    "thinking-claude37": Expect(
        usage=(52, 215),
        finish="stop",
        text="The letter 'r' appears 3 times in the word \"strawberry\".",
        reasoning_start="Let me count the number of times the letter 'r' appears",
        reasoning_end="So the letter 'r' appears 3 times in the word \"strawberry\".",
        thinking=[("thinking", THINKING_SIGNATURE, "cQi6fSA==")],
    ),
    "stream-thinking-signature-haiku45": Expect(
        usage=(46, 133),
        finish="stop",
        text="1. **Pouch** - references their iconic bill pouch\n"
        '2. **Pelé** - playful take on "pelican"',
        reasoning_start="The user wants two names for a pet pelican, and they want me to be brief.",
        reasoning_end="- Wing\n\nLet me give two brief, catchy names:",
        thinking=[
            (
                "thinking",
                "EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+",
                "vi3oIv+LDpUImrMckjemNZmBeGcEZQ4FjZiGAE=",
            )
        ],
    ),
    "stream-redacted-thinking-sonnet45": Expect(
        usage=(92, 189),
        finish="stop",
        text_start="I notice that you've sent what appears to be some kind of test string",
        text_end="How can I assist you today with a legitimate task or question?",
        thinking=[
            (
                "redacted_thinking",
                "EqkECkYIBxgCKkA8AZ4noDfV5VcOJe",
                "Wabu+O/00tD/X67EWkkWuR0AhDIXXjpot45vnBd4ewJ/hgB",
            ),
            (
                "redacted_thinking",
                "EtgBCkYIBxgCKkDQfGkwzflEJP5asG3o",
                "1JtZqkxx7vMT/PXtHDhm9jkDZ2k/6RjRRFuab/DBV3yRYdZ1J0GAE=",
            ),
        ],
    ),
    "stream-refusal-stop-details": Expect(
        usage=(97, 0),
        finish="content_filter",
        text="",
        refusal_start="This request was blocked as it seems to violate Anthropic's Terms",
    ),
    "stream-prefill-stop-sequence-haiku45": Expect(
        usage=(16, 28),
        finish="stop",
        text='\ndef pelican():\n    return "A large waterbird with a long bill and a throat pouch '
        'for catching fish."\n',
    ),
}

ERRORS = {
    "error-400-invalid-request": (
        400,
        "This model does not support effort level 'xhigh'. Supported levels: high, low, max, "
        "medium.",
    ),
    "error-404-not-found-model": (404, "model: claude-sonet-4-5"),
}


def test_every_recording_has_an_expectation() -> None:
    recorded = names()
    if not recorded:
        pytest.skip("wire fixtures not found")
    assert sorted(recorded) == sorted([*EXPECTED, *ERRORS])


async def replay(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[ProviderChunk], dict[str, Any], AnthropicProvider]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    request, model = engine_inputs(recorded_request(name))
    client, served = mock_client([reply_for(name)])
    provider = AnthropicProvider(model, client=client)
    chunks = [chunk async for chunk in provider.stream(request)]
    await client.aclose()
    return chunks, served.body(), provider


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_recorded_response_is_parsed_as_recorded(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _, _ = await replay(name, monkeypatch)
    expect = EXPECTED[name]
    final = chunks[-1]
    assert isinstance(final, Completed)
    assert all(not isinstance(c, Completed) for c in chunks[:-1])
    response = final.response
    if expect.text is not None:
        assert response.text == expect.text
    assert response.text.startswith(expect.text_start)
    assert response.text.endswith(expect.text_end)
    assert response.tool_calls == expect.calls
    assert (response.usage.input_tokens, response.usage.output_tokens) == expect.usage
    assert response.finish_reason == expect.finish
    if expect.refusal_start is None:
        assert response.refusal is None
    else:
        assert response.refusal is not None
        assert response.refusal.startswith(expect.refusal_start)
    if expect.reasoning_start is None:
        assert response.reasoning is None
    else:
        assert response.reasoning is not None
        assert response.reasoning.startswith(expect.reasoning_start)
        assert response.reasoning.endswith(expect.reasoning_end)

    streamed = recorded_request(name).get("stream", False)
    pieces = chunks[:-1]
    assert bool(pieces) == (streamed and bool(response.text or response.tool_calls))
    if streamed:  # what streamed adds up to the response
        assert "".join(c.text for c in pieces if isinstance(c, TextChunk)) == response.text
        reasoning = "".join(c.text for c in pieces if isinstance(c, ReasoningChunk))
        assert reasoning == (response.reasoning or "")
        for i, call in enumerate(response.tool_calls):
            mine = [c for c in pieces if isinstance(c, ToolCallChunk) and c.call_index == i]
            assert (mine[0].id, mine[0].name) == (call.id, call.name)
            arguments = "".join(c.arguments_delta for c in mine)
            assert json.loads(arguments or "{}") == call.arguments


# The refusal has no content at all: its assistant turn is left out (see test_anthropic_wire).
WITH_CONTENT = sorted(n for n, e in EXPECTED.items() if e.text != "" or e.calls)


@pytest.mark.parametrize("name", WITH_CONTENT)
async def test_thinking_blocks_keep_their_signatures(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, _, provider = await replay(name, monkeypatch)
    response = chunks[-1].response  # type: ignore[union-attr]
    follow_up = StepRequest(
        system="",
        messages=[
            Message(role="user", content="q"),
            assistant(response.text or None, tuple(response.tool_calls)),  # as the loop does
            Message(role="user", content="and?"),
        ],
    )
    assistant_turn = provider.request_body(follow_up)["messages"][1]
    kept = [b for b in assistant_turn["content"] if b["type"] in ("thinking", "redacted_thinking")]
    expected = EXPECTED[name].thinking
    assert [b["type"] for b in kept] == [kind for kind, _, _ in expected]
    for block, (kind, start, end) in zip(kept, expected, strict=True):
        opaque = block["signature"] if kind == "thinking" else block["data"]
        assert opaque.startswith(start) and opaque.endswith(end)
    # thinking goes first in its assistant turn, as the API requires
    assert [b["type"] for b in assistant_turn["content"][: len(kept)]] == [
        k for k, _, _ in expected
    ]


@pytest.mark.parametrize("name", names())
async def test_built_request_is_the_recorded_request(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    request, model = engine_inputs(recorded_request(name))
    client, served = mock_client([reply_for(name)])
    provider = AnthropicProvider(model, client=client)
    try:
        async for _ in provider.stream(request):
            pass
    except ProviderError:
        assert name in ERRORS
    sent = served.requests[0]
    assert sent.url.path == "/v1/messages"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["x-api-key"] == TEST_KEY
    assert "authorization" not in sent.headers
    assert comparable(served.body()) == comparable(recorded_request(name))


@pytest.mark.parametrize("name", sorted(ERRORS))
async def test_recorded_error_is_shown_as_sent(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    status, message = ERRORS[name]
    with pytest.raises(ProviderError) as caught:
        await replay(name, monkeypatch)
    error = caught.value
    assert error.status == status
    assert not error.retryable
    assert error.transport_retries == 0
    assert str(error) == f"anthropic: HTTP {status}: {message}"
    assert "\n" not in str(error)


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_raw_record_has_the_bodies_and_no_key(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, sent_body, _ = await replay(name, monkeypatch)
    final = chunks[-1]
    assert isinstance(final, Completed) and final.raw is not None
    raw = final.raw.model_dump(mode="json")
    assert raw["request"]["body"] == sent_body
    assert raw["request"]["headers"]["x-api-key"] == "[redacted]"
    assert TEST_KEY not in json.dumps(raw)
    response = raw["response"]
    assert response["status"] == 200
    if recorded_request(name).get("stream"):
        types = [event["type"] for event in response["events"]]
        assert types[0] == "message_start" and types[-1] == "message_stop"
    else:
        assert response["body"]["type"] == "message"
