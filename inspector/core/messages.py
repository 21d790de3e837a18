"""Chat messages in the chat-completions shape:
``{role, content, tool_calls?, tool_call_id?, name?}``.

Messages are frozen so one instance can be shared by every request that repeats it: a step's
request holds references to the same objects, never copies (per-step cost stays flat).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from inspector.core.compact_json import dumps_spaced

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """One tool call the model asked for. ``arguments`` is the parsed JSON object, or the raw
    string when the model sent something that is not a JSON object."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return dumps_spaced(self.arguments)


class Message(BaseModel):
    # A number is text where text is expected (docs/engine.md "Values"): `content = 42` in a
    # scenario's `messages` is the text "42".
    model_config = ConfigDict(frozen=True, extra="forbid", coerce_numbers_to_str=True)

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The optional keys are absent, not null, in the chat-completions shape.
        data: dict[str, Any] = handler(self)
        for key in ("tool_calls", "tool_call_id", "name"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


def content_text(value: Any) -> str:
    """The text a value stands for in a message: strings as they are, nothing as "", anything
    else as JSON (``str()`` for what JSON cannot hold)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def system(content: str) -> Message:
    return Message(role="system", content=content)


def user(content: str) -> Message:
    return Message(role="user", content=content)


def assistant(
    content: str | None = None, tool_calls: tuple[ToolCall, ...] | None = None
) -> Message:
    return Message(role="assistant", content=content, tool_calls=tool_calls or None)


def tool_result(tool_call_id: str, content: str, name: str | None = None) -> Message:
    return Message(role="tool", content=content, tool_call_id=tool_call_id, name=name)
