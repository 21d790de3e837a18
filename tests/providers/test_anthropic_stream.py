"""The Messages API stream parser: event folding, malformed streams, and a fuzz over bytes."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.errors import ProviderError
from inspector.core.messages import user
from inspector.core.provider import (
    Completed,
    ProviderChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
)
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.anthropic import AnthropicProvider
from inspector.providers.anthropic_stream import StreamAssembler
from tests.providers.anthropic_fixtures import FIXTURES, TEST_KEY

START = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}}


def feed_all(assembler: StreamAssembler, *events: dict[str, Any]) -> list[ProviderChunk]:
    chunks: list[ProviderChunk] = []
    for event in events:
        chunks += assembler.feed(str(event.get("type", "")), json.dumps(event))
    return chunks


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": fields}


USAGE = {"output_tokens": 9}


def test_blocks_fold_into_chunks_and_the_whole_message() -> None:
    assembler = StreamAssembler()
    chunks = feed_all(
        assembler,
        START,
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="signature_delta", signature="AB"),
        delta(0, type="signature_delta", signature="CD"),
        {"type": "content_block_stop", "index": 0},
        block_start(1, {"type": "text", "text": ""}),
        {"type": "ping"},
        delta(1, type="text_delta", text="Hi"),
        delta(1, type="citations_delta", citation={}),  # unknown deltas are skipped
        block_start(2, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}),
        delta(2, type="input_json_delta", partial_json='{"a":'),
        delta(2, type="input_json_delta", partial_json=" 1}"),
        {"type": "some_future_event", "x": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": USAGE},
        {"type": "message_stop"},
    )
    assert chunks == [
        ReasoningChunk(text="hmm"),
        TextChunk(text="Hi"),
        ToolCallChunk(call_index=0, id="toolu_1", name="f"),
        ToolCallChunk(call_index=0, arguments_delta='{"a":'),
        ToolCallChunk(call_index=0, arguments_delta=" 1}"),
    ]
    assert assembler.stopped
    message = assembler.message()
    assert message["id"] == "msg_1" and message["stop_reason"] == "tool_use"
    assert message["usage"] == {"input_tokens": 3, "output_tokens": 9}
    assert message["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "ABCD"},
        {"type": "text", "text": "Hi"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}},
    ]


def test_tool_input_that_is_not_json_is_kept_as_sent() -> None:
    assembler = StreamAssembler()
    feed_all(
        assembler,
        block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"a": 1'),
    )
    assert assembler.message()["content"][0]["input"] == '{"a": 1'


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([delta(0, type="text_delta", text="x")], "before its content_block_start"),
        ([{"type": "content_block_stop", "index": 4}], "before its content_block_start"),
        ([{"type": "content_block_start", "index": "0"}], "integer 'index'"),
        ([block_start(0, {"type": "text", "text": 5})], "'text' is not a string"),
        ([{"type": "message_start"}], "without a 'message' object"),
        (
            [block_start(0, {"type": "text", "text": ""}), delta(0, type="input_json_delta")],
            "not a tool_use block",
        ),
    ],
)
def test_malformed_events_are_one_line_errors(events: list[dict[str, Any]], problem: str) -> None:
    with pytest.raises(ProviderError, match="malformed stream") as caught:
        feed_all(StreamAssembler(), *events)
    assert problem in str(caught.value)
    assert caught.value.kind == "MalformedStream"


def test_data_that_is_not_json_names_the_event() -> None:
    assembler = StreamAssembler()
    with pytest.raises(ProviderError, match="content_block_delta event whose data is not JSON"):
        assembler.feed("content_block_delta", '{"type": "content_block_delta", "ind')
    assert assembler.events == ['{"type": "content_block_delta", "ind']


def test_error_event_carries_the_text_so_far() -> None:
    assembler = StreamAssembler()
    with pytest.raises(ProviderError) as caught:
        feed_all(
            assembler,
            block_start(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="Half an ans"),
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    error = caught.value
    assert str(error) == "anthropic: error event in the stream: overloaded_error: Overloaded"
    assert error.partial_text == "Half an ans"
    assert error.retryable and error.kind == "StreamErrorEvent"


# ---- the whole path, bytes in: chunks or a clean ProviderError -----------------------------


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


async def _drain(pieces: list[bytes]) -> list[ProviderChunk]:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_Pieces(pieces)
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as client:
        model = ModelConfig(provider="anthropic", name="m", stream=True)
        provider = AnthropicProvider(model, client=client, sleep=_no_sleep)
        request = StepRequest(system="", messages=[user("hi")])
        return [chunk async for chunk in provider.stream(request)]


async def _no_sleep(seconds: float) -> None:
    pass


def _outcome(pieces: list[bytes]) -> list[ProviderChunk] | ProviderError:
    try:
        return asyncio.run(_drain(pieces))
    except ProviderError as exc:
        assert "\n" not in str(exc)
        return exc


def _recorded_streams() -> list[bytes]:
    return [p.read_bytes() for p in sorted(FIXTURES.glob("*.sse"))] or [b"event: ping\n\n"]


FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)


@FUZZ
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(min_value=0), max_size=8))
def test_any_bytes_give_chunks_or_a_clean_error(data: bytes, cuts: list[int]) -> None:
    outcome = _outcome(_split(data, cuts))
    if not isinstance(outcome, ProviderError):
        assert isinstance(outcome[-1], Completed)


@FUZZ
@given(
    stream=st.sampled_from(_recorded_streams()),
    cut=st.integers(min_value=0),
    noise=st.binary(max_size=40),
    at=st.integers(min_value=0),
    cuts=st.lists(st.integers(min_value=0), max_size=6),
)
def test_damaged_recordings_give_chunks_or_a_clean_error(
    stream: bytes, cut: int, noise: bytes, at: int, cuts: list[int]
) -> None:
    truncated = stream[: cut % (len(stream) + 1)]
    spot = at % (len(truncated) + 1)
    damaged = truncated[:spot] + noise + truncated[spot:]
    outcome = _outcome(_split(damaged, cuts))
    if not isinstance(outcome, ProviderError):
        assert isinstance(outcome[-1], Completed)


@FUZZ
@given(stream=st.sampled_from(_recorded_streams()), cuts=st.lists(st.integers(0), max_size=20))
def test_recordings_split_anywhere_parse_the_same(stream: bytes, cuts: list[int]) -> None:
    whole = _outcome([stream])
    split = _outcome(_split(stream, cuts))
    assert not isinstance(whole, ProviderError) and not isinstance(split, ProviderError)
    assert whole == split
