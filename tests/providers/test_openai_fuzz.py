"""Fuzzing the stream parser: any body gives chunks and a ``Completed``, or a clean
``ProviderError`` — never another exception, never a hang."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.errors import ProviderError
from inspector.core.messages import user
from inspector.core.provider import Completed
from inspector.core.records import StepRequest
from inspector.core.scenario import ModelConfig
from inspector.providers.openai import OpenAIProvider
from tests.providers.wire import replying, response_bytes

REQUEST = StepRequest(system="", messages=[user("hi")])


async def _no_sleep(_: float) -> None:
    return None


def run(body: bytes, content_type: str = "text/event-stream") -> str:
    """Streams ``body``; returns "completed" or "error" and fails the test on anything else."""

    async def go() -> str:
        handler = replying(200, body, content_type=content_type)
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            provider = OpenAIProvider(
                ModelConfig(provider="openai", name="m", stream=True), client=client,
                sleep=_no_sleep,
            )  # fmt: skip
            items = []
            try:
                async for item in provider.stream(REQUEST):
                    items.append(item)
            except ProviderError as exc:
                assert str(exc).strip() and "\n" not in str(exc)
                return "error"
            assert isinstance(items[-1], Completed)
            assert not any(isinstance(i, Completed) for i in items[:-1])
            return "completed"

    return asyncio.run(asyncio.wait_for(go(), timeout=10))


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=2000))
def test_any_bytes(body: bytes) -> None:
    run(body)


@FUZZ
@given(st.binary(max_size=500))
def test_any_bytes_as_a_non_streaming_body(body: bytes) -> None:
    run(body, content_type="application/json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(
        st.sampled_from(
            ["choices", "index", "delta", "content", "tool_calls", "function", "name",
             "arguments", "id", "usage", "finish_reason", "refusal", "reasoning", "error",
             "prompt_tokens", "message"]
        ),
        children,
        max_size=4,
    ),
    max_leaves=12,
)  # fmt: skip


@FUZZ
@given(st.lists(json_values, max_size=8), st.booleans())
def test_chunk_shaped_json(payloads: list[Any], done: bool) -> None:
    body = b"".join(b"data: %s\n\n" % json.dumps(p).encode() for p in payloads)
    run(body + (b"data: [DONE]\n\n" if done else b""))


@FUZZ
@given(st.data())
def test_recorded_stream_cut_and_corrupted(data: st.DataObject) -> None:
    body = response_bytes("openai-chat/stream-tool-call-usage-gpt4o-mini")
    cut = data.draw(st.integers(0, len(body)))
    flip = data.draw(st.integers(0, max(cut - 1, 0)))
    mangled = bytearray(body[:cut])
    if mangled:
        mangled[flip] = data.draw(st.integers(0, 255))
    run(bytes(mangled))


def test_the_whole_recording_completes() -> None:
    assert run(response_bytes("openai-chat/stream-tool-call-usage-gpt4o-mini")) == "completed"


def test_empty_stream_is_an_error() -> None:
    assert run(b"") == "error"
