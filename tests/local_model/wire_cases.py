"""Raw requests that show each quirk of llama-cpp-python's server, shared by the quirk tests
(which check the server still behaves so) and ``capture.py`` (which records the bodies into
``tests/providers/fixtures/llamacpp/`` for offline replay)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LOOKUP_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "lookup_contact",
        "description": "Find a contact's phone number by name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}
SMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
}
SYSTEM = {"role": "system", "content": "You write SMS messages. Look up the contact first."}
WRITE = [SYSTEM, {"role": "user", "content": "Tell Sam the meeting moved to 3pm."}]
# With the tool offered and greedy decoding, this prompt makes Gemma 3 270M pick the tool.
LOOK_UP = [SYSTEM, {"role": "user", "content": "Look up Sam's number."}]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "lookup_contact", "arguments": '{"name": "Sam"}'},
}
AFTER_TOOL = [{"role": "tool", "tool_call_id": "call_1", "content": "Sam Carter: +1 555 0100"}]
PINNED = {"type": "function", "function": {"name": "lookup_contact"}}


@dataclass(frozen=True)
class WireCase:
    name: str
    what: str
    body: dict[str, Any]
    status: int  # what this server answers
    streamed: bool = False
    empty_body: bool = False  # a 200 with nothing in it


def _body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "gemma-3-270m", "messages": messages, "temperature": 0, **extra}


CASES = [
    WireCase("text", "plain non-streaming text", _body(WRITE, max_tokens=16), 200),
    WireCase(
        "stream-text",
        "streaming text; stream_options.include_usage is accepted but no usage chunk comes",
        _body(WRITE, max_tokens=8, stream=True, stream_options={"include_usage": True}),
        200,
        streamed=True,
    ),
    WireCase(
        "stream-named-tool-repeated-id-name",
        "a named tool_choice streams; every tool-call chunk repeats the call's id and name",
        _body(LOOK_UP, max_tokens=32, tools=[LOOKUP_TOOL], tool_choice=PINNED, stream=True),
        200,
        streamed=True,
    ),
    WireCase(
        "auto-tool-call",
        'tool_choice "auto" without streaming: the tool call arrives, content null',
        _body(LOOK_UP, max_tokens=32, tools=[LOOKUP_TOOL], tool_choice="auto"),
        200,
    ),
    WireCase(
        "stream-auto-tool-call-empty",
        'tool_choice "auto" while streaming, the model picks the tool: 200 with an empty body',
        _body(LOOK_UP, max_tokens=32, tools=[LOOKUP_TOOL], tool_choice="auto", stream=True),
        200,
        streamed=True,
        empty_body=True,
    ),
    WireCase(
        "error-500-tool-choice-required",
        'tool_choice "required" without streaming: HTTP 500 with an empty message',
        _body(WRITE, max_tokens=32, tools=[LOOKUP_TOOL], tool_choice="required"),
        500,
    ),
    WireCase(
        "stream-tool-choice-required-empty",
        'tool_choice "required" while streaming: 200 with an empty body',
        _body(WRITE, max_tokens=32, tools=[LOOKUP_TOOL], tool_choice="required", stream=True),
        200,
        streamed=True,
        empty_body=True,
    ),
    WireCase(
        "error-500-json-schema-rejected",
        "response_format json_schema: HTTP 500 (a validation error: text or json_object only)",
        _body(
            WRITE,
            max_tokens=32,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "sms", "schema": SMS_SCHEMA},
            },
        ),
        500,
    ),
    WireCase(
        "json-object-schema",
        "response_format json_object with a schema: JSON text constrained by the schema",
        _body(WRITE, max_tokens=32, response_format={"type": "json_object", "schema": SMS_SCHEMA}),
        200,
    ),
    WireCase(
        "error-500-assistant-content-null",
        "an assistant message with tool_calls and content null: HTTP 500 (validation error)",
        _body(
            [*LOOK_UP, {"role": "assistant", "content": None, "tool_calls": [CALL]}, *AFTER_TOOL],
            max_tokens=16,
            tools=[LOOKUP_TOOL],
        ),
        500,
    ),
    WireCase(
        "assistant-content-empty",
        'the same history with content "": accepted',
        _body(
            [*LOOK_UP, {"role": "assistant", "content": "", "tool_calls": [CALL]}, *AFTER_TOOL],
            max_tokens=16,
            tools=[LOOKUP_TOOL],
        ),
        200,
    ),
    WireCase(
        "error-500-validation-unknown-role",
        "any request validation error is an HTTP 500, not a 400/422",
        _body([{"role": "narrator", "content": "x"}], max_tokens=4),
        500,
    ),
]
