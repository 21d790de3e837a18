"""Secrets a stream splits across its deltas, redacted in every fragment that carries a piece.

A step's text, reasoning and tool-call arguments arrive as deltas; the export writes each delta as
a line of its own. ``{"api_key": "hun`` and ``ter2…"}`` are each harmless to a rule that reads
one string at a time, so the whole stream is read instead: its fragments are joined, the secret
spans of the joined text are found by the exports' rules (``reports.redact``: key-shaped tokens,
``Name: value`` credential headers, the values of JSON fields named like a credential, as the
step's message has them), and each fragment keeps what lies outside them.
Concatenated, the fragments are the stream's text with each span replaced: a JSON value by
``"[redacted]"`` (the arguments stay valid JSON, equal to the message's redacted arguments), a
token by ``[redacted]``. A stream without anything to redact is written as recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.compact_json import dumps
from inspector.core.credentials import REDACTED
from inspector.core.events import (
    ReasoningDelta,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
)
from inspector.reports.redact import (
    header_line_spans,
    json_value_spans,
    may_hold_secrets,
    token_spans,
    url_userinfo_spans,
)
from inspector.reports.synthetic_events import TimedEvent

__all__ = [
    "STREAMED_FIELDS",
    "Span",
    "redacted_fragments",
    "secret_spans",
    "with_raw_streams_redacted",
    "with_streams_redacted",
]

_QUOTED_REDACTED = json.dumps(REDACTED)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    replacement: str


def secret_spans(text: str) -> list[Span]:
    """The spans of ``text`` (a whole stream) the exports redact, sorted, none overlapping."""
    if not may_hold_secrets(dumps(text)):
        return []
    spans = [Span(start, end, REDACTED) for start, end in token_spans(text)]
    spans += [Span(start, end, REDACTED) for start, end in header_line_spans(text)]
    spans += [Span(start, end, REDACTED) for start, end in url_userinfo_spans(text)]
    spans += [Span(start, end, _QUOTED_REDACTED) for start, end in json_value_spans(text)]
    return _merged(spans)


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans as one, with the replacement of the one that starts first (a JSON
    value's, which starts at its quote, holds the tokens inside it)."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.end <= span.start:
            continue
        if out and span.start < out[-1].end:
            last = out[-1]
            out[-1] = Span(last.start, max(last.end, span.end), last.replacement)
        else:
            out.append(span)
    return out


def redacted_fragments(fragments: Sequence[str], spans: Sequence[Span]) -> list[str]:
    """``fragments`` with the parts inside ``spans`` (offsets into their concatenation) taken
    out, each span's replacement written in the fragment where the span starts."""
    out = []
    at = 0
    next_span = 0
    for fragment in fragments:
        start, end = at, at + len(fragment)
        at = end
        parts = []
        i = start
        while i < end:
            while next_span < len(spans) and spans[next_span].end <= i:
                next_span += 1
            if next_span == len(spans) or spans[next_span].start >= end:
                parts.append(fragment[i - start :])
                break
            span = spans[next_span]
            if span.start > i:
                parts.append(fragment[i - start : span.start - start])
                i = span.start
            if i == span.start:
                parts.append(span.replacement)
            i = min(span.end, end)
        out.append("".join(parts))
    return out


_DELTAS = frozenset({TextDelta, ReasoningDelta, ToolCallDelta})


def with_streams_redacted(events: Iterable[Any]) -> Iterator[Any]:
    """``events`` (timed: ``.t_ms``, ``.event``) in their order, each delta whose stream holds a
    secret replaced by its redacted fragment. A step's events are held from its first delta
    until the step ends (or another step starts, or the events end): a stream is whole by then.
    Events are told apart by their exact type (a 60,000-event export pays for every test)."""
    held: list[Any] = []
    step = None
    for timed in events:
        event = timed.event
        kind = type(event)
        if not held:
            if kind in _DELTAS:
                held = [timed]
                step = event.index
            else:
                yield timed
        elif kind is StepStarted or (kind is StepFinished and event.step.index != step):
            yield from _released(held)
            held = []
            yield timed
        else:
            held.append(timed)
            if kind is StepFinished:
                yield from _released(held)
                held = []
    yield from _released(held)


def _released(held: list[Any]) -> list[Any]:
    """``held`` (a step's events) with the deltas of each stream that holds a secret
    redacted."""
    streams: dict[tuple[Any, ...], tuple[list[int], list[str]]] = {}
    for at, timed in enumerate(held):
        event = timed.event
        kind = type(event)
        if kind is ToolCallDelta:
            key: tuple[Any, ...] = (kind, event.index, event.call_index)
            text = event.arguments_delta
        elif kind is TextDelta or kind is ReasoningDelta:
            key, text = (kind, event.index), event.text
        else:
            continue
        stream = streams.get(key)
        if stream is None:
            streams[key] = ([at], [text])
        else:
            stream[0].append(at)
            stream[1].append(text)
    out = list(held)
    for key, (places, texts) in streams.items():
        spans = secret_spans("".join(texts))
        if not spans:
            continue
        field = "arguments_delta" if key[0] is ToolCallDelta else "text"
        for at, old, new in zip(places, texts, redacted_fragments(texts, spans), strict=True):
            if new != old:  # written the model's way: a ``TimedEvent`` has no stored JSON
                timed = held[at]
                out[at] = TimedEvent(timed.t_ms, timed.event.model_copy(update={field: new}))
    return out


