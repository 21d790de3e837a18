"""The scripted model (DESIGN §3 ``[[script]]``): one entry per model call, in order, offline.

Deterministic: the same script and the same requests give the same chunks, tool call ids and
usage on every run. One instance serves one turn (its call counter is the position in the script).

Entry semantics, in the order a response is streamed:

- ``reasoning``: ``ReasoningChunk`` pieces first, then ``StepResponse.reasoning``.
- ``text``: ``TextChunk`` pieces (word by word, so streaming is visible).
- ``tool_calls``: per call a ``ToolCallChunk`` with ``id`` and ``name``, then the arguments JSON in
  two ``arguments_delta`` pieces. A missing ``id`` becomes ``call_{n}_{i}`` (``n`` the 1-based
  model call, ``i`` the 0-based call within it), unique across the turn.
- ``final``: a structured output the way the output mode expects it: in ``tool`` mode a call to
  the final-answer tool (after any ``tool_calls``), otherwise its JSON appended to the text.
- ``empty = true``: no text, no tool calls, no final (``finish_reason`` "stop").
- ``refusal``: ``StepResponse.refusal``; ``finish_reason`` "stop".
- ``error``: whatever content the entry has is streamed, then ``ProviderError`` (kind
  ``ScriptedError``) is raised instead of completing, with ``partial_text`` set.
- ``delay_ms``: a sleep before each item (the error included); no sleep at all when 0.
- ``choices``: one alternative drawn per call, by weight, from ``random.Random(f"{seed}:{n}")``
  (``seed`` the scenario's ``model.seed``, 0 when unset): the same seed gives the same answers,
  call by call, so a replay that skips calls (``skip_to``) still draws what the run drew. A
  choice's ``weight_if_seen`` replaces its weight when the request's messages contain a text
  (a model that heeds the feedback it is shown).
- ``usage``: the given keys override the estimate, ``ceil(chars / 4)`` of the request (system,
  message contents, tool call arguments, tool specs, response format) and of the output (text,
  tool call arguments, refusal, reasoning).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, get_args

from inspector.core.compact_json import dumps_spaced
from inspector.core.errors import ProviderError
from inspector.core.messages import Message, ToolCall
from inspector.core.policy import OutputMode
from inspector.core.provider import (
    Completed,
    ProviderChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallChunk,
)
from inspector.core.records import StepRequest, StepResponse, ToolSpec, Usage
from inspector.core.scenario import ScriptEntry

__all__ = ["ScriptFunction", "ScriptedProvider"]

ScriptFunction = Callable[[StepRequest, int], ScriptEntry | dict[str, Any] | str]
"""Called with the request and the 0-based call index; returns the entry for that call (a dict
is validated into a ``ScriptEntry``, a string is a plain text answer)."""

_OUTPUT_MODES = (None, *get_args(OutputMode))
_PIECE = re.compile(r"\s*\S+\s*|\s+")


class ScriptedProvider:
    """A deterministic, offline model that answers from a script."""

    name = "scripted"

    def __init__(
        self,
        script: Sequence[ScriptEntry | dict[str, Any]] | ScriptFunction,
        *,
        final_tool: str | None = None,
        output_mode: OutputMode | None = None,
        seed: int | None = None,
    ) -> None:
        if output_mode not in _OUTPUT_MODES:
            raise ValueError(f"output_mode must be one of {_OUTPUT_MODES}, got {output_mode!r}")
        self._function: ScriptFunction | None = None
        self._entries: tuple[ScriptEntry, ...] = ()
        if callable(script):
            self._function = script
        else:
            self._entries = tuple(
                e if isinstance(e, ScriptEntry) else ScriptEntry.model_validate(e) for e in script
            )  # a scenario's entries are validated already: a sweep builds a provider per run
        # ``final`` becomes a tool call only in tool mode; elsewhere it is JSON text.
        self._final_tool = (final_tool or "final_answer") if output_mode == "tool" else None
        self._calls = 0
        self._seed = seed or 0
        # id(obj) -> (obj, size); holding obj keeps the id from being reused while cached.
        self._sizes: dict[int, tuple[object, int]] = {}
        self._prev_messages: Sequence[Message] = []
        self._prev_total = 0

    @property
    def calls(self) -> int:
        """Model calls started so far."""
        return self._calls

    def skip_to(self, calls: int) -> None:
        """Counts the turn's first ``calls`` model calls as answered elsewhere (a replay answered
        them from its recording): the next call answers with script entry ``calls + 1``."""
        self._calls = calls

    async def stream(self, request: StepRequest) -> AsyncIterator[ProviderChunk]:
        self._calls += 1
        n = self._calls
        entry = self._entry(request, n)
        if entry.text_if_tools_disabled is not None and request.tool_choice == "none":
            entry = ScriptEntry(
                text=entry.text_if_tools_disabled, usage=entry.usage, delay_ms=entry.delay_ms
            )
        delay = entry.delay_ms / 1000

        text = "" if entry.empty else (entry.text or "")
        tool_calls: list[ToolCall] = []
        arguments: list[str] = []
        if not entry.empty:
            for call in entry.tool_calls:
                _add_call(tool_calls, arguments, n, call.id, call.name, call.arguments)
            if entry.final is not None:
                if self._final_tool is not None:
                    _add_call(tool_calls, arguments, n, None, self._final_tool, entry.final)
                else:
                    text += json.dumps(entry.final, ensure_ascii=False)

        chunks: list[ProviderChunk] = []
        if entry.reasoning:
            chunks += [ReasoningChunk(text=p) for p in _PIECE.findall(entry.reasoning)]
        chunks += [TextChunk(text=p) for p in _PIECE.findall(text)]
        for index, (tool_call, args) in enumerate(zip(tool_calls, arguments, strict=True)):
            chunks.append(ToolCallChunk(call_index=index, id=tool_call.id, name=tool_call.name))
            chunks += [ToolCallChunk(call_index=index, arguments_delta=p) for p in _halves(args)]

        for chunk in chunks:
            if delay:
                await asyncio.sleep(delay)
            yield chunk
        if delay:
            await asyncio.sleep(delay)

        if entry.error is not None:
            error = ProviderError(entry.error, kind="ScriptedError")
            error.partial_text = text
            raise error

        out_chars = len(text) + sum(map(len, arguments))
        out_chars += len(entry.refusal or "") + len(entry.reasoning or "")
        estimate = {
            "input_tokens": _tokens(self._input_chars(request)),
            "output_tokens": _tokens(out_chars),
        }
        try:
            given = entry.usage.model_dump(exclude_none=True) if entry.usage else {}
            usage = Usage.model_validate({**estimate, **given})
        except ValueError as exc:
            raise _invalid(n, "usage", exc) from exc
        finish = entry.finish_reason or ("tool_calls" if tool_calls else "stop")
        yield Completed(
            response=StepResponse(
                text=text,
                tool_calls=tool_calls,
                finish_reason=finish,
                usage=usage,
                refusal=entry.refusal,
                reasoning=entry.reasoning,
            )
        )

    def _entry(self, request: StepRequest, n: int) -> ScriptEntry:
        if self._function is None:
            if n > len(self._entries):
                count = len(self._entries)
                raise ProviderError(
                    f"scripted model: script exhausted at call {n} "
                    f"(the script has {count} {'entry' if count == 1 else 'entries'})",
                    kind="ScriptExhausted",
                )
            return self._drawn(self._entries[n - 1], n, request)
        try:
            result = self._function(request, n - 1)
        except Exception as exc:
            raise ProviderError(
                f"scripted model: the script function failed at call {n}: "
                f"{type(exc).__name__}: {exc}",
                kind="ScriptedError",
            ) from exc
        if isinstance(result, ScriptEntry):
            return self._drawn(result, n, request)
        if isinstance(result, str):
            return ScriptEntry(text=result)
        try:
            return self._drawn(ScriptEntry.model_validate(result), n, request)
        except ValueError as exc:
            raise _invalid(n, "entry", exc) from exc

    def _drawn(self, entry: ScriptEntry, n: int, request: StepRequest) -> ScriptEntry:
        """The entry itself, or the alternative of its ``choices`` this seed draws at call n."""
        if not entry.choices:
            return entry
        seen = "\n".join(m.content for m in request.messages if m.content)
        weights = [
            min((w for text, w in c.weight_if_seen.items() if text in seen), default=c.weight)
            for c in entry.choices
        ]
        rng = random.Random(f"{self._seed}:{n}")  # str seeds hash the same in every process
        return rng.choices(entry.choices, weights=weights)[0]

    def _input_chars(self, request: StepRequest) -> int:
        # Hot path (a 1,000-step turn has ~2,000 messages): plain messages cost a len(); those
        # with tool calls, and the tool specs, are measured once per object and cached.
        total = len(request.system) + self._messages_chars(request.messages)
        for tool in request.tools:
            total += self._cached(tool, _tool_chars)
        if request.response_format is not None:
            total += self._cached(request.response_format, _json_chars)
        return total

    def _messages_chars(self, messages: Sequence[Message]) -> int:
        # The loop's requests usually extend the previous one (the same message objects plus
        # the new ones): then only the new tail is measured, so the cost stays flat per step.
        prev, prev_total = self._prev_messages, self._prev_total
        k = len(prev)
        extends = 0 < k <= len(messages) and messages[0] is prev[0] and messages[k - 1] is prev[-1]
        total = prev_total if extends else 0
        for message in messages[k if extends else 0 :]:
            if message.tool_calls is None:
                total += len(message.content) if message.content else 0
            else:
                total += self._cached(message, _message_chars)
        self._prev_messages, self._prev_total = messages, total
        return total

    def _cached(self, obj: Any, measure: Callable[[Any], int]) -> int:
        hit = self._sizes.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        size = measure(obj)
        self._sizes[id(obj)] = (obj, size)
        return size


def _add_call(
    calls: list[ToolCall],
    arguments: list[str],
    n: int,
    call_id: str | None,
    name: str,
    raw: Any,
) -> None:
    """Append one tool call and its arguments JSON; a string is parsed like a wire payload."""
    if isinstance(raw, str):
        args_json = raw
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        value: dict[str, Any] | str = parsed if isinstance(parsed, dict) else raw
    elif isinstance(raw, dict):
        args_json, value = dumps_spaced(raw), raw
    else:  # a non-object final output: sent as the raw JSON it is
        args_json = dumps_spaced(raw)
        value = args_json
    calls.append(ToolCall(id=call_id or f"call_{n}_{len(calls)}", name=name, arguments=value))
    arguments.append(args_json)


def _halves(text: str) -> list[str]:
    mid = len(text) // 2
    return [text[:mid], text[mid:]] if mid else [text]


def _tokens(chars: int) -> int:
    return -(-chars // 4)  # ceil without floats


def _message_chars(message: Message) -> int:
    size = len(message.content) if message.content else 0
    return size + sum(len(call.arguments_json()) for call in message.tool_calls or ())


def _tool_chars(tool: ToolSpec) -> int:
    return len(tool.name) + len(tool.description) + _json_chars(tool.parameters)


def _json_chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _invalid(n: int, what: str, exc: ValueError) -> ProviderError:
    # A pydantic error is several lines; keep the one-line location and message.
    detail = " ".join(line.strip() for line in str(exc).splitlines()[1:3])
    return ProviderError(
        f"scripted model: invalid {what} at call {n}: {detail}", kind="ScriptInvalid"
    )
