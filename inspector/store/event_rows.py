"""A run's events rebuilt from their rows: all at once (``events``, ``events_as_stored``) or
as they are iterated, ``CHUNK`` rows at a time (``event_stream``: an export writes each line
as it goes, holding the run's steps and record but not its 60,000 events).

Most events are stored whole as JSON and validated from it (``event_bodies``), ``BATCH`` at a
time; the step events and the run's end are rebuilt from the steps (read once, first) and the
record; a delta of a step's text is a reference to the text the finished step holds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from inspector.core.events import (
    EVENT_ADAPTER,
    Event,
    FeedbackInjected,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    VerdictsReady,
)
from inspector.core.messages import Message
from inspector.core.records import RunRecord, Step
from inspector.store.event_bodies import as_written, validated_events
from inspector.store.models import AsStored, PlainEvent, StoredEvent
from inspector.store.reader import (
    BATCH,
    _constructed,
    _load,
    collector_paused,
    resolve,
    steps,
)
from inspector.store.recorder import STEP_REF
from inspector.store.texts import MARKED_PREFIXES, TextReader, marked

# Rows read and validated per step of a stream: a few batches (the rows of one chunk, their
# events and the lines made of them are what the stream holds besides the steps).
CHUNK = BATCH * 4
_REBUILT = frozenset({"run_started", "step_started", "step_finished"})
_KINDS_OF_STEPS = "'step_started', 'step_finished', 'run_finished'"
_ROWS = "SELECT t_ms, kind, idx, body FROM events WHERE run_id = ? ORDER BY seq"
# The rows ``_Run.events`` gives an event for (what ``_given`` says of one row), in SQL: their
# number is counted, and the last one found, without reading the rows into Python. A body that
# ends as a JSON object does (validated: a damaged one fails the read), refers to its step or
# holds large texts; else the row's kind is rebuilt (``run_finished``: when a record is stored).
_ENDS_AS_OBJECT = {"UTF-8": "substr(CAST(body AS BLOB), -1) = X'7D'"}  # the last byte, O(1)
_GIVEN = (
    "(body IS NOT NULL AND ({ends} OR substr(body, 1, {ref}) = ? OR (instr(body, '{{\"$') > 0"
    " AND ({marks})))) OR kind IN ({rebuilt}) OR (kind = 'run_finished' AND ?)"
)


def _given_sql(encoding: str) -> str:
    return _GIVEN.format(
        ends=_ENDS_AS_OBJECT.get(encoding, "substr(body, -1) = '}'"),
        ref=len(STEP_REF),
        marks=" OR ".join(["instr(body, ?) > 0"] * len(MARKED_PREFIXES)),
        rebuilt=", ".join(f"'{kind}'" for kind in sorted(_REBUILT)),
    )


Timed = StoredEvent | AsStored | PlainEvent


class EventStream:
    """A run's events, read from the store as they are iterated (once). ``len`` is their
    number, known before the first is read; ``record``: the run's record when the last event
    is ``RunFinished`` (its record), else None."""

    def __init__(
        self,
        count: int,
        record: RunRecord | None,
        events: Iterator[Timed],
        guard: Callable[[], AbstractContextManager[Any]] = nullcontext,
    ) -> None:
        self._count = count
        self.record = record
        self._events = events
        self._guard = guard

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Timed]:
        with self._guard():  # errors while reading, as the store reports them
            yield from self._events

    def guarded(self, guard: Callable[[], AbstractContextManager[Any]]) -> EventStream:
        self._guard = guard
        return self


class _Run:
    """What rebuilding a run's events needs besides their rows: its steps, header, record."""

    def __init__(self, conn: sqlite3.Connection, path: Path, run_id: str, needs_steps: bool):
        self.conn, self.path, self.run_id = conn, path, run_id
        self.texts = TextReader(conn)
        self.header_json, self.record_json, transcript_json = conn.execute(
            "SELECT header, record, transcript FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        # The record's transcript shares the messages of the steps' requests, as ``load`` has it.
        self.parsed: dict[str, Message] = {}
        transcript = json.loads(transcript_json or "[]")
        self.loaded = (
            steps(conn, run_id, self.parsed, also=transcript, texts=self.texts)
            if needs_steps
            else []
        )
        self.by_index = {s.index: s for s in self.loaded}
        self._record: RunRecord | None = None

    def record(self) -> RunRecord:
        """The record (read once): the steps already read, sharing their requests' messages."""
        if self._record is None:
            self._record = _load(
                self.conn, self.path, self.run_id, self.loaded, self.texts, self.parsed
            )
        return self._record

    def events(
        self, rows: list[Any], as_stored: frozenset[str], offsets: dict[tuple[int, str], int]
    ) -> Iterator[tuple[float, Event | None, str | None]]:
        """Each row's offset and event (None: a row that is not an event to give), and its
        stored JSON when it is to come with it (``AsStored``)."""
        run_id = self.run_id
        plain = validated_events([r[1] for r in rows], [r[3] for r in rows], run_id, BATCH)
        for (t_ms, kind, index, body), validated in zip(rows, plain, strict=True):
            if validated is not None:  # so its body is whole and inline (``validated_events``)
                whole = kind in as_stored and as_written(kind, body)
                yield t_ms, validated, body if whole else None
                continue
            event: Event | None = None
            if body is not None and body.startswith(STEP_REF):
                length = int(body[len(STEP_REF) : -1])
                at = offsets.get((index, kind), 0)
                offsets[index, kind] = at + length
                event = _from_step(run_id, kind, self.by_index[index], at, length)
            elif body is not None and marked(body):
                event = EVENT_ADAPTER.validate_python({**self.texts.loads(body), "run_id": run_id})
            elif kind == "run_started":
                header = self.texts.loads(self.header_json)
                event = RunStarted.model_validate({**header, "run_id": run_id})
            elif kind == "step_started":
                step = self.by_index[index]
                # The step's parts were validated as they were read.
                event = _constructed(
                    StepStarted,
                    run_id=run_id,
                    kind="step_started",
                    index=step.index,
                    attempt=step.attempt,
                    request=step.request,
                    forced=step.forced,
                )
            elif kind == "step_finished":
                event = _constructed(
                    StepFinished, run_id=run_id, kind="step_finished", step=self.by_index[index]
                )
            elif kind == "run_finished" and self.record_json is not None:
                event = RunFinished(run_id=run_id, record=self.record())
            yield t_ms, event, None


def _run(conn: sqlite3.Connection, path: Path, run_id: str) -> _Run:
    run_id = resolve(conn, path, run_id)
    needs_steps = conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM events WHERE run_id = ? AND kind IN ({_KINDS_OF_STEPS}))",
        (run_id,),
    ).fetchone()[0]
    return _Run(conn, path, run_id, bool(needs_steps))


