"""Pure mapping between the engine's chat-completions-shaped requests and the Anthropic Messages
API (``POST /v1/messages``), in both directions. No I/O here.

Request direction (``build_body``):

- leading ``system`` messages join the top-level ``system`` string; a ``system`` message later in
  the history (``feedback_role = "system"``) becomes user text at its place, since the Messages
  API has no system role inside the conversation;
- consecutive ``tool`` messages become one user turn of ``tool_result`` blocks (tool results
  first in that turn, as the API requires); consecutive turns of one role are merged;
- an assistant message becomes its remembered thinking blocks (so a thinking model can continue
  after a tool call), a text block, then one ``tool_use`` block per call; an assistant message
  with none of those is left out (the API rejects empty content);
- a tool the history calls but the request does not offer (the synthetic ``validation_feedback``
  of ``feedback_role = "tool"``) is declared in ``tools`` (the API rejects ``tool_use`` blocks
  without them), with ``tool_choice`` ``none`` when it is the only one;
- ``tool_choice`` "auto" | "none" | "required" | {"type": "function", "name": N} →
  ``{"type": "auto" | "none" | "any"}`` | ``{"type": "tool", "name": N}``;
- a ``json_schema`` response format → ``output_config.format`` (native structured output).

Response direction (``parse_message``): a Messages API ``message`` object (non-streaming body, or
the one a stream assembled) → ``StepResponse`` plus the thinking blocks to send back later.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall
from inspector.core.records import StepRequest, StepResponse, ToolChoice, ToolSpec, Usage
from inspector.core.scenario import ModelConfig

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_MAX_TOKENS",
    "FINISH_REASONS",
    "ParsedMessage",
    "build_body",
    "error_message",
    "finish_reason",
    "output_config",
    "parse_message",
    "thinking_keys",
    "tool_choice",
    "usage_of",
    "wire_messages",
    "wire_tools",
]

ANTHROPIC_VERSION = "2023-06-01"  # the ``anthropic-version`` header; the API's only stable one
DEFAULT_MAX_TOKENS = 4096  # ``max_tokens`` is required by the API; used when the scenario has none

# Anthropic stop_reason → the engine's (chat-completions) finish_reason. Others pass through.
FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}

Block = dict[str, Any]
ThinkingMemory = Mapping[str, Sequence[Block]]
"""A ``thinking_keys`` key → the thinking / redacted_thinking blocks that preceded it."""

_THINKING_TYPES = ("thinking", "redacted_thinking")


def _malformed(problem: str) -> ProviderError:
    return ProviderError(f"anthropic: unexpected response: {problem}", kind="MalformedResponse")


# ---- request direction -----------------------------------------------------------------------


def thinking_keys(text: str | None, tool_calls: Sequence[ToolCall] | None) -> list[str]:
    """The keys an assistant answer's thinking blocks are remembered under, and looked up by:
    each tool call id (the engine may keep only some of a step's calls), else the text."""
    if tool_calls:
        return [f"tool_use:{call.id}" for call in tool_calls]
    return [f"text:{text or ''}"]


def _tool_input(arguments: dict[str, Any] | str) -> dict[str, Any]:
    # tool_use.input must be an object; arguments the model sent as non-object text go back as {}.
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _assistant_blocks(message: Message, thinking: ThinkingMemory) -> list[Block]:
    keys = thinking_keys(message.content, message.tool_calls)
    remembered = next((thinking[k] for k in keys if k in thinking), ())
    blocks: list[Block] = [dict(b) for b in remembered]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls or ():
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": _tool_input(call.arguments),
            }
        )
    return blocks


def _tool_result_block(message: Message) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
    if message.content:  # an empty text content is rejected; no content means an empty result
        block["content"] = message.content
    return block


def wire_messages(
    messages: Sequence[Message], thinking: ThinkingMemory | None = None
) -> tuple[list[str], list[Block]]:
    """The engine's history → (leading system texts, Messages API ``messages``)."""
    memory: ThinkingMemory = thinking or {}
    system: list[str] = []
    turns: list[Block] = []
    for message in messages:
        role, blocks = "user", []
        if message.role == "system":
            if not turns:
                if message.content:
                    system.append(message.content)
                continue
            blocks = [{"type": "text", "text": message.content}] if message.content else []
        elif message.role == "user":
            blocks = [{"type": "text", "text": message.content}] if message.content else []
        elif message.role == "tool":
            blocks = [_tool_result_block(message)]
        else:
            role, blocks = "assistant", _assistant_blocks(message, memory)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":  # tool_result blocks must open their user turn
            content = turn["content"]
            turn["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return system, turns


def wire_tools(tools: Sequence[ToolSpec]) -> list[Block]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
    ]


HISTORY_TOOL_DESCRIPTION = (
    "Declared because earlier turns of this conversation use it (validation feedback); "
    "do not call it."
)


def _history_only_tools(messages: Sequence[Block], offered: Sequence[ToolSpec]) -> list[Block]:
    """Declarations for tools the history calls but the request does not offer — the synthetic
    ``validation_feedback`` of ``feedback_role = "tool"``: the Messages API rejects ``tool_use``
    / ``tool_result`` blocks in a request without ``tools``."""
    declared = {t.name for t in offered}
    missing: list[str] = []
    for turn in messages:
        for block in turn["content"]:
            name = block.get("name") if block.get("type") == "tool_use" else None
            if isinstance(name, str) and name not in declared and name not in missing:
                missing.append(name)
    return [
        {
            "name": name,
            "description": HISTORY_TOOL_DESCRIPTION,
            "input_schema": {"type": "object", "properties": {}},
        }
        for name in missing
    ]


