"""The pure mapping between the engine's messages and the Messages API, both directions."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall, assistant, system, tool_result, user
from inspector.core.records import StepRequest, ToolSpec
from inspector.core.scenario import ModelConfig
from inspector.providers.anthropic_wire import (
    DEFAULT_MAX_TOKENS,
    build_body,
    error_message,
    finish_reason,
    output_config,
    parse_message,
    thinking_keys,
    tool_choice,
    usage_of,
    wire_messages,
)

CALL_A = ToolCall(id="toolu_a", name="lookup", arguments={"q": "x"})
CALL_B = ToolCall(id="toolu_b", name="clock", arguments={})


@pytest.mark.parametrize(
    ("engine", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ({"type": "function", "name": "final_answer"}, {"type": "tool", "name": "final_answer"}),
        (None, None),
    ],
)
def test_tool_choice_mapping(engine: Any, wire: Any) -> None:
    assert tool_choice(engine) == wire


@pytest.mark.parametrize("bad", ["sometimes", {"type": "function"}])
def test_tool_choice_without_an_equivalent_is_a_clear_error(bad: Any) -> None:
    with pytest.raises(ProviderError, match="tool_choice"):
        tool_choice(bad)


def test_consecutive_tool_results_become_one_user_turn() -> None:
    history = [
        user("weather and time?"),
        assistant("Let me check.", (CALL_A, CALL_B)),
        tool_result("toolu_a", "sunny", name="lookup"),
        tool_result("toolu_b", "", name="clock"),
        user("thanks"),
    ]
    leading, turns = wire_messages(history)
    assert leading == []
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "weather and time?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"q": "x"}},
                {"type": "tool_use", "id": "toolu_b", "name": "clock", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_b"},  # empty content left out
                {"type": "text", "text": "thanks"},
            ],
        },
    ]


def test_tool_results_open_their_user_turn_even_when_text_came_first() -> None:
    # An empty assistant message between them is left out, so the two user sides merge.
    history = [
        assistant(None, (CALL_A,)),
        user("feedback"),
        assistant(""),
        tool_result("toolu_a", "r"),
    ]
    _, turns = wire_messages(history)
    assert [b["type"] for b in turns[1]["content"]] == ["tool_result", "text"]


def test_leading_system_messages_join_the_system_prompt_later_ones_stay_in_place() -> None:
    history = [system("Be brief."), user("hi"), assistant("Hello"), system("Plain text only.")]
    leading, turns = wire_messages(history)
    assert leading == ["Be brief."]
    assert turns[-1] == {"role": "user", "content": [{"type": "text", "text": "Plain text only."}]}
    body = build_body(
        StepRequest(system="You are terse.", messages=history),
        ModelConfig(provider="anthropic", name="m"),
        stream=False,
    )
    assert body["system"] == "You are terse.\n\nBe brief."


def test_non_object_tool_arguments_are_sent_as_an_empty_input() -> None:
    calls = (
        ToolCall(id="t1", name="f", arguments="not json"),
        ToolCall(id="t2", name="f", arguments='{"a": 1}'),
        ToolCall(id="t3", name="f", arguments="[1, 2]"),
    )
    _, turns = wire_messages([user("go"), assistant(None, calls)])
    assert [b["input"] for b in turns[1]["content"]] == [{}, {"a": 1}, {}]


def test_remembered_thinking_goes_first_in_its_assistant_turn() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig=="}
    memory = {key: [thinking] for key in thinking_keys("Let me check.", [CALL_A, CALL_B])}
    # The engine may keep only some of a step's calls (the final-answer tool is stripped).
    _, turns = wire_messages([user("q"), assistant("Let me check.", (CALL_B,))], memory)
    assert turns[1]["content"][0] == thinking
    assert [b["type"] for b in turns[1]["content"]] == ["thinking", "text", "tool_use"]
    _, other = wire_messages([user("q"), assistant("Something else")], memory)
    assert [b["type"] for b in other[1]["content"]] == ["text"]


def test_body_defaults_and_options() -> None:
    request = StepRequest(
        system="",
        messages=[user("hi")],
        tools=[ToolSpec(name="f", description="does f")],
        tool_choice="required",
    )
    model = ModelConfig(provider="anthropic", name="claude-x", temperature=0.0)
    body = build_body(request, model, stream=True)
    assert body == {
        "model": "claude-x",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "tools": [
            {
                "name": "f",
                "description": "does f",
                "input_schema": {"type": "object", "properties": {}},
            }
        ],
        "tool_choice": {"type": "any"},
        "temperature": 0.0,
        "stream": True,
    }
    capped = ModelConfig(provider="anthropic", name="claude-x", max_tokens=50)
    no_tools = StepRequest(system="s", messages=[user("hi")], tool_choice="none")
    body = build_body(no_tools, capped, stream=False)
    assert body["max_tokens"] == 50
    assert "tool_choice" not in body and "tools" not in body and "temperature" not in body


def test_native_output_maps_to_output_config() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "final_answer", "schema": schema}}
    assert output_config(fmt) == {"format": {"type": "json_schema", "schema": schema}}
    with pytest.raises(ProviderError, match=r'use policy\.output_mode = "tool"'):
        output_config({"type": "json_object"})


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
        ("pause_turn", "pause_turn"),
        (None, None),
    ],
)
def test_stop_reason_mapping(stop: str | None, finish: str | None) -> None:
    assert finish_reason(stop) == finish


def test_usage_counts_cached_prompt_tokens_as_input() -> None:
    usage = usage_of(
        {
            "input_tokens": 10,
            "cache_creation_input_tokens": 5,
            "cache_read_input_tokens": 100,
            "output_tokens": 7,
            "service_tier": "standard",
        }
    )
    assert (usage.input_tokens, usage.output_tokens) == (115, 7)
    assert usage_of(None).input_tokens == 0
    assert usage_of({"input_tokens": None, "output_tokens": True}).output_tokens == 0


def test_refusal_without_details_still_says_it_refused() -> None:
    parsed = parse_message({"content": [], "stop_reason": "refusal"})
    assert parsed.response.refusal == "the model refused to answer (stop_reason refusal)"
    assert parsed.response.finish_reason == "content_filter"
    with_text = parse_message(
        {"content": [{"type": "text", "text": "I can't help."}], "stop_reason": "refusal"}
    )
    assert with_text.response.refusal == "I can't help."


def test_unknown_blocks_are_skipped_bad_ones_are_errors() -> None:
    parsed = parse_message(
        {
            "content": [
                {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
                {"type": "text", "text": "ok"},
            ],
            "stop_reason": "end_turn",
        }
    )
    assert parsed.response.text == "ok" and parsed.response.tool_calls == []
    for body in ({"no": "content"}, {"content": ["text"]}, {"content": [{"type": "tool_use"}]}):
        with pytest.raises(ProviderError, match="unexpected response"):
            parse_message(body)


def test_error_message_is_the_envelope_in_one_line() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Over\nloaded"}}
    assert error_message(body) == "overloaded_error: Over loaded"
    assert error_message({"type": "error"}) is None
    assert error_message("nope") is None


def test_messages_are_not_mutated_and_bodies_share_no_thinking_dicts() -> None:
    block = {"type": "thinking", "thinking": "t", "signature": "s"}
    memory = {"text:a": [block]}
    history = [user("q"), Message(role="assistant", content="a")]
    _, turns = wire_messages(history, memory)
    turns[1]["content"][0]["signature"] = "changed"
    assert block["signature"] == "s"