# The fields the providers' stream events carry text fragments in: OpenAI-style chat chunks
# (``delta.content``, ``delta.reasoning_content`` / ``reasoning``, ``delta.refusal``,
# ``function.arguments``), Anthropic's (``delta.text``, ``delta.partial_json``,
# ``delta.thinking``) and a Responses-style ``delta``. Searched for by name: a pass over every
# string field cost ~4× the events' own encoding.
STREAMED_FIELDS = (
    "content",
    "reasoning_content",
    "reasoning",
    "refusal",
    "arguments",
    "text",
    "partial_json",
    "thinking",
    "delta",
)
# One of them with a string value in JSON text: its name and its (escaped) text.
_STREAMED = re.compile(rf'"({"|".join(STREAMED_FIELDS)})":\s*"([^"\\]*(?:\\.[^"\\]*)*)"')


def with_raw_streams_redacted(response: Any) -> Any:
    """A raw response whose ``events`` (a stream's payloads as the providers record them: JSON
    values, or the data's text) have each fragment of a secret redacted, a stream being the
    strings of one of ``STREAMED_FIELDS`` across the events, of one call or block
    (``_string_leaves``), joined in order; ``response`` itself when nothing needs it.

    Found in the events' JSON text without parsing or walking them (a C pass per response):
    the escaped fragments of a field, joined, are the escaped stream, which ``may_hold_secrets``
    reads (by field name, and by field and the event's ``index`` values where the events have
    several: ``_by_indexes``). Only a response that may hold one is parsed; an event given as
    text that held a piece is written again from its parsed value. A named event
    (``{"event": NAME, "data": TEXT}``, as ``openai_stream`` records a Responses-API-style
    ``response.*.delta``) is searched in its data's text, its fragments a stream per event name
    and item (``item_id``, ``output_index``, ``content_index``, ``summary_index``), and one
    that held a piece gets its data written again the same way."""
    if not isinstance(response, dict):
        return response
    events = response.get("events")
    if not isinstance(events, list) or len(events) < 2:
        return response
    escaped = _escaped_fragments(events)
    suspect = {
        name
        for (name, _), parts in escaped.items()
        if len(parts) > 1 and may_hold_secrets('"' + "".join(parts) + '"')
    }
    if not suspect:
        return response
    parsed = [_parsed(event) for event in events]
    leaves: list[tuple[tuple[Any, ...], Any, Any]] = []  # (stream, holder, key), in order
    for event, value in zip(events, parsed, strict=True):
        if _named_data(event) is None:
            _string_leaves(value, suspect, leaves, ())
        else:  # a named event's deltas: a stream per name (and item, output, content part)
            _string_leaves(value["data"], suspect, leaves, (value["event"],))
    # Each stream alone (two tool calls' interleaved deltas), then, for a name with several
    # streams, all its fragments joined as before: a stream whose events do not all say which
    # call they are of (``openai_stream`` takes a call without ``index`` for its position).
    streams: dict[tuple[Any, ...], list[tuple[Any, Any]]] = {}
    names: dict[str, list[tuple[Any, Any]]] = {}
    for stream, holder, key in leaves:
        streams.setdefault(stream, []).append((holder, key))
        names.setdefault(key, []).append((holder, key))
    changed: set[int] = set()
    groups = [*streams.values(), *(names[n] for n in names if _streams_of(streams, n) > 1)]
    for found in groups:
        texts = [holder[key] for holder, key in found]
        spans = secret_spans("".join(texts))
        for (holder, key), old, new in zip(
            found, texts, redacted_fragments(texts, spans), strict=True
        ):
            if new != old:
                holder[key] = new
                changed.add(id(holder))
    if not changed:
        return response
    out = [
        _written(event, value) if _holds(value, changed) else event
        for event, value in zip(events, parsed, strict=True)
    ]
    return {**response, "events": out}


def _streams_of(streams: dict[tuple[Any, ...], Any], name: str) -> int:
    return sum(1 for stream in streams if stream[0] == name)


def _named_data(event: Any) -> str | None:
    """The data text of a named SSE event as ``openai_stream`` records one that is not a
    ``message`` (``{"event": NAME, "data": TEXT}``: a Responses-API-style
    ``response.function_call_arguments.delta``, an ``error``); None for any other event."""
    if type(event) is dict and len(event) == 2 and type(event.get("event")) is str:
        data = event.get("data")
        return data if type(data) is str else None
    return None


