"""Pure mappings between the engine's request/response records and the Chat Completions wire
JSON, in both directions, plus the server capability profiles that shape the request.

Nothing here does I/O; ``openai.py`` sends what ``build_body`` returns and records its notes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall
from inspector.core.records import StepRequest, StepResponse, ToolChoice, ToolSpec, Usage
from inspector.core.scenario import ModelConfig

OPENAI_BASE_URL = "https://api.openai.com/v1"


class ServerProfile(BaseModel):
    """What an OpenAI-compatible server accepts. The adapter works around a missing capability
    and records each workaround (``notes``) on the step's raw request."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "openai-compatible"
    json_schema: bool = True  # response_format {"type": "json_schema"}; else json_object+schema
    tool_choice_required: bool = True  # tool_choice "required"; else "auto" (B3 catches misses)
    null_content: bool = True  # assistant content null next to tool_calls; else ""
    stream_usage: bool = True  # stream_options.include_usage
    stream_with_tools: bool = True  # streaming while tools are offered; else one plain request
    reuse_connection_after_error: bool = True  # else a fresh connection after any failure
    retry_server_errors: bool = True  # 500/502/503 retried; off where 500 means a bad request


PROFILES: dict[str, ServerProfile] = {
    "openai": ServerProfile(name="openai"),
    "openai-compatible": ServerProfile(),
    "ollama": ServerProfile(name="ollama"),
    "vllm": ServerProfile(name="vllm"),
    "openrouter": ServerProfile(name="openrouter"),
    "groq": ServerProfile(name="groq"),
    # llama-cpp-python's server (the local model): each flag is a behaviour seen against it.
    "llama.cpp": ServerProfile(
        name="llama.cpp",
        json_schema=False,
        tool_choice_required=False,
        null_content=False,
        stream_with_tools=False,
        reuse_connection_after_error=False,
        retry_server_errors=False,
    ),
}
_HOSTS = {
    "api.openai.com": "openai",
    "openrouter.ai": "openrouter",
    "api.groq.com": "groq",
}
_PORTS = {11434: "ollama", 8642: "llama.cpp", 8080: "llama.cpp"}


def select_profile(model: ModelConfig) -> ServerProfile:
    """The profile for a scenario's server: ``#server=NAME`` at the end of ``base_url`` (never
    sent: fragments stay client-side) wins; else known hosts and default ports; else a ``.gguf``
    model name means llama.cpp; else a fully capable OpenAI-compatible server."""
    url = urlsplit(model.base_url or OPENAI_BASE_URL)
    if url.fragment.startswith("server="):
        name = url.fragment.removeprefix("server=")
        if name not in PROFILES:
            known = ", ".join(sorted(PROFILES))
            raise ProviderError(f"model.base_url: unknown server profile {name!r} (known: {known})")
        return PROFILES[name]
    host = (url.hostname or "").lower()
    if host in _HOSTS:
        return PROFILES[_HOSTS[host]]
    if host in ("127.0.0.1", "localhost", "::1") and url.port in _PORTS:
        return PROFILES[_PORTS[url.port]]
    if model.name.endswith(".gguf"):
        return PROFILES["llama.cpp"]
    return PROFILES["openai-compatible"]


def base_url_without_fragment(model: ModelConfig) -> str:
    return (model.base_url or OPENAI_BASE_URL).split("#", 1)[0]


# --- engine → wire ---------------------------------------------------------------------------


def message_to_wire(message: Message, profile: ServerProfile) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant":
        if message.tool_calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in message.tool_calls
            ]
            if message.content is None and not profile.null_content:
                wire["content"] = ""
        elif message.content is None:
            wire["content"] = ""
    elif message.content is None:
        wire["content"] = ""
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id
    elif message.name is not None:
        wire["name"] = message.name
    return wire


def messages_to_wire(
    system: str, messages: Sequence[Message], profile: ServerProfile
) -> list[dict[str, Any]]:
    wire = [{"role": "system", "content": system}] if system else []
    wire.extend(message_to_wire(m, profile) for m in messages)
    return wire


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def tool_choice_to_wire(
    choice: ToolChoice | None, profile: ServerProfile
) -> tuple[str | dict[str, Any] | None, list[str]]:
    """The wire ``tool_choice`` and the workarounds applied (as notes)."""
    if choice is None:
        return None, []
    if isinstance(choice, dict):
        name = choice.get("name") or choice.get("function", {}).get("name")
        return {"type": "function", "function": {"name": name}}, []
    if choice == "required" and not profile.tool_choice_required:
        return "auto", [
            f'tool_choice "required" sent as "auto": {profile.name} does not support it; '
            "a reply without a tool call is reported by the loop"
        ]
    return choice, []


def response_format_to_wire(
    fmt: dict[str, Any] | None, profile: ServerProfile
) -> tuple[dict[str, Any] | None, list[str]]:
    if fmt is None or fmt.get("type") != "json_schema" or profile.json_schema:
        return fmt, []
    schema = fmt.get("json_schema", {}).get("schema", {})
    return {"type": "json_object", "schema": schema}, [
        f"response_format json_schema sent as json_object with the schema: {profile.name} "
        "rejects json_schema"
    ]


