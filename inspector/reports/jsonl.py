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
import marshal
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel

from inspector import __version__
from inspector.core.compact_json import dumps
from inspector.core.events import (
    EVENT_ADAPTER,
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from inspector.core.records import RunRecord, Step
from inspector.reports.json_pieces import (
    GROUP_CHARS,
    Piece,
    PieceCache,
    array,
    obj,
    piece,
    with_items,
    written,
)
from inspector.reports.jsonl_requests import RequestDeltas, RequestExpander
from inspector.reports.model_json import model_json, model_value
from inspector.reports.redact import redacted_json
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


class TimedEvents(Protocol):
    """Events an export writes: their number first, then each once, in order (a list, or the
    store's ``EventStream`` reading them as they are written)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Timed]: ...


def header(record: RunRecord, events: TimedEvents, *, synthesized: bool) -> dict[str, Any]:
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
    message are written once. The lines of steps, most of a long run's text, are put together
    from their pieces' text (``_STEP_LINES``); a delta's or a tool result's is its stored JSON
    (``VERBATIM_KINDS``)."""

    def __init__(self, deltas: RequestDeltas) -> None:
        self.deltas = deltas
        self.steps: PieceCache[Piece] = PieceCache()
        # A step written again with the same request and raw pieces (the record's): its piece.
        self._again: PieceCache[tuple[Piece, Piece, Piece]] = PieceCache()
        self._run_ids: dict[str, str] = {}
        # Pieces written in lines of the group being put together (steps, the scenario), and
        # the ones in lines found to hold no secret (by id, held: an id stays its piece's): the
        # record's copy of them (the same piece) is not searched again.
        self._group_pieces: list[Piece] = []
        self._clean: dict[int, Piece] = {}
        # The scenario source run_started wrote: its value and its piece (``_scenario``).
        self._scenario: tuple[bytes, Piece] | None = None
        # The texts of the pieces made from values (a message, a step's fields, a request's...)
        # since the line being put together started. While every group of lines so far held no
        # secret, a step's line is searched as those (the rest of it is the export's own keys
        # and numbers, or pieces searched before, clean) and a stored line as its stored JSON:
        # ``json_pieces.written``'s ``parts``. Off for good once a group may hold one.
        self._fresh: list[str] = []
        self._by_parts = _STEP_LINES
        deltas.fresh = self._fresh

    def groups(self, events: Iterable[Timed]) -> Iterator[list[str]]:
        """The lines of ``events`` as an export writes them, about ``GROUP_CHARS`` characters
        of lines at a time (searched for secrets together: ``json_pieces.written``)."""
        texts: list[str] = []
        searched: list[str] = []  # what is searched of each line (``Piece.search``)
        parts: list[str] = []  # what is searched of the group (``_by_parts``)
        fresh = self._fresh
        # How to make each line's value, for a group that may hold a secret: its piece, or its
        # event (a line of stored JSON: the event's dump).
        makers: list[Piece | Timed] = []
        size = 0
        run_ids = self._run_ids
        for timed in events:
            stored = timed.stored_json if _as_stored(type(timed)) else None  # type: ignore[attr-defined]
            if stored is not None and stored.startswith(_VERBATIM_STARTS):
                # The event's stored JSON (``AsStored``: its dump without ``run_id``, which
                # comes first).
                run_id = timed.event.run_id
                text = (
                    f'{{"version":{JSONL_VERSION},"t_ms":{number(timed.t_ms)},'
                    f'"run_id":{run_ids.get(run_id) or self.run_id(run_id)},{stored[1:]}'
                )
                makers.append(timed)
                searched.append(text)
                if self._by_parts:  # its stored JSON, and the run id's text when first written
                    parts.append(stored)
                    parts += fresh
            else:
                kind = type(timed.event)
                if texts and kind is RunFinished:  # its steps' lines searched first
                    yield self._written(texts, searched, makers, parts)
                    texts, searched, makers, parts, size = [], [], [], [], 0
                line = self.line(timed)
                text = line.text
                makers.append(line)
                searched.append(text if line.search is None else line.search)
                if not self._by_parts:
                    pass
                elif _STEP_LINES and (kind is StepStarted or kind is StepFinished):
                    parts += fresh
                else:
                    parts.append(searched[-1])
            if fresh:
                fresh.clear()
            texts.append(text)
            size += len(text)
            if size >= GROUP_CHARS:
                yield self._written(texts, searched, makers, parts)
                texts, searched, makers, parts, size = [], [], [], [], 0
        if texts:
            yield self._written(texts, searched, makers, parts)

    def _written(
        self,
        texts: list[str],
        searched: list[str],
        makers: list[Piece | Timed],
        parts: list[str],
    ) -> list[str]:
        def value_of(n: int) -> Any:
            maker = makers[n]
            return maker.make() if isinstance(maker, Piece) else _dumped(maker)

        # Each line searched whole when the group may hold a secret (a piece made in a line
        # before it in the group is searched in that line's parts only).
        out = written(texts, value_of, searched, parts if self._by_parts else None)
        if out is texts:  # every line clean: so are the pieces they hold
            self._clean.update((id(p), p) for p in self._group_pieces)
        else:
            self._by_parts = False
        self._group_pieces = []
        return out

    def line(self, timed: Timed) -> Piece:
        event = timed.event
        if _STEP_LINES and type(event) is StepStarted:
            return self._step_started(timed, event)
        if _STEP_LINES and type(event) is StepFinished:
            return self._step_finished(timed, event)
        if isinstance(event, StepStarted):
            # The request goes last, after ``forced``, as version 2 always wrote it.
            dump = event.model_dump(mode="json", exclude={"request"})
            dump["request"] = self.deltas.request_piece(event.index, event.request)
        elif isinstance(event, StepFinished):
            dump = _with(event, step=self.step(event.step))
        elif isinstance(event, RunFinished):
            return self._run_finished(timed, event)
        elif type(event) is RunStarted and _SCENARIO_PIECE:
            dump = _with(event, scenario_source=self.scenario(event))
        else:
            return piece(_dumped(timed))
        return obj({"version": JSONL_VERSION, "t_ms": timed.t_ms, **dump})

    def _run_finished(self, timed: Timed, event: RunFinished) -> Piece:
        record = event.record
        pieces = [self.step(step) for step in record.steps]
        steps = array(pieces)
        # The transcript's messages are the requests' (one object each, as loaded): the texts
        # of those first written here are the ones added to ``_fresh`` from ``start`` on.
        start = len(self._fresh)
        transcript = array([self.deltas.message_piece(m) for m in record.transcript])
        first_written = self._fresh[start:]
        scenario = self.scenario(record) if _SCENARIO_PIECE else None
        written = {"scenario_source": scenario} if scenario is not None else {}

        def line_of(steps: Piece, **more: Piece) -> Piece:
            fields = _with(record, **{"steps": steps, "transcript": transcript, **written, **more})
            dump = _with(event, record=obj(fields))
            return obj({"version": JSONL_VERSION, "t_ms": timed.t_ms, **dump})

        line = line_of(steps)
        # Searched without the steps and the scenario already found clean in the lines before
        # (the step_finished lines, run_started's): what those pieces hold is searched once.
        # While every group before was clean (``_by_parts``), so were the messages written in
        # them: the transcript is searched as the messages first written here.
        clean = self._clean
        unknown = [p for p in pieces if clean.get(id(p)) is not p]
        known_scenario = scenario is not None and clean.get(id(scenario)) is scenario
        known_transcript = self._by_parts
        if len(unknown) == len(pieces) and not known_scenario and not known_transcript:
            return line
        # A clean piece stands as ``0``: a value that leaves the search of the keys before it
        # as it was or makes it find more (never less; docs/compare-export.md).
        elided = {"scenario_source": _ELIDED} if known_scenario else {}
        if known_transcript:
            elided["transcript"] = _ELIDED
        search = line_of(array(unknown), **elided).text
        if known_transcript and first_written:  # searched apart: ``json_pieces.written``
            search = "\n".join([search, *first_written])
        return Piece(line.text, line.make, search)

    def scenario(self, model: RunStarted | RunRecord) -> Piece:
        """The scenario source's piece, written once: the record's is run_started's when the
        two values are the same (same types, same key order: ``marshal`` writes them the
        same), as they are when read from one store. Marshal's version 2: the later ones
        mark objects referenced more than once, which two equal values need not share."""
        source = model.scenario_source
        try:
            same = marshal.dumps(source, 2)
        except ValueError:  # a value marshal cannot write: its own piece
            same = b""
        known = self._scenario
        if known is not None and same and known[0] == same:
            return known[1]
        made = _field_piece(model, "scenario_source")
        self._scenario = (same, made)
        self._group_pieces.append(made)
        return made

    def _step_started(self, timed: Timed, event: StepStarted) -> Piece:
        """``{"version", "t_ms", **event's dump but its request, "request"}`` from its pieces'
        text: the dump's items are the event's fields in order (``_STEP_LINES``)."""
        forced = event.forced
        if forced is None:
            forced_text = "null"
        else:
            forced_text = dumps(forced.model_dump(mode="json"))
            self._fresh.append(forced_text)
        request = self.deltas.request_piece(event.index, event.request)
        text = (
            f'{{"version":{JSONL_VERSION},"t_ms":{number(timed.t_ms)},'
            f'"run_id":{self.run_id(event.run_id)},"kind":"step_started",'
            f'"index":{integer(event.index)},"attempt":{integer(event.attempt)},'
            f'"forced":{forced_text},"request":{request.text}}}'
        )

        def make() -> dict[str, Any]:
            dump = event.model_dump(mode="json", exclude={"request"})
            return {"version": JSONL_VERSION, "t_ms": timed.t_ms, **dump, "request": request.make()}

        return Piece(text, make)

    def _step_finished(self, timed: Timed, event: StepFinished) -> Piece:
        step = self.step(event.step)
        text = (
            f'{{"version":{JSONL_VERSION},"t_ms":{number(timed.t_ms)},'
            f'"run_id":{self.run_id(event.run_id)},"kind":"step_finished","step":{step.text}}}'
        )

        def make() -> dict[str, Any]:
            dump = event.model_dump(mode="json", exclude={"step"})
            return {"version": JSONL_VERSION, "t_ms": timed.t_ms, **dump, "step": step.make()}

        return Piece(text, make)

    def run_id(self, run_id: str) -> str:
        made = self._run_ids.get(run_id)
        if made is None:
            made = self._run_ids[run_id] = dumps(run_id)
            self._fresh.append(made)
        return made

    def step(self, step: Step) -> Piece:
        """The step's dump, its request and raw exchange last, as deltas."""
        request = self.deltas.request_piece(step.index, step.request)
        raw = self.deltas.raw_piece(step.index, step.raw)
        again = self._again.find(step)
        if again is not None and again[0] is request and again[1] is raw:
            return again[2]
        fields = self.steps.find(step)
        if fields is None:
            fields = self.steps.put(step, _step_fields(step))
            self._fresh.append(fields.text)
        out = with_items(fields, ("request", request), ("raw", raw))
        self._again.put(step, (request, raw, out))
        self._group_pieces.append(out)
        return out


_NOT_FIELDS = frozenset({"request", "raw"})


def _step_fields(step: Step) -> Piece:
    """A step's dump without its request and raw exchange (written as deltas)."""
    return Piece(model_json(step, _NOT_FIELDS), lambda: model_value(step, _NOT_FIELDS))


def _field_piece(model: BaseModel, field: str) -> Piece:
    """One field's value as ``model``'s dump has it."""
    value = type(model).__pydantic_serializer__.to_python(model, mode="json", include={field})
    return piece(value[field])


_ELIDED = Piece("0", lambda: 0)


def _dumped(timed: Timed) -> dict[str, Any]:
    """An event's line as its dump (before redaction)."""
    return {"version": JSONL_VERSION, "t_ms": timed.t_ms, **timed.event.model_dump(mode="json")}


def number(value: Any) -> str:
    """``dumps`` of a number (a finite float is its ``repr``, as ``json.dumps`` writes it)."""
    if type(value) is float and value - value == 0.0:
        return float.__repr__(value)
    return dumps(value)


def integer(value: int) -> str:
    return int.__repr__(value) if type(value) is int else dumps(value)


def _shape_is(cls: type[BaseModel], names: tuple[str, ...]) -> bool:
    """Whether ``cls``'s dump is its fields ``names`` in this order under their own names,
    none left out by a rule of its own, no serializer of the model's own."""
    fields = cls.model_fields
    return (
        tuple(fields) == names
        and not cls.__pydantic_decorators__.model_serializers
        and not cls.__pydantic_decorators__.field_serializers
        and all(
            f.alias is None
            and f.serialization_alias is None
            and f.exclude is None
            and getattr(f, "exclude_if", None) is None
            for f in fields.values()
        )
    )


# The scenario source written once (run_started's and the record's) where both models hold it
# as a field of their own dump.
_SCENARIO_PIECE = all(
    "scenario_source" in cls.model_fields
    and not cls.__pydantic_decorators__.model_serializers
    and cls.model_fields["scenario_source"].serialization_alias is None
    for cls in (RunStarted, RunRecord)
)
# The step lines written from their pieces' text, in the fields' order checked here; another
# shape takes the dump's way.
_STEP_LINES = _shape_is(
    StepStarted, ("run_id", "kind", "index", "attempt", "request", "forced")
) and _shape_is(StepFinished, ("run_id", "kind", "step"))


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
    record: RunRecord, events: TimedEvents, *, synthesized: bool = False
) -> Iterator[str]:
    """The export, line by line (each without its newline), produced as it is written."""
    yield redacted_json(header(record, events, synthesized=synthesized))
    for group in _EventLines(RequestDeltas()).groups(with_streams_redacted(events)):
        yield from group


def jsonl_chunks(
    record: RunRecord, events: TimedEvents, *, synthesized: bool = False
) -> Iterator[str]:
    """``jsonl_lines`` as a file holds them (each line ending with a newline), many lines to a
    chunk."""
    yield redacted_json(header(record, events, synthesized=synthesized)) + "\n"
    for group in _EventLines(RequestDeltas()).groups(with_streams_redacted(events)):
        group.append("")  # the last line's newline, in the one join (a record's line is MBs)
        yield "\n".join(group)


@cache
def _as_stored(cls: type) -> bool:
    """Whether events of this class come with their stored JSON (``AsStored``); asked of the
    class, not of each event (a pydantic model answers a missing attribute slowly)."""
    return hasattr(cls, "stored_json")


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
