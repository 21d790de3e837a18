"""Chat Completions stream chunks → engine chunks, and the response they add up to.

Tool-call deltas are merged by ``index``: ``id`` and ``name`` are taken once (llama.cpp repeats
them in every chunk — concatenating would garble the name) and ``arguments`` are appended.
Only choice 0 is followed; other choices (``n`` > 1) are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspector.core.errors import ProviderError
from inspector.core.messages import ToolCall
from inspector.core.provider import ReasoningChunk, TextChunk, ToolCallChunk
from inspector.core.records import StepResponse, Usage
from inspector.providers.openai_wire import arguments_from_wire, error_event, usage_from_wire

StreamChunk = TextChunk | ReasoningChunk | ToolCallChunk


@dataclass
class _PendingCall:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Feed it each SSE event; it returns the engine chunks to yield and keeps the whole."""

    def __init__(self, record: bool = True) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, _PendingCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.done = False  # data: [DONE] seen
        self.events: list[Any] = []  # every data payload, as sent
        self._record = record

    @property
    def partial_text(self) -> str:
        return "".join(self.text)

    def feed(self, event: str, data: str) -> list[StreamChunk]:
        if data == "[DONE]":
            self.done = True
            if self._record:
                self.events.append(data)
            return []
        try:
            payload = json.loads(data)
        except ValueError:
            if self._record:
                self.events.append(data)
            snippet = " ".join(data.split())[:120]
            error = ProviderError(
                f"openai: malformed JSON in a stream chunk: {snippet!r}", kind="MalformedChunk"
            )
            error.partial_text = self.partial_text
            raise error from None
        if self._record:
            # The payload text as sent, not the parsed dict: exact, and strings cost the garbage
            # collector nothing (thousands of kept dicts made long streams markedly slower).
            self.events.append(data if event == "message" else {"event": event, "data": data})
        if not isinstance(payload, dict):
            error = ProviderError(
                f"openai: a stream chunk is not a JSON object: {data[:120]!r}",
                kind="MalformedChunk",
            )
            error.partial_text = self.partial_text
            raise error
        if event == "error" or "error" in payload:
            raise error_event(payload, self.partial_text)
        usage = payload.get("usage")
        if usage:
            self.usage = usage_from_wire(usage)
        choices = payload.get("choices")
        if not choices or not isinstance(choices, list):
            return []
        out: list[StreamChunk] = []
        for choice in choices:
            if type(choice) is not dict or choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason")
            if finish:
                self.finish_reason = str(finish)
            delta = choice.get("delta")
            if type(delta) is not dict:
                continue
            content = delta.get("content")
            if content and type(content) is str:
                self.text.append(content)
                out.append(TextChunk(text=content))
                if len(delta) == 1:  # the common case: nothing else in this delta
                    continue
            self._rest_of_delta(delta, out)
        return out

    def _rest_of_delta(self, delta: dict[str, Any], out: list[StreamChunk]) -> None:
        for key in ("reasoning", "reasoning_content"):
            thought = delta.get(key)
            if isinstance(thought, str) and thought:
                self.reasoning.append(thought)
                out.append(ReasoningChunk(text=thought))
                break
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self.refusal.append(refusal)
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, call in enumerate(calls):
                if isinstance(call, dict):
                    self._call(call, position, out)

    def _call(self, call: dict[str, Any], position: int, out: list[StreamChunk]) -> None:
        index = call.get("index")
        index = index if isinstance(index, int) else position
        pending = self.calls.setdefault(index, _PendingCall())
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        new_id = call.get("id") if pending.id is None and call.get("id") else None
        name = function.get("name")
        new_name = name if pending.name is None and isinstance(name, str) and name else None
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        delta = arguments if isinstance(arguments, str) else ""
        if new_id is not None:
            pending.id = str(new_id)
        if new_name is not None:
            pending.name = new_name
        if delta:
            pending.arguments.append(delta)
        if new_id is not None or new_name is not None or delta:
            out.append(
                ToolCallChunk(
                    call_index=index,
                    id=pending.id if new_id is not None else None,
                    name=new_name,
                    arguments_delta=delta,
                )
            )

    def response(self) -> StepResponse:
        calls = [
            ToolCall(
                id=pending.id or f"call_{index}",
                name=pending.name or "",
                arguments=arguments_from_wire("".join(pending.arguments)),
            )
            for index, pending in sorted(self.calls.items())
        ]
        return StepResponse(
            text="".join(self.text),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage or Usage(),
            refusal="".join(self.refusal) or None,
            reasoning="".join(self.reasoning) or None,
        )
