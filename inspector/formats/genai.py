"""The OpenTelemetry GenAI semantic conventions this project writes and reads.

Names follow the GenAI conventions as the ``opentelemetry-semantic-conventions`` 0.66b2 package
lists them (``opentelemetry.semconv._incubating.attributes.gen_ai_attributes``; the conventions
moved to their own repository, ``semantic-conventions-genai``, and are still "development").
``tests/formats/test_genai_names.py`` pins each name against that package. What the conventions
do not cover is written under this project's own ``agent_inspector.`` namespace.

Messages travel in the conventions' JSON shape: ``{"role", "parts": [...], "name"?,
"finish_reason"?}`` with parts ``text``, ``tool_call`` ``{id, name, arguments}``,
``tool_call_response`` ``{id, response}`` and ``reasoning``. ``to_genai``/``from_genai`` convert
to and from the chat-completions messages of the run record, losslessly for what a record holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspector.core.messages import Message, ToolCall, content_text
from inspector.core.shared_list import SharedPrefix

# ---- GenAI semantic convention names ------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
SYSTEM_OLD = "gen_ai.system"  # the provider, before gen_ai.provider.name
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TTFC = "gen_ai.response.time_to_first_chunk"  # seconds
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
PROMPT_TOKENS_OLD = "gen_ai.usage.prompt_tokens"
COMPLETION_TOKENS_OLD = "gen_ai.usage.completion_tokens"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
OUTPUT_TYPE = "gen_ai.output.type"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_SCORE = "gen_ai.evaluation.score.value"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
# Sampling settings: present on a chat span when the caller set them.
SAMPLING = (
    "gen_ai.request.temperature",
    "gen_ai.request.top_p",
    "gen_ai.request.top_k",
    "gen_ai.request.max_tokens",
    "gen_ai.request.seed",
    "gen_ai.request.stop_sequences",
    "gen_ai.request.frequency_penalty",
    "gen_ai.request.presence_penalty",
)
INVOKE_AGENT, CHAT, EXECUTE_TOOL = "invoke_agent", "chat", "execute_tool"

# ---- this project's namespace -------------------------------------------------------------------
NS = "agent_inspector."


def ns(name: str) -> str:
    return NS + name


# ---- messages -----------------------------------------------------------------------------------


def to_genai(message: Message) -> dict[str, Any]:
    """A record message in the conventions' shape."""
    parts: list[dict[str, Any]] = []
    if message.role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}
        )
    elif message.content is not None:
        parts.append({"type": "text", "content": message.content})
    for call in message.tool_calls or ():
        parts.append(
            {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}
        )
    out: dict[str, Any] = {"role": message.role, "parts": parts}
    if message.name is not None:
        out["name"] = message.name
    return out


def genai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [to_genai(m) for m in messages]


class MessageShapeError(ValueError):
    """A message that is not in the conventions' shape (the importer names where)."""


def from_genai(data: Any) -> list[Message]:
    """Record messages from one message in the conventions' shape. One GenAI message may carry
    several tool responses (Pydantic AI puts them in one ``user`` message): each becomes its
    own ``tool`` message, as chat completions has them."""
    if not isinstance(data, dict):
        raise MessageShapeError(f"a message must be an object, got {type(data).__name__}")
    role = data.get("role")
    parts = data.get("parts")
    if "parts" not in data and "content" in data:  # the older {role, content} shape
        parts = [{"type": "text", "content": content_text(data["content"])}]
    if not isinstance(parts, list):
        raise MessageShapeError("a message needs a list of parts")
    texts: list[str] = []
    calls: list[ToolCall] = []
    out: list[Message] = []
    for part in parts:
        if not isinstance(part, dict):
            raise MessageShapeError("a message part must be an object")
        kind = part.get("type")
        if kind == "text":
            texts.append(content_text(part.get("content")))
        elif kind == "tool_call":
            calls.append(_tool_call(part))
        elif kind == "tool_call_response":
            # The conventions say ``response``; Pydantic AI writes ``result``.
            value = part["response"] if "response" in part else part.get("result")
            out.append(
                Message(
                    role="tool",
                    content=content_text(value),
                    tool_call_id=_text(part.get("id")),
                    name=data.get("name") if role == "tool" else part.get("name"),
                )
            )
    if role not in ("system", "user", "assistant", "tool"):
        raise MessageShapeError(f"unknown message role {role!r}")
    if out:
        return out if not texts else [*out, Message(role="user", content="".join(texts))]
    if role == "tool":
        raise MessageShapeError("a tool message needs a tool_call_response part")
    content = "".join(texts) if texts else None
    name = data.get("name") if isinstance(data.get("name"), str) else None
    return [Message(role=role, content=content, tool_calls=tuple(calls) or None, name=name)]


class MessageReader:
    """``from_genai`` over successive requests of one turn: each re-sends the history, so the
    messages it shares with the previous request (equal as parsed JSON) are that request's
    record messages, not new ones — read once, shared, as the store shares them. Each request's
    messages are a view (``SharedPrefix``) of one list that later requests extend: a turn of
    ``n`` requests costs what its new messages cost, not ``n`` x its history."""

    def __init__(self) -> None:
        self._raw: list[Any] = []  # the previous request's messages as sent, whole
        self._ends: list[int] = []  # how many record messages the first i + 1 of them made
        self._items: list[Message] = []  # the record messages, shared by the requests' views

    def read(self, raw: Any, skipped: int = 0) -> SharedPrefix[Message]:
        """``skipped``: the request's first messages left out of ``raw``, the first ``skipped``
        of the previous request (``agent_inspector.step.input_messages_skipped``)."""
        if not isinstance(raw, list):
            raise MessageShapeError("messages must be a list")
        previous = self._raw
        if skipped and not 0 < skipped <= len(previous):
            raise MessageShapeError(
                f"{skipped} messages left out, but the previous request has {len(previous)}"
            )
        # The request is previous[:skipped] + raw; it keeps previous[:keep].
        shared = min(len(previous) - skipped, len(raw))
        if previous[skipped : skipped + shared] == raw[:shared]:  # the usual case, in C
            keep = skipped + shared
        else:
            keep = skipped
            while keep < skipped + shared and previous[keep] == raw[keep - skipped]:
                keep += 1
        new = raw[keep - skipped :]
        del previous[keep:]
        previous.extend(new)
        del self._ends[keep:]
        kept = self._ends[-1] if self._ends else 0
        if kept < len(self._items):  # the history changed: a list of its own from here on
            self._items = self._items[:kept]
        for message in new:
            self._items.extend(from_genai(message))
            self._ends.append(len(self._items))
        return SharedPrefix(self._items, len(self._items))


def reasoning_text(parts: Sequence[Any]) -> str | None:
    found = [
        content_text(p.get("content"))
        for p in parts
        if isinstance(p, dict) and p.get("type") in ("reasoning", "thinking")
    ]
    return "".join(found) if found else None


def _tool_call(part: dict[str, Any]) -> ToolCall:
    arguments = part.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            parsed = None
        # A string holding a JSON object is that object (OpenAI instrumentations send strings).
        arguments = parsed if isinstance(parsed, dict) else arguments
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict | str):
        arguments = json.dumps(arguments)
    return ToolCall(id=_text(part.get("id")), name=_text(part.get("name")), arguments=arguments)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