def tool_choice(choice: ToolChoice | None) -> Block | None:
    """The engine's tool_choice → the Messages API's (None: leave the field out)."""
    if choice is None:
        return None
    if isinstance(choice, str):
        mapped = {"auto": "auto", "none": "none", "required": "any"}.get(choice)
        if mapped is None:
            raise ProviderError(
                f"anthropic: tool_choice {choice!r} has no Messages API equivalent "
                "(expected auto, none, required or a named function)",
                kind="UnsupportedRequest",
            )
        return {"type": mapped}
    name = choice.get("name")
    if not isinstance(name, str):
        raise ProviderError(
            f"anthropic: tool_choice {choice!r} names no function", kind="UnsupportedRequest"
        )
    return {"type": "tool", "name": name}


def output_config(response_format: Mapping[str, Any]) -> Block:
    """The engine's ``json_schema`` response format → ``output_config`` (Anthropic's native
    structured output); any other format cannot be expressed."""
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if response_format.get("type") != "json_schema" or not isinstance(schema, Mapping):
        raise ProviderError(
            f"anthropic: response_format type {response_format.get('type')!r} is not supported "
            'by the Messages API; use policy.output_mode = "tool"',
            kind="UnsupportedRequest",
        )
    return {"format": {"type": "json_schema", "schema": dict(schema)}}


def build_body(
    request: StepRequest,
    model: ModelConfig,
    *,
    stream: bool,
    thinking: ThinkingMemory | None = None,
) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages`` for one step."""
    leading, messages = wire_messages(request.messages, thinking)
    system = "\n\n".join(part for part in (request.system, *leading) if part)
    body: dict[str, Any] = {
        "model": model.name,
        "max_tokens": model.max_tokens or DEFAULT_MAX_TOKENS,
    }
    if system:
        body["system"] = system
    body["messages"] = messages
    history_only = _history_only_tools(messages, request.tools)
    if request.tools or history_only:
        body["tools"] = wire_tools(request.tools) + history_only
        # Only the history's tools: declared so its blocks are valid, never offered for a call.
        choice = tool_choice(request.tool_choice) if request.tools else {"type": "none"}
        if choice is not None:
            body["tool_choice"] = choice
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if request.response_format is not None:
        body["output_config"] = output_config(request.response_format)
    body["stream"] = stream
    return body


# ---- response direction ----------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedMessage:
    response: StepResponse
    thinking: tuple[Block, ...]  # thinking / redacted_thinking blocks, signatures included


def finish_reason(stop_reason: str | None) -> str | None:
    if stop_reason is None:
        return None
    return FINISH_REASONS.get(stop_reason, stop_reason)


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(usage: Any) -> Usage:
    """Input tokens count cache writes and reads too: every token of the prompt the model read."""
    if not isinstance(usage, Mapping):
        return Usage()
    read = sum(
        _count(usage, k)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Usage(input_tokens=read, output_tokens=_count(usage, "output_tokens"))


def _refusal(body: Mapping[str, Any], text: str) -> str:
    details = body.get("stop_details")
    if isinstance(details, Mapping) and isinstance(details.get("explanation"), str):
        return str(details["explanation"])
    return text or "the model refused to answer (stop_reason refusal)"


def _tool_call_arguments(block: Mapping[str, Any]) -> dict[str, Any] | str:
    value = block.get("input", {})
    if isinstance(value, dict):
        return value
    return value if isinstance(value, str) else json.dumps(value)


def parse_message(body: Any) -> ParsedMessage:
    """A Messages API ``message`` object → the engine's response. Raises ``ProviderError`` on a
    body that is not one."""
    if not isinstance(body, Mapping) or not isinstance(body.get("content"), list):
        raise _malformed("no content list in the message")
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[Block] = []
    for block in body["content"]:
        if not isinstance(block, Mapping):
            raise _malformed(f"content block {block!r} is not an object")
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise _malformed("a tool_use block without id or name")
            calls.append(ToolCall(id=call_id, name=name, arguments=_tool_call_arguments(block)))
        elif kind in _THINKING_TYPES:
            thinking.append(dict(block))
            if kind == "thinking" and block.get("thinking"):
                reasoning.append(str(block["thinking"]))
        # other block types (server tools, citations...) carry nothing the engine models
    text = "".join(texts)
    stop = body.get("stop_reason")
    stop = stop if isinstance(stop, str) else None
    refusal = _refusal(body, text) if stop == "refusal" else None
    response = StepResponse(
        text=text,
        tool_calls=calls,
        finish_reason=finish_reason(stop),
        usage=usage_of(body.get("usage")),
        refusal=refusal,
        reasoning="\n\n".join(reasoning) or None,
    )
    return ParsedMessage(response=response, thinking=tuple(thinking))


def error_message(body: Any) -> str | None:
    """The one line an Anthropic error body says (``error_type: message``), or None when the body
    is not an Anthropic error envelope."""
    if not isinstance(body, Mapping):
        return None
    error = body.get("error")
    if not isinstance(error, Mapping) or not isinstance(error.get("message"), str):
        return None
    message = " ".join(str(error["message"]).split())
    kind = error.get("type")
    return f"{kind}: {message}" if isinstance(kind, str) else message
