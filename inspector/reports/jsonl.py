"""A run's events as JSON Lines: one object per line, every line versioned.

Line 1 is a header: ``{"version", "kind": "header", "run_id", "record_version", "scenario",
"status", "events", "synthesized", "exported_by"}``. Every following line is one event:
``{"version", "t_ms", **event}`` — the event's own dump (its ``kind`` included), except that a
request repeating messages written before says so instead (``jsonl_requests``; version 2), so
the file grows with the turn's distinct content. ``read_jsonl`` parses it back to the events.
``t_ms`` is milliseconds from the run's start. ``synthesized: true`` says the events were
rebuilt from the record (no event log was stored). Credentials are redacted
(``inspector.reports.redact``). Each line is spliced from pieces written once (a step's dump,
a request's fields, a message: ``json_pieces``), byte for byte the line dumped whole; a delta's
or a tool result's from the JSON the store holds (``VERBATIM_KINDS``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from inspector import __version__
from inspector.core.compact_json import dumps
from inspector.core.events import (
    EVENT_ADAPTER,
    Event,
    RunFinished,
    StepFinished,
    StepStarted,
)
from inspector.core.records import RunRecord, Step
from inspector.reports.json_pieces import (
    Piece,
    PieceCache,
    array,
    obj,
    piece,
    with_key,
)
from inspector.reports.jsonl_requests import RequestDeltas, RequestExpander
from inspector.reports.redact import may_hold_secrets, redacted_json
from inspector.reports.stream_secrets import with_streams_redacted

# 2: requests as differences from earlier ones (``jsonl_requests``); 1 wrote them whole.
JSONL_VERSION = 2

# Kinds whose line is the event's dump unchanged and whose fields are strings, integers,
# booleans and nulls only. For them the store's JSON (pydantic's ``model_dump_json``, which
# escapes strings as ``json.dumps(ensure_ascii=False)`` does: every code point, tested) is the
# text ``json.dumps`` writes of the dump, so a line is spliced from it as it was stored
# (``AsStored``). Not a kind with a float or ``Any`` field: pydantic writes 1e16 where
# ``json.dumps`` writes 1e+16.
VERBATIM_KINDS = frozenset(
    {"text_delta", "reasoning_delta", "tool_call_delta", "tool_executed", "attempt_cleared"}
)
_VERBATIM_STARTS = tuple(f'{{"kind":"{kind}",' for kind in sorted(VERBATIM_KINDS))


class Timed(Protocol):
    """An event with its time (``StoredEvent`` from the store, ``TimedEvent`` synthesized)."""

    @property
    def t_ms(self) -> float: ...

    @property
    def event(self) -> Event: ...


def header(record: RunRecord, events: Sequence[Timed], *, synthesized: bool) -> dict[str, Any]:
    return {
        "version": JSONL_VERSION,
        "kind": "header",
        "run_id": record.run_id,
        "record_version": record.version,
        "scenario": record.scenario,
        "status": record.status,
        "events": len(events),
        "synthesized": synthesized,
        "exported_by": f"agent-inspector {__version__}",
    }


def event_line(timed: Timed, deltas: RequestDeltas) -> dict[str, Any]:
    """The line of one event as a JSON value (before redaction)."""
    value: dict[str, Any] = _EventLines(deltas).line(timed).value
    return value


class _EventLines:
    """Event lines as pieces (``json_pieces``): a step's dump, its request's fields and each
    message are written once, and each is tested for secrets once."""

    def __init__(self, deltas: RequestDeltas) -> None:
        self.deltas = deltas
        self.steps = PieceCache()

    def line(self, timed: Timed) -> Piece:
        event = timed.event
        if isinstance(event, StepStarted):
            # The request goes last, after ``forced``, as version 2 always wrote it.
            dump = event.model_dump(mode="json", exclude={"request"})
            dump["request"] = self.deltas.request_piece(event.index, event.request)
        elif isinstance(event, StepFinished):
            dump = _with(event, step=self.step(event.step))
        elif isinstance(event, RunFinished):
            record = event.record
            steps = array(self.step(step) for step in record.steps)
            # The transcript's messages are the requests' (one object each, as loaded).
            transcript = array(self.deltas.message_piece(m) for m in record.transcript)
            dump = _with(event, record=obj(_with(record, steps=steps, transcript=transcript)))
        else:
            return piece(
                {"version": JSONL_VERSION, "t_ms": timed.t_ms, **event.model_dump(mode="json")}
            )
        return obj({"version": JSONL_VERSION, "t_ms": timed.t_ms, **dump})

    def step(self, step: Step) -> Piece:
        """The step's dump, its request and raw exchange last, as deltas."""
        fields = self.steps.get(
            step, lambda: piece(step.model_dump(mode="json", exclude={"request", "raw"}))
        )
        request = self.deltas.request_piece(step.index, step.request)
        raw = self.deltas.raw_piece(step.index, step.raw)
        return with_key(with_key(fields, "request", request), "raw", raw)


