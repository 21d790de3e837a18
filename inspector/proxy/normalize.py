"""What a proxied call stands for in the engine's records: the client's request body (Chat
Completions or Anthropic Messages) as a ``StepRequest``, and a reply as the assistant message the
client will send back next time. Pure functions; nothing here does I/O.

Normalising is best effort by design: the proxy forwards every body unchanged whatever it holds,
so a body these functions cannot read is still forwarded and recorded raw (``read_request``
returns None and the step's normalised request is empty).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from inspector.core.messages import Message, ToolCall, content_text
from inspector.core.records import StepRequest, StepResponse, ToolChoice, ToolSpec
from inspector.providers import openai_wire

Api = Literal["openai", "anthropic"]

__all__ = ["Api", "model_of", "read_request", "reply_message"]


def _text_of(content: Any) -> str | None:
    """Chat-completions content: a string, null, or a list of parts whose texts are joined
    (other parts, e.g. images, as JSON: the record keeps what the model was shown)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            if isinstance(p, dict) and p.get("type") == "text"
            else content_text(p)
            for p in content
        )
    return content_text(content)


def _openai_request(body: dict[str, Any]) -> StepRequest:
    messages = [
        {**m, "content": _text_of(m.get("content"))} if isinstance(m, dict) else m
        for m in body.get("messages", [])
    ]
    # Tools of other types (the Responses-style "custom", server tools) have no engine shape.
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and "function" in t]
    return openai_wire.request_from_wire({**body, "messages": messages, "tools": tools})


# ---- Anthropic Messages ------------------------------------------------------------------------


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")
    return content_text(content)


def _anthropic_messages(wire: list[Any]) -> list[Message]:
    out: list[Message] = []
    for turn in wire:
        if not isinstance(turn, dict):
            continue
        blocks = _blocks(turn.get("content"))
        texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        if turn.get("role") == "assistant":
            calls = tuple(
                ToolCall(id=str(b.get("id", "")), name=str(b.get("name", "")), arguments=b["input"])
                if isinstance(b.get("input"), dict)
                else ToolCall(id=str(b.get("id", "")), name=str(b.get("name", "")))
                for b in blocks
                if b.get("type") == "tool_use"
            )
            out.append(Message(role="assistant", content="".join(texts) or None,
                               tool_calls=calls or None))  # fmt: skip
            continue
        # A user turn: its tool results first (the API puts them first), then its text.
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append(Message(role="tool", content=_tool_result_text(b),
                                   tool_call_id=str(b.get("tool_use_id", ""))))  # fmt: skip
        if texts:
            out.append(Message(role="user", content="".join(texts)))
    return out


def _anthropic_tool_choice(wire: Any) -> ToolChoice | None:
    if not isinstance(wire, dict):
        return None
    kind = wire.get("type")
    if kind == "tool":
        return {"type": "function", "name": wire.get("name")}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))


def _anthropic_request(body: dict[str, Any]) -> StepRequest:
    system = body.get("system")
    if isinstance(system, list):
        system = "".join(str(b.get("text", "")) for b in _blocks(system))
    fmt = (body.get("output_config") or {}).get("format")
    response_format = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema},
        }
    tools = [
        ToolSpec(
            name=str(t["name"]),
            description=str(t.get("description", "")),
            parameters=t.get("input_schema") or {"type": "object", "properties": {}},
        )
        for t in body.get("tools", [])
        if isinstance(t, dict) and "name" in t
    ]
    return StepRequest(
        system=system if isinstance(system, str) else "",
        messages=_anthropic_messages(body.get("messages", [])),
        tools=tools,
        tool_choice=_anthropic_tool_choice(body.get("tool_choice")),
        response_format=response_format,
    )


def read_request(api: Api, body: Any) -> StepRequest | None:
    """The normalised request a client's body stands for; None when it is not one."""
    if not isinstance(body, dict):
        return None
    try:
        return _openai_request(body) if api == "openai" else _anthropic_request(body)
    except (ValidationError, TypeError, ValueError, KeyError, AttributeError):
        return None


def reply_message(response: StepResponse) -> Message:
    """The assistant message a reply becomes in the client's next request."""
    return Message(
        role="assistant",
        content=response.text or None,
        tool_calls=tuple(response.tool_calls) or None,
    )


def model_of(body: Any) -> str:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else ""