def _stream(run: _Run, as_stored: frozenset[str]) -> EventStream:
    """The run's events to read as iterated, their number and last one found first."""
    conn = run.conn
    (encoding,) = conn.execute("PRAGMA encoding").fetchone()
    given = f"run_id = ? AND ({_given_sql(encoding)})"
    params = (run.run_id, STEP_REF, *MARKED_PREFIXES, run.record_json is not None)
    (count,) = conn.execute(f"SELECT count(*) FROM events WHERE {given}", params).fetchone()
    last = conn.execute(
        f"SELECT t_ms, kind, idx, body FROM events WHERE {given} ORDER BY seq DESC LIMIT 1",
        params,
    ).fetchall()
    record = None
    if last and last[0][1] == "run_finished":
        _, event, _ = next(run.events(last, frozenset(), {}))
        record = event.record if isinstance(event, RunFinished) else None
    return EventStream(count, record, _events(run, as_stored, light=True))


def _events(run: _Run, as_stored: frozenset[str], light: bool) -> Iterator[Timed]:
    cursor = run.conn.execute(_ROWS, (run.run_id,))
    offsets: dict[tuple[int, str], int] = {}  # where the next referenced piece of a step starts
    while rows := cursor.fetchmany(CHUNK):
        for t_ms, event, stored in run.events(rows, as_stored, offsets):
            if event is None:
                continue
            if stored is not None:
                yield AsStored(t_ms, event, stored)
            elif light:
                yield PlainEvent(t_ms, event)
            else:
                yield _constructed(StoredEvent, t_ms=t_ms, event=event)  # validated above


def event_stream(
    conn: sqlite3.Connection, path: Path, run_id: str, as_stored: frozenset[str]
) -> EventStream:
    """The run's events as ``events_as_stored`` gives them (``PlainEvent`` for
    ``StoredEvent``), read as they are iterated."""
    return _stream(_run(conn, path, run_id), as_stored)


def events(conn: sqlite3.Connection, path: Path, run_id: str) -> list[StoredEvent]:
    return _all(conn, path, run_id, frozenset())  # type: ignore[return-value]


def events_as_stored(
    conn: sqlite3.Connection, path: Path, run_id: str, kinds: frozenset[str]
) -> list[StoredEvent | AsStored]:
    """``events``, but an event of ``kinds`` stored whole and inline as the recorder wrote it
    (``model_dump_json`` without its run id) comes with that JSON (``AsStored``). Every event
    is validated as ``events`` does: a damaged body fails the read the same way."""
    return _all(conn, path, run_id, kinds)


@collector_paused
def _all(
    conn: sqlite3.Connection, path: Path, run_id: str, as_stored: frozenset[str]
) -> list[StoredEvent | AsStored]:
    return list(_events(_run(conn, path, run_id), as_stored, light=False))  # type: ignore[arg-type]


def _from_step(run_id: str, kind: str, step: Step, at: int, length: int) -> Event:
    """An event stored as a reference to the finished step that holds its content (a piece of
    its text or reasoning: ``length`` characters from ``at``)."""
    if kind == "verdicts":
        return VerdictsReady(run_id=run_id, index=step.index, verdicts=step.verdicts)
    if kind == "feedback_injected":
        return FeedbackInjected(run_id=run_id, index=step.index, messages=step.feedback)
    assert step.response is not None
    whole = step.response.text if kind == "text_delta" else step.response.reasoning or ""
    text = whole[at : at + length]
    if kind == "text_delta":
        return TextDelta(run_id=run_id, index=step.index, text=text)
    return ReasoningDelta(run_id=run_id, index=step.index, text=text)