def _with(model: BaseModel, **pieces: Piece) -> dict[str, Any]:
    """``model``'s dump with ``pieces`` in place of the fields they name (at those fields'
    places)."""
    dump = model.model_dump(mode="json", exclude=set(pieces))
    out: dict[str, Any] = {}
    for field in type(model).model_fields:
        if field in pieces:
            out[field] = pieces[field]
        elif field in dump:
            out[field] = dump[field]
    return out


def jsonl_lines(
    record: RunRecord, events: Sequence[Timed], *, synthesized: bool = False
) -> Iterator[str]:
    """The export, line by line (each without its newline), produced as it is written."""
    yield redacted_json(header(record, events, synthesized=synthesized))
    lines = _EventLines(RequestDeltas())
    for timed in with_streams_redacted(events):
        stored = getattr(timed, "stored_json", None)
        text = None if stored is None else _verbatim_line(timed, stored)
        yield lines.line(timed).written() if text is None else text


def _verbatim_line(timed: Any, stored: str) -> str | None:
    """The line of an event handed out as its stored JSON (``AsStored``: its dump without
    ``run_id``, which comes first) when that is the line's text and holds nothing to redact;
    None for the others, which take the model's way."""
    if not stored.startswith(_VERBATIM_STARTS):
        return None
    t_ms, run_id = dumps(timed.t_ms), dumps(timed.event.run_id)
    text = f'{{"version":{JSONL_VERSION},"t_ms":{t_ms},"run_id":{run_id},{stored[1:]}'
    return None if may_hold_secrets(text) else text


@dataclass(frozen=True)
class ReadEvent:
    t_ms: float
    event: Event


def read_jsonl(lines: Iterable[str]) -> tuple[dict[str, Any], list[ReadEvent]]:
    """An export's header and events (version 1 or 2), every request rebuilt whole.

    Raises ``ValueError`` naming the line for a line that is not an export's."""
    header: dict[str, Any] | None = None
    expander = RequestExpander()
    out: list[ReadEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if header is None:
                if data.get("kind") != "header":
                    raise ValueError("the first line is not an agent-inspector export header")
                header = data
                continue
            out.append(_read_event(data, expander))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {number}: {str(exc).splitlines()[0]}") from None
    if header is None:
        raise ValueError("empty file: no agent-inspector export header")
    return header, out


def _read_event(data: dict[str, Any], expander: RequestExpander) -> ReadEvent:
    data.pop("version", None)
    t_ms = float(data.pop("t_ms"))
    kind = data.get("kind")
    if kind == "step_started":
        data["request"], messages = expander.request(data["index"], data["request"])
        event = EVENT_ADAPTER.validate_python(data)
        assert isinstance(event, StepStarted)
        event.request.messages = messages  # validated as read; a view, not a copy
        return ReadEvent(t_ms, event)
    dumps = [data["step"]] if kind == "step_finished" else []
    if kind == "run_finished":
        dumps = data["record"]["steps"]
    shared = []
    for step in dumps:
        step["request"], messages = expander.request(step["index"], step["request"])
        step["raw"] = expander.raw(step["index"], step.get("raw"))
        shared.append(messages)
    event = EVENT_ADAPTER.validate_python(data)
    steps = (
        [event.step]
        if isinstance(event, StepFinished)
        else event.record.steps
        if isinstance(event, RunFinished)
        else []
    )
    for step_model, messages in zip(steps, shared, strict=True):
        step_model.request.messages = messages
    return ReadEvent(t_ms, event)