# A named event's stream ids in its data text: an item's deltas told from another's before
# anything is parsed (a Responses-style stream interleaves an answer's text with a call's
# arguments, and ``"pass"`` + ``" w0"`` + ``"word"`` reads as no credential name).
_NAMED_IDS = re.compile(
    r'"(?:output_index|content_index|summary_index|item_id)":\s*("[^"\\]*"|\d+)'
)


def _escaped_fragments(events: list[Any]) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """The escaped strings of ``STREAMED_FIELDS`` in ``events``' JSON text, in order, by field
    name and, for a named event's data (``_named_data``: sought in the text as sent, where
    dumped whole its fields would be escaped inside ``data``), its name and stream ids."""
    plain: list[str] = []
    escaped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for event in events:
        if type(event) is str:  # an OpenAI chunk's data as sent: the usual event
            plain.append(event)
            continue
        data = _named_data(event)
        if data is None:
            plain.append(event if isinstance(event, str) else dumps(event))
            continue
        stream = (event["event"], *_NAMED_IDS.findall(data))
        for name, fragment in _STREAMED.findall(data):
            escaped.setdefault((name, stream), []).append(fragment)
    text = "\n".join(plain)
    for name, fragment in _STREAMED.findall(text):
        escaped.setdefault((name, ()), []).append(fragment)
    if len(set(_INDEX.findall(text))) > 1:  # several calls or blocks, which may interleave
        _by_indexes(text, escaped)
    return escaped


# An event's ``index`` values (an OpenAI chunk's choice and tool call, an Anthropic content
# block), and, in one pass with them, the streamed fields and the ends of events.
_INDEX = re.compile(r'"index":\s*(\d+)')
_INDEXED_PIECES = re.compile(rf"(\n)|{_INDEX.pattern}|{_STREAMED.pattern}")


def _by_indexes(text: str, escaped: dict[tuple[str, tuple[str, ...]], list[str]]) -> None:
    """Add to ``escaped`` the fragments of ``text`` (plain events, one a line) by field name and
    the ``index`` values of their event, whatever the keys' order: two tool calls whose deltas
    interleave, joined by name alone, can break a credential's name in two
    (``{"pass`` + ``{"q": 1}`` + ``word": …``) and read as nothing to redact."""
    ids: list[str] = []
    found: list[tuple[str, str]] = []
    for newline, index, name, fragment in _INDEXED_PIECES.findall(text + "\n"):
        if newline:
            for field, piece in found:
                escaped.setdefault((field, ("index", *ids)), []).append(piece)
            ids, found = [], []
        elif index:
            ids.append(index)
        else:
            found.append((name, fragment))


def _parsed(event: Any) -> Any:
    """A copy of an event to write redacted fragments into (text parsed when it is JSON; a
    named event's data too)."""
    data = _named_data(event)
    try:
        if data is not None:
            return {"event": event["event"], "data": json.loads(data)}
        return json.loads(event if isinstance(event, str) else dumps(event))
    except ValueError:
        return event


def _written(event: Any, value: Any) -> Any:
    if _named_data(event) is not None:
        return {**event, "data": json.dumps(value["data"], ensure_ascii=False)}
    return json.dumps(value, ensure_ascii=False) if isinstance(event, str) else value


def _holds(value: Any, holders: set[int]) -> bool:
    if id(value) in holders:
        return True
    if isinstance(value, dict):
        return any(_holds(item, holders) for item in value.values())
    if isinstance(value, list):
        return any(_holds(item, holders) for item in value)
    return False


# Fields that tell a stream's fragments from another's of the same name: the tool call an
# OpenAI chunk's ``arguments`` belong to (``tool_calls[].index``), the content block of an
# Anthropic event (``index``), a Responses-style event's output item and content part.
_STREAM_IDS = ("index", "output_index", "content_index", "summary_index", "item_id")


def _string_leaves(
    value: Any,
    names: set[str],
    out: list[tuple[tuple[Any, ...], Any, Any]],
    stream: tuple[Any, ...],
    position: int | None = None,
) -> None:
    """Every string under a field in ``names``, in the order of the JSON text, with the object
    holding it, by stream: its field's name and the ``_STREAM_IDS`` of the objects around it
    (two tool calls whose deltas interleave are two streams); an object in a list that has
    none is told by its position there, as ``openai_stream`` tells a call without ``index``."""
    if isinstance(value, dict):
        ids = tuple(value.get(key) for key in _STREAM_IDS if isinstance(value.get(key), int | str))
        if ids or position is not None:
            stream = (*stream, *(ids or (position,)))
        for key, item in value.items():
            if isinstance(item, str):
                if key in names:
                    out.append(((key, *stream), value, key))
            else:
                _string_leaves(item, names, out, stream)
    elif isinstance(value, list):
        for at, item in enumerate(value):
            _string_leaves(item, names, out, stream, at)
