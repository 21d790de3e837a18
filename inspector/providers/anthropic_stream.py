"""The Messages API event stream (SSE) → the engine's chunks, and the whole message at the end.

Events: ``message_start`` (the message shell and its input usage), ``content_block_start`` /
``content_block_delta`` / ``content_block_stop`` per content block (``text_delta``,
``input_json_delta``, ``thinking_delta``, ``signature_delta``; ``redacted_thinking`` blocks come
whole in their start event), ``message_delta`` (stop reason, cumulative usage), ``message_stop``,
``ping``, and ``error`` (a failure inside an HTTP 200 stream). Unknown event and delta types are
skipped, as the API asks of clients.

The assembler rebuilds the message object a non-streaming call would have returned, so both
paths end in the same ``anthropic_wire.parse_message``. Anything that is not a well-formed stream
ends in a one-line ``ProviderError``, never another exception.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from inspector.core.errors import ProviderError
from inspector.core.provider import ProviderChunk, ReasoningChunk, TextChunk, ToolCallChunk
from inspector.providers.anthropic_wire import error_message

__all__ = ["RETRYABLE_STREAM_ERRORS", "StreamAssembler", "stream_events"]

# Error types of an ``error`` event that a new request may get past.
RETRYABLE_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def _bad(problem: str) -> ProviderError:
    return ProviderError(f"anthropic: malformed stream: {problem}", kind="MalformedStream")


def _obj(data: Any, key: str, event: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise _bad(f"{event} event without a {key!r} object")
    return value


def _index(data: dict[str, Any], event: str) -> int:
    value = data.get("index")
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(f"{event} event without an integer 'index'")
    return value


def _str(data: dict[str, Any], key: str, event: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise _bad(f"{event} event: {key!r} is not a string")
    return value


class StreamAssembler:
    """Folds stream events, in order, into chunks; ``message()`` is the assembled message."""

    def __init__(self) -> None:
        self.shell: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self._parts: dict[int, list[str]] = {}  # text / thinking / partial_json pieces per block
        self._signatures: dict[int, list[str]] = {}
        self._call_index: dict[int, int] = {}  # tool_use block index → 0-based call index
        self._text: list[str] = []
        self.stopped = False  # message_stop seen
        self.events: list[Any] = []  # the raw record: each event's data, parsed where it parses

    @property
    def partial_text(self) -> str:
        return "".join(self._text)

    def feed(self, event: str, data: str) -> list[ProviderChunk]:
        """One SSE event (its ``event:`` name and ``data:``); returns the chunks it yields."""
        try:
            parsed = json.loads(data)
        except ValueError as exc:
            self.events.append(data)
            raise _bad(f"{event or 'an'} event whose data is not JSON ({exc})") from None
        self.events.append(parsed)
        if not isinstance(parsed, dict):
            raise _bad(f"{event or 'an'} event whose data is not a JSON object")
        kind = parsed.get("type", event)
        if kind == "content_block_delta":
            return self._delta(parsed)
        if kind == "content_block_start":
            return self._start(parsed)
        if kind == "content_block_stop":
            self._stop(_index(parsed, kind))
        elif kind == "message_start":
            message = _obj(parsed, "message", kind)
            self.shell.update({k: v for k, v in message.items() if k not in ("content", "usage")})
            self._merge_usage(message.get("usage"))
        elif kind == "message_delta":
            self.shell.update(_obj(parsed, "delta", kind))
            self._merge_usage(parsed.get("usage"))
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise self._error(parsed)
        return []  # ping and event types this adapter does not know

    def _merge_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):  # message_delta counts are cumulative: later values win
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    def _start(self, data: dict[str, Any]) -> list[ProviderChunk]:
        index = _index(data, "content_block_start")
        block = dict(_obj(data, "content_block", "content_block_start"))
        self.blocks[index] = block
        self._parts[index] = []
        kind = block.get("type")
        if kind == "text":
            text = _str(block, "text", "content_block_start")
            self._parts[index].append(text)
            if text:
                self._text.append(text)
                return [TextChunk(text=text)]
        elif kind == "thinking":
            self._parts[index].append(_str(block, "thinking", "content_block_start"))
            self._signatures[index] = [_str(block, "signature", "content_block_start")]
        elif kind == "tool_use":
            call_id = _str(block, "id", "content_block_start")
            name = _str(block, "name", "content_block_start")
            call_index = self._call_index[index] = len(self._call_index)
            return [ToolCallChunk(call_index=call_index, id=call_id, name=name)]
        return []

    def _delta(self, data: dict[str, Any]) -> list[ProviderChunk]:
        index = _index(data, "content_block_delta")
        delta = _obj(data, "delta", "content_block_delta")
        parts = self._parts.get(index)
        if parts is None:
            raise _bad(f"content_block_delta for block {index} before its content_block_start")
        kind = delta.get("type")
        if kind == "text_delta":
            text = _str(delta, "text", "text_delta")
            parts.append(text)
            if text:
                self._text.append(text)
                return [TextChunk(text=text)]
        elif kind == "input_json_delta":
            piece = _str(delta, "partial_json", "input_json_delta")
            parts.append(piece)
            call_index = self._call_index.get(index)
            if call_index is None:
                raise _bad(f"input_json_delta for block {index}, which is not a tool_use block")
            if piece:
                return [ToolCallChunk(call_index=call_index, arguments_delta=piece)]
        elif kind == "thinking_delta":
            text = _str(delta, "thinking", "thinking_delta")
            parts.append(text)
            if text:
                return [ReasoningChunk(text=text)]
        elif kind == "signature_delta":
            self._signatures.setdefault(index, []).append(_str(delta, "signature", kind))
        return []

    def _stop(self, index: int) -> None:
        if index not in self.blocks:
            raise _bad(f"content_block_stop for block {index} before its content_block_start")

    def _error(self, data: dict[str, Any]) -> ProviderError:
        error = data.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        message = error_message(data) or json.dumps(data, ensure_ascii=False)
        exc = ProviderError(
            f"anthropic: error event in the stream: {message}",
            retryable=kind in RETRYABLE_STREAM_ERRORS,
            kind="StreamErrorEvent",
        )
        exc.partial_text = self.partial_text
        return exc

    def message(self) -> dict[str, Any]:
        """The message as a non-streaming call would have returned it."""
        content: list[dict[str, Any]] = []
        for index in sorted(self.blocks):
            block = dict(self.blocks[index])
            joined = "".join(self._parts.get(index, ()))
            kind = block.get("type")
            if kind == "text":
                block["text"] = joined
            elif kind == "thinking":
                block["thinking"] = joined
                block["signature"] = "".join(self._signatures.get(index, ()))
            elif kind == "tool_use" and joined.strip():
                try:
                    block["input"] = json.loads(joined)
                except ValueError:
                    block["input"] = joined  # kept as sent; the engine reports bad arguments
            content.append(block)
        return {**self.shell, "content": content, "usage": dict(self.usage)}


async def stream_events(
    response: httpx.Response, assembler: StreamAssembler
) -> AsyncIterator[ProviderChunk]:
    """Reads the SSE body of ``response`` through ``assembler``. Raises ``ProviderError`` for an
    error event, a malformed stream, or one that ends before ``message_stop``; httpx transport
    errors pass through (the HTTP layer translates them)."""
    try:
        async for sse in EventSource(response).aiter_sse():
            if not sse.data:  # an event without data is not dispatched (SSE spec)
                continue
            for chunk in assembler.feed(sse.event, sse.data):
                yield chunk
            if assembler.stopped:
                return
    except SSEError as exc:
        raise ProviderError(f"anthropic: {exc}", kind="MalformedStream") from None
    except ProviderError as exc:
        exc.partial_text = exc.partial_text or assembler.partial_text
        raise
    error = ProviderError(
        "anthropic: the stream ended before message_stop (cut off mid-way)", kind="StreamCutOff"
    )
    error.partial_text = assembler.partial_text
    raise error
