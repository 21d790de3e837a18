"""The scripted model: one entry per call, streamed in pieces, deterministic ids and usage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import ValidationError

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall, assistant, tool_result, user
from inspector.core.provider import (
    Completed,
    Provider,
    ProviderChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
)
from inspector.core.records import StepRequest, StepResponse, ToolSpec, Usage
from inspector.core.scenario import ScriptEntry
from inspector.providers import scripted
from inspector.providers.scripted import ScriptedProvider

REQUEST = StepRequest(system="sys", messages=[user("hi")])  # 3 + 2 chars -> 2 input tokens


async def collect(provider: Provider, request: StepRequest = REQUEST) -> list[ProviderChunk]:
    return [chunk async for chunk in provider.stream(request)]


async def respond(provider: Provider, request: StepRequest = REQUEST) -> StepResponse:
    chunks = await collect(provider, request)
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert last.raw is None
    assert not any(isinstance(c, Completed) for c in chunks[:-1])
    return last.response


def test_public_surface() -> None:
    assert scripted.__all__ == ["ScriptFunction", "ScriptedProvider"]
    provider: Provider = ScriptedProvider([])
    assert provider.name == "scripted"


def test_rejects_an_unknown_output_mode() -> None:
    with pytest.raises(ValueError, match="output_mode"):
        ScriptedProvider([], output_mode="json")  # type: ignore[arg-type]


async def test_text_is_streamed_word_by_word() -> None:
    provider = ScriptedProvider([ScriptEntry(text="Hi Sam, the meeting  moved.\n")])
    chunks = await collect(provider)
    assert chunks[:-1] == [
        TextChunk(text="Hi "),
        TextChunk(text="Sam, "),
        TextChunk(text="the "),
        TextChunk(text="meeting  "),
        TextChunk(text="moved.\n"),
    ]
    assert chunks[-1] == Completed(
        response=StepResponse(
            text="Hi Sam, the meeting  moved.\n",
            finish_reason="stop",
            usage=Usage(input_tokens=2, output_tokens=7),  # 28 chars
        )
    )


async def test_leading_and_only_whitespace_survive_streaming() -> None:
    provider = ScriptedProvider([{"text": "  two words"}, {"text": " \n "}])
    first = await collect(provider)
    assert [c.text for c in first if isinstance(c, TextChunk)] == ["  two ", "words"]
    second = await collect(provider)
    assert [c.text for c in second if isinstance(c, TextChunk)] == [" \n "]


async def test_entry_finish_reason_overrides_the_default() -> None:
    provider = ScriptedProvider([{"text": "cut off mid", "finish_reason": "length"}])
    response = await respond(provider)
    assert (response.text, response.finish_reason) == ("cut off mid", "length")


async def test_tool_calls_stream_id_and_name_then_argument_pieces() -> None:
    entry = {
        "tool_calls": [
            {"name": "lookup_contact", "arguments": {"name": "Sam"}},
            {"name": "send_sms", "arguments": {"to": "+1 555"}, "id": "sms-1"},
        ]
    }
    chunks = await collect(ScriptedProvider([entry]))
    assert chunks[:-1] == [
        ToolCallChunk(call_index=0, id="call_1_0", name="lookup_contact"),
        ToolCallChunk(call_index=0, arguments_delta='{"name"'),
        ToolCallChunk(call_index=0, arguments_delta=': "Sam"}'),
        ToolCallChunk(call_index=1, id="sms-1", name="send_sms"),
        ToolCallChunk(call_index=1, arguments_delta='{"to": "'),
        ToolCallChunk(call_index=1, arguments_delta='+1 555"}'),
    ]
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert last.response == StepResponse(
        text="",
        tool_calls=[
            ToolCall(id="call_1_0", name="lookup_contact", arguments={"name": "Sam"}),
            ToolCall(id="sms-1", name="send_sms", arguments={"to": "+1 555"}),
        ],
        finish_reason="tool_calls",
        usage=Usage(input_tokens=2, output_tokens=8),  # 15 + 16 argument chars
    )


async def test_text_comes_before_tool_calls() -> None:
    entry = {"text": "Looking up.", "tool_calls": [{"name": "lookup_contact"}]}
    chunks = await collect(ScriptedProvider([entry]))
    assert chunks[:-1] == [
        TextChunk(text="Looking "),
        TextChunk(text="up."),
        ToolCallChunk(call_index=0, id="call_1_0", name="lookup_contact"),
        ToolCallChunk(call_index=0, arguments_delta="{"),
        ToolCallChunk(call_index=0, arguments_delta="}"),
    ]
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert last.response.text == "Looking up."
    assert last.response.tool_calls == [ToolCall(id="call_1_0", name="lookup_contact")]
    assert last.response.finish_reason == "tool_calls"


async def test_string_arguments_are_parsed_like_a_wire_payload() -> None:
    entry = {
        "tool_calls": [
            {"name": "a", "arguments": '{"x": 1}'},
            {"name": "b", "arguments": "{not json"},
            {"name": "c", "arguments": "[1, 2]"},
        ]
    }
    chunks = await collect(ScriptedProvider([entry]))
    deltas: dict[int, str] = {}
    for chunk in chunks:
        if isinstance(chunk, ToolCallChunk):
            deltas[chunk.call_index] = deltas.get(chunk.call_index, "") + chunk.arguments_delta
    assert deltas == {0: '{"x": 1}', 1: "{not json", 2: "[1, 2]"}
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert [c.arguments for c in last.response.tool_calls] == [{"x": 1}, "{not json", "[1, 2]"]


async def test_generated_ids_are_unique_across_the_turn() -> None:
    call = {"tool_calls": [{"name": "t"}, {"name": "t"}]}
    provider = ScriptedProvider([call, call, {"text": "done"}])
    first = await respond(provider)
    second = await respond(provider)
    third = await respond(provider)
    ids = [c.id for c in first.tool_calls + second.tool_calls]
    assert ids == ["call_1_0", "call_1_1", "call_2_0", "call_2_1"]
    assert third.tool_calls == []
    assert provider.calls == 3


async def test_empty_entry_has_no_content_and_no_output_tokens() -> None:
    chunks = await collect(ScriptedProvider([{"empty": True}]))
    assert chunks == [
        Completed(
            response=StepResponse(
                text="", finish_reason="stop", usage=Usage(input_tokens=2, output_tokens=0)
            )
        )
    ]


@pytest.mark.parametrize(
    ("final_tool", "expected_name"), [(None, "final_answer"), ("final_answer_1", "final_answer_1")]
)
async def test_final_in_tool_mode_is_a_final_answer_tool_call(
    final_tool: str | None, expected_name: str
) -> None:
    provider = ScriptedProvider(
        [{"final": {"body": "Moved to 3pm"}}], final_tool=final_tool, output_mode="tool"
    )
    chunks = await collect(provider)
    assert chunks[0] == ToolCallChunk(call_index=0, id="call_1_0", name=expected_name)
    assert all(isinstance(c, ToolCallChunk) for c in chunks[:-1])
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert last.response.text == ""
    assert last.response.tool_calls == [
        ToolCall(id="call_1_0", name=expected_name, arguments={"body": "Moved to 3pm"})
    ]
    assert last.response.finish_reason == "tool_calls"


async def test_final_in_tool_mode_follows_real_tool_calls() -> None:
    entry = {"tool_calls": [{"name": "lookup_contact"}], "final": {"body": "x"}}
    provider = ScriptedProvider([entry], final_tool="final_answer", output_mode="tool")
    response = await respond(provider)
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_1_0", "lookup_contact", {}),
        ("call_1_1", "final_answer", {"body": "x"}),
    ]


async def test_a_non_object_final_in_tool_mode_is_sent_as_raw_json() -> None:
    provider = ScriptedProvider([{"final": [1, "two"]}], output_mode="tool")
    response = await respond(provider)
    assert response.tool_calls == [
        ToolCall(id="call_1_0", name="final_answer", arguments='[1, "two"]')
    ]


@pytest.mark.parametrize("mode", ["native", "prompted", None])
async def test_final_in_text_modes_is_json_text(mode: Any) -> None:
    final = {"body": "Café at 3pm", "urgent": False}
    provider = ScriptedProvider([{"final": final}], final_tool="final_answer", output_mode=mode)
    chunks = await collect(provider)
    expected = '{"body": "Café at 3pm", "urgent": false}'
    pieces = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert len(pieces) > 1
    assert "".join(pieces) == expected
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert last.response.text == expected
    assert json.loads(last.response.text) == final
    assert last.response.tool_calls == []
    assert last.response.finish_reason == "stop"


async def test_final_in_text_mode_follows_the_entry_text() -> None:
    provider = ScriptedProvider([{"text": "Here: ", "final": {"a": 1}}], output_mode="prompted")
    assert (await respond(provider)).text == 'Here: {"a": 1}'


async def test_refusal() -> None:
    chunks = await collect(ScriptedProvider([{"refusal": "I can't help with that."}]))
    assert chunks == [
        Completed(
            response=StepResponse(
                text="",
                finish_reason="stop",
                refusal="I can't help with that.",
                usage=Usage(input_tokens=2, output_tokens=6),  # 23 chars
            )
        )
    ]


async def test_reasoning_streams_before_the_text() -> None:
    provider = ScriptedProvider([{"reasoning": "User wants SMS.", "text": "Hi Sam"}])
    chunks = await collect(provider)
    assert chunks[:-1] == [
        ReasoningChunk(text="User "),
        ReasoningChunk(text="wants "),
        ReasoningChunk(text="SMS."),
        TextChunk(text="Hi "),
        TextChunk(text="Sam"),
    ]
    last = chunks[-1]
    assert isinstance(last, Completed)
    assert (last.response.reasoning, last.response.text) == ("User wants SMS.", "Hi Sam")


async def test_error_entry_raises_a_provider_error() -> None:
    provider = ScriptedProvider([{"error": "upstream 503"}])
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert str(info.value) == "upstream 503"
    assert info.value.kind == "ScriptedError"
    assert info.value.retryable is False
    assert info.value.partial_text == ""


async def test_error_after_partial_text_breaks_the_stream_off() -> None:
    provider = ScriptedProvider([{"text": "Hi Sam", "error": "connection reset"}])
    received: list[ProviderChunk] = []
    with pytest.raises(ProviderError, match=r"^connection reset$") as info:
        async for chunk in provider.stream(REQUEST):
            received.append(chunk)
    assert received == [TextChunk(text="Hi "), TextChunk(text="Sam")]
    assert info.value.partial_text == "Hi Sam"


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "scripted model: script exhausted at call 1 (the script has 0 entries)"),
        ([{"text": "a"}], "scripted model: script exhausted at call 2 (the script has 1 entry)"),
        (
            [{"text": "a"}, {"empty": True}],
            "scripted model: script exhausted at call 3 (the script has 2 entries)",
        ),
    ],
)
async def test_exhausted_script(entries: list[dict[str, Any]], message: str) -> None:
    provider = ScriptedProvider(entries)
    for _ in entries:
        await respond(provider)
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert str(info.value) == message
    assert info.value.kind == "ScriptExhausted"


async def test_callable_script_gets_request_and_call_index() -> None:
    seen: list[tuple[StepRequest, int]] = []

    def script(request: StepRequest, index: int) -> ScriptEntry | dict[str, Any] | str:
        seen.append((request, index))
        if index == 0:
            return {"tool_calls": [{"name": "lookup_contact", "arguments": {"name": "Sam"}}]}
        if index == 1:
            return ScriptEntry(text="from an entry", finish_reason="length")
        return f"answer {index} to {request.messages[-1].content}"

    provider = ScriptedProvider(script)
    first = await respond(provider)
    second = await respond(provider)
    later = StepRequest(system="", messages=[user("hello")])
    third = await respond(provider, later)

    assert [index for _, index in seen] == [0, 1, 2]
    assert seen[0][0] is REQUEST
    assert seen[2][0] is later
    assert first.tool_calls == [
        ToolCall(id="call_1_0", name="lookup_contact", arguments={"name": "Sam"})
    ]
    assert (second.text, second.finish_reason) == ("from an entry", "length")
    assert (third.text, third.finish_reason) == ("answer 2 to hello", "stop")


async def test_callable_returning_an_invalid_entry_is_a_provider_error() -> None:
    provider = ScriptedProvider(lambda request, index: {"txt": "typo"})
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "ScriptInvalid"
    assert str(info.value).startswith("scripted model: invalid entry at call 1: txt ")
    assert "\n" not in str(info.value)


async def test_callable_that_raises_is_a_provider_error() -> None:
    def script(request: StepRequest, index: int) -> str:
        raise KeyError("no entry")

    with pytest.raises(ProviderError) as info:
        await collect(ScriptedProvider(script))
    assert str(info.value) == (
        "scripted model: the script function failed at call 1: KeyError: 'no entry'"
    )
    assert info.value.kind == "ScriptedError"
    assert isinstance(info.value.__cause__, KeyError)


async def test_usage_given_is_used() -> None:
    provider = ScriptedProvider(
        [
            {"text": "hi", "usage": {"input_tokens": 1200, "output_tokens": 35}},
            {"text": "hi", "usage": {"output_tokens": 500}},
        ]
    )
    assert (await respond(provider)).usage == Usage(input_tokens=1200, output_tokens=35)
    # A partial usage overrides only its keys; the rest is estimated.
    assert (await respond(provider)).usage == Usage(input_tokens=2, output_tokens=500)


@pytest.mark.parametrize(
    ("usage", "loc", "problem"),
    [
        ({"prompt_tokens": 3}, ("usage", "prompt_tokens"), "extra_forbidden"),
        ({"input_tokens": -3}, ("usage", "input_tokens"), "greater_than_equal"),
    ],
)
def test_invalid_usage_is_rejected_when_the_script_is_read(
    usage: dict[str, int], loc: tuple[str, ...], problem: str
) -> None:
    with pytest.raises(ValidationError) as info:
        ScriptedProvider([{"text": "hi", "usage": usage}])
    [error] = info.value.errors()
    assert (error["loc"], error["type"]) == (loc, problem)


async def test_invalid_usage_from_a_callable_is_a_provider_error() -> None:
    provider = ScriptedProvider(
        lambda request, index: {"text": "hi", "usage": {"prompt_tokens": 3}}
    )
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert info.value.kind == "ScriptInvalid"
    assert str(info.value).startswith(
        "scripted model: invalid entry at call 1: usage.prompt_tokens Extra inputs are not "
        "permitted"
    )


async def test_usage_is_estimated_from_request_and_output() -> None:
    call = ToolCall(id="c1", name="lookup_contact", arguments={"name": "Sam"})  # 15 chars
    messages: list[Message] = [
        user("Tell Sam"),  # 8
        assistant(tool_calls=(call,)),  # 15
        tool_result("c1", "Sam: +1 555 0100", name="lookup_contact"),  # 16
    ]
    tool = ToolSpec(
        name="lookup_contact",  # 14
        description="Find a contact",  # 14
        parameters={"type": "object"},  # 18
    )
    request = StepRequest(
        system="You write SMS.",  # 14
        messages=messages,
        tools=[tool],
        response_format={"type": "json"},  # 16
    )
    entry = {"text": "Hi Sam", "tool_calls": [{"name": "send", "arguments": {"a": 1}}]}
    provider = ScriptedProvider([entry, entry])
    usage = (await respond(provider, request)).usage
    # input: 14 + 8 + 15 + 16 + (14 + 14 + 18) + 16 = 115 -> 29; output: 6 + 8 = 14 -> 4
    assert usage == Usage(input_tokens=29, output_tokens=4)

    # The next request shares the message objects (cached sizes) and adds one message.
    longer = request.model_copy(update={"messages": [*messages, user("thanks")]})  # +6 = 121
    assert (await respond(provider, longer)).usage == Usage(input_tokens=31, output_tokens=4)


async def test_output_tokens_round_up() -> None:
    provider = ScriptedProvider([{"text": "a"}, {"text": "abcd"}, {"text": "abcde"}])
    assert [(await respond(provider)).usage.output_tokens for _ in range(3)] == [1, 1, 2]


async def test_no_delay_never_yields_to_the_event_loop() -> None:
    ran = False

    def mark() -> None:
        nonlocal ran
        ran = True

    asyncio.get_running_loop().call_soon(mark)
    chunks = await collect(ScriptedProvider([{"text": "a b c", "tool_calls": [{"name": "t"}]}]))
    assert len(chunks) == 7
    assert ran is False  # the whole stream ran without suspending once


async def test_delay_spaces_out_every_item() -> None:
    loop = asyncio.get_running_loop()
    provider = ScriptedProvider([{"text": "one two three", "delay_ms": 30}])
    start = loop.time()
    arrivals: list[tuple[ProviderChunk, float]] = []
    async for chunk in provider.stream(REQUEST):
        arrivals.append((chunk, loop.time() - start))
    assert [c for c, _ in arrivals[:-1]] == [
        TextChunk(text="one "),
        TextChunk(text="two "),
        TextChunk(text="three"),
    ]
    assert isinstance(arrivals[-1][0], Completed)
    # Each of the 4 items (3 text chunks + Completed) waits 30 ms after the previous one.
    for position, (_, at) in enumerate(arrivals, start=1):
        assert at >= position * 0.030 * 0.9


async def test_delay_comes_before_an_error() -> None:
    loop = asyncio.get_running_loop()
    provider = ScriptedProvider([{"error": "slow failure", "delay_ms": 40}])
    start = loop.time()
    with pytest.raises(ProviderError, match=r"^slow failure$"):
        await collect(provider)
    assert loop.time() - start >= 0.040 * 0.9


async def test_cancelling_the_consumer_mid_stream_propagates() -> None:
    provider = ScriptedProvider([{"text": "one two three four", "delay_ms": 100}])
    received: list[ProviderChunk] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for chunk in provider.stream(REQUEST):
            received.append(chunk)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert received == [TextChunk(text="one ")]
    assert provider.calls == 1
