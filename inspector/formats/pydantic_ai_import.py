"""A Pydantic AI message history → a run (``import --format pydantic-ai``).

The file is what ``ModelMessagesTypeAdapter.dump_json(result.all_messages())`` writes: a list of
``{"kind": "request" | "response", "parts": [...]}``. It is read as plain JSON (Pydantic AI need
not be installed). Each response is one model call; its request is every message before it, in
the chat-completions shape:

- ``system-prompt`` parts and a request's ``instructions`` → the system prompt;
- ``user-prompt`` → user; ``tool-return`` → tool;
- ``retry-feedback`` (and the older ``retry-prompt`` without a tool name) → a user message: the
  feedback that ``assemble`` turns into a failed attempt; ``retry-prompt`` with a tool name → the
  tool's (error) result;
- response ``text`` / ``tool-call`` / ``thinking`` → the answer, its tool calls, its reasoning.

A history carries no tool definitions, ``tool_choice`` or sampling settings: the fidelity report
says so. Latencies come from the timestamps (a response's minus its request's).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from inspector.core.messages import Message, ToolCall, content_text
from inspector.core.records import RunRecord, StepResponse, Usage
from inspector.formats import MALFORMED, why
from inspector.formats.assemble import ImportedCall, RunSource, build_run


class HistoryError(ValueError):
    """A message the history cannot hold; the message names it (``message N``)."""


def run_from_history(data: Any, file: str, run_id: str) -> RunRecord:
    if not isinstance(data, list):
        raise HistoryError("a message history must be a JSON list of messages")
    system: list[str] = []
    messages: list[Message] = []
    calls: list[ImportedCall] = []
    model = ""
    requested_at: datetime | None = None
    first_at: str | None = None
    for position, item in enumerate(data, start=1):
        try:
            kind = _kind(item)
            first_at = first_at or item.get("timestamp")
            if kind == "request":
                requested_at = _time(item.get("timestamp"))
                if item.get("instructions"):
                    system.append(str(item["instructions"]))
                messages.extend(_request_messages(item["parts"], system))
                continue
            response = _response(item)
            answered_at = _time(item.get("timestamp"))
            latency = None
            if requested_at is not None and answered_at is not None:
                latency = max((answered_at - requested_at).total_seconds() * 1000, 0.0)
            calls.append(
                ImportedCall(
                    system="\n\n".join(system) if system else None,
                    messages=list(messages),
                    response=response,
                    latency_ms=latency,
                )
            )
            model = model or str(item.get("model_name") or "")
            messages.append(_assistant(response))
        except HistoryError as exc:
            raise HistoryError(f"message {position}: {exc}") from None
        except MALFORMED as exc:
            raise HistoryError(f"message {position}: {why(exc)}") from None
    if not calls:
        raise HistoryError("the history has no model response")
    source = RunSource(
        format="pydantic-ai",
        file=file,
        run_id=run_id,
        scenario=f"imported {file}",
        started_at=str(first_at or ""),
        provider="pydantic-ai",
        model=model,
    )
    return build_run(source, calls)


def looks_like_history(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(m, dict) and m.get("kind") in ("request", "response") for m in data)
    )


def _kind(item: Any) -> str:
    if not isinstance(item, dict):
        raise HistoryError("a message must be an object")
    kind = item.get("kind")
    if kind not in ("request", "response"):
        raise HistoryError(f'kind must be "request" or "response", got {kind!r}')
    if not isinstance(item.get("parts"), list):
        raise HistoryError("parts must be a list")
    return str(kind)


def _request_messages(parts: list[Any], system: list[str]) -> list[Message]:
    out = []
    for part in parts:
        if not isinstance(part, dict):
            raise HistoryError("a part must be an object")
        kind = part.get("part_kind")
        if kind == "system-prompt":
            system.append(content_text(part.get("content")))
        elif kind == "user-prompt":
            out.append(Message(role="user", content=_user_text(part.get("content"))))
        elif kind == "tool-return":
            out.append(_tool(part, content_text(part.get("content"))))
        elif kind == "retry-prompt" and part.get("tool_name"):
            out.append(_tool(part, _feedback_text(part.get("content"))))
        elif kind in ("retry-prompt", "retry-feedback"):
            out.append(Message(role="user", content=_feedback_text(part.get("content"))))
        # Other parts (instruction deltas, capability notes) change no message the model saw.
    return out


def _tool(part: dict[str, Any], content: str) -> Message:
    return Message(
        role="tool",
        content=content,
        tool_call_id=str(part.get("tool_call_id") or ""),
        name=part.get("tool_name"),
    )


def _response(item: dict[str, Any]) -> StepResponse:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for part in item["parts"]:
        if not isinstance(part, dict):
            raise HistoryError("a part must be an object")
        kind = part.get("part_kind")
        if kind == "text":
            texts.append(content_text(part.get("content")))
        elif kind == "thinking":
            reasoning.append(content_text(part.get("content")))
        elif kind == "tool-call":
            calls.append(_call(part))
    usage = item.get("usage") or {}
    return StepResponse(
        text="".join(texts),
        tool_calls=calls,
        finish_reason=item.get("finish_reason"),
        usage=Usage(
            # ``request_tokens``/``response_tokens``: the names before Pydantic AI 1.0.
            input_tokens=int(usage.get("input_tokens", usage.get("request_tokens")) or 0),
            output_tokens=int(usage.get("output_tokens", usage.get("response_tokens")) or 0),
        ),
        reasoning="".join(reasoning) if reasoning else None,
    )


def _call(part: dict[str, Any]) -> ToolCall:
    args = part.get("args")
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except ValueError:
            parsed = None
        args = parsed if isinstance(parsed, dict) else args
    return ToolCall(
        id=str(part.get("tool_call_id") or ""),
        name=str(part["tool_name"]),
        arguments=args if isinstance(args, dict | str) else {},
    )


def _assistant(response: StepResponse) -> Message:
    return Message(
        role="assistant",
        content=response.text if response.text or not response.tool_calls else None,
        tool_calls=tuple(response.tool_calls) or None,
    )


def _user_text(content: Any) -> str:
    if isinstance(content, list):  # text and media items: the text is what can be replayed
        return "".join(c for c in content if isinstance(c, str))
    return content_text(content)


def _feedback_text(content: Any) -> str:
    """A ``ModelRetry`` string as it is; validation errors as their messages, one a line."""
    if isinstance(content, list):
        return "\n".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in content)
    return content_text(content)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