def build_body(
    request: StepRequest, model: ModelConfig, profile: ServerProfile
) -> tuple[dict[str, Any], bool, list[str]]:
    """The request body, whether it streams, and notes on each capability workaround."""
    notes: list[str] = []
    body: dict[str, Any] = {
        "model": model.name,
        "messages": messages_to_wire(request.system, request.messages, profile),
    }
    if model.temperature is not None:
        body["temperature"] = model.temperature
    if model.max_tokens is not None:
        body["max_tokens"] = model.max_tokens
    if request.tools:
        body["tools"] = [tool_to_wire(t) for t in request.tools]
        choice, more = tool_choice_to_wire(request.tool_choice, profile)
        notes += more
        if choice is not None:
            body["tool_choice"] = choice
    fmt, more = response_format_to_wire(request.response_format, profile)
    notes += more
    if fmt is not None:
        body["response_format"] = fmt
    stream = model.stream
    if stream and request.tools and request.tool_choice != "none" and not profile.stream_with_tools:
        stream = False
        notes.append(
            f"not streamed: {profile.name} sends an empty stream when the model calls a tool"
        )
    body["stream"] = stream
    if stream and profile.stream_usage:
        body["stream_options"] = {"include_usage": True}
    return body, stream, notes


# --- wire → engine ---------------------------------------------------------------------------


def arguments_from_wire(raw: str | None) -> dict[str, Any] | str:
    """Parsed tool-call arguments; "" or null (a call with no arguments) is ``{}``; anything
    that is not a JSON object stays the raw string so validators can see it."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, dict) else raw


def tool_call_from_wire(call: dict[str, Any], position: int) -> ToolCall:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if isinstance(arguments, dict):  # some servers send an object, not a string
        arguments = json.dumps(arguments)
    return ToolCall(
        id=call.get("id") or f"call_{position}",
        name=function.get("name") or "",
        arguments=arguments_from_wire(arguments),
    )


def message_from_wire(wire: dict[str, Any]) -> Message:
    calls = wire.get("tool_calls") or None
    return Message(
        role=wire["role"] if wire["role"] != "developer" else "system",
        content=wire.get("content"),
        tool_calls=tuple(tool_call_from_wire(c, i) for i, c in enumerate(calls)) if calls else None,
        tool_call_id=wire.get("tool_call_id"),
        name=wire.get("name"),
    )


def tool_from_wire(wire: dict[str, Any]) -> ToolSpec:
    function = wire["function"]
    return ToolSpec(
        name=function["name"],
        description=function.get("description", ""),
        parameters=function.get("parameters") or {"type": "object", "properties": {}},
    )


def tool_choice_from_wire(wire: str | dict[str, Any] | None) -> ToolChoice | None:
    if isinstance(wire, dict):
        return {"type": "function", "name": wire.get("function", {}).get("name")}
    return wire


def response_format_from_wire(wire: dict[str, Any] | None) -> dict[str, Any] | None:
    if wire is None or wire.get("type") != "json_schema":
        return wire
    spec = wire.get("json_schema", {})
    return {"type": "json_schema", "json_schema": {"name": spec["name"], "schema": spec["schema"]}}


def request_from_wire(body: dict[str, Any]) -> StepRequest:
    """The engine request a wire body stands for (the leading system message becomes
    ``system``); used to check that ``build_body`` reproduces recorded requests."""
    wire_messages = list(body.get("messages", []))
    system = ""
    if wire_messages and wire_messages[0].get("role") in ("system", "developer"):
        system = wire_messages.pop(0).get("content") or ""
    return StepRequest(
        system=system,
        messages=[message_from_wire(m) for m in wire_messages],
        tools=[tool_from_wire(t) for t in body.get("tools", [])],
        tool_choice=tool_choice_from_wire(body.get("tool_choice")),
        response_format=response_format_from_wire(body.get("response_format")),
    )


def usage_from_wire(wire: dict[str, Any] | None) -> Usage:
    if not isinstance(wire, dict):
        return Usage()
    return Usage(
        input_tokens=_count(wire.get("prompt_tokens")),
        output_tokens=_count(wire.get("completion_tokens")),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def reasoning_of(wire: dict[str, Any]) -> str | None:
    """``reasoning`` (Ollama, Groq, OpenRouter) or ``reasoning_content`` (vLLM, DeepSeek)."""
    value = wire.get("reasoning")
    if not isinstance(value, str):
        value = wire.get("reasoning_content")
    return value if isinstance(value, str) and value else None


def completion_from_wire(data: Any) -> StepResponse:
    """A non-streaming completion body. Only choice 0 counts (``n`` > 1 is ignored); a choice
    without a message (content filter) is an empty reply with its finish reason."""
    if not isinstance(data, dict):
        raise ProviderError(
            f"expected a JSON object, got {type(data).__name__}", kind="BadResponse"
        )
    if "error" in data and "choices" not in data:
        raise error_event(data)
    choices = data.get("choices") or []
    choice = next((c for c in choices if c.get("index", 0) == 0), choices[0] if choices else {})
    message = choice.get("message") or {}
    calls = message.get("tool_calls") or []
    return StepResponse(
        text=message.get("content") or "",
        tool_calls=[tool_call_from_wire(c, i) for i, c in enumerate(calls)],
        finish_reason=choice.get("finish_reason"),
        usage=usage_from_wire(data.get("usage")),
        refusal=message.get("refusal") or None,
        reasoning=reasoning_of(message),
    )


def error_event(data: dict[str, Any], partial_text: str = "") -> ProviderError:
    """An ``error`` object a server sent with a 200 (in a stream or as the body)."""
    err = data.get("error")
    message = err.get("message") if isinstance(err, dict) else err
    status = err.get("status_code") or err.get("code") if isinstance(err, dict) else None
    text = " ".join(str(message or json.dumps(data)).split())
    error = ProviderError(
        f"openai: error from the server: {text}",
        status=status if isinstance(status, int) else None,
        kind="StreamError",
    )
    error.partial_text = partial_text
    return error
