"""The store as an engine event subscriber: a run is written while it streams.

Transactions follow the step boundaries. ``StepStarted`` commits the step row ``pending`` (the
engine emits it just before the request leaves); ``StepFinished`` commits the step's streamed
events and its final row together; ``RunFinished`` commits the record. Deltas are kept in memory
until then, so a crash loses at most the events of the step in flight.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from inspector.core.events import (
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
)
from inspector.core.records import RunRecord
from inspector.store.database import StoreError
from inspector.store.writer import EventRow, RowWriter

# Events whose content the rows already hold: stored as a marker and rebuilt on read.
REBUILT_KINDS = frozenset({"run_started", "step_started", "step_finished", "run_finished"})
# A step streaming this many events is written in parts (memory stays bounded).
MAX_BUFFERED = 5000


@dataclass
class _RunState:
    t0: float
    seq: int = 0
    buffered: list[EventRow] = field(default_factory=list)


class Recorder:
    """``EventSink`` writing every run it sees start. A storage failure raises ``StoreError``
    naming the run and the file (the engine reports it and detaches the recorder; the run goes
    on) and is kept in ``error``."""

    def __init__(self, writer: RowWriter, clock: Callable[[], float] = time.perf_counter) -> None:
        self.writer = writer
        self.clock = clock
        self.error: StoreError | None = None
        self._runs: dict[str, _RunState] = {}
        self._host = socket.gethostname()
        self._pid = os.getpid()

    def __call__(self, event: Event) -> None:
        try:
            self._record(event)
        except (sqlite3.Error, StoreError) as exc:
            self._runs.pop(event.run_id, None)
            message = str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
            self.error = StoreError(
                f"recording run {event.run_id} to {self.writer.path} failed: {message}"
            )
            raise self.error from None

    def _record(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            state = self._runs[event.run_id] = _RunState(t0=self.clock())
            with self.writer.transaction():
                self.writer.start_run(event, host=self._host, pid=self._pid)
                self.writer.add_events(event.run_id, [self._row(state, event)])
            return
        state_or_none = self._runs.get(event.run_id)
        if state_or_none is None:
            # A run this recorder did not see start: keep its final record, if it gets one.
            if isinstance(event, RunFinished):
                self._save_unseen(event)
            return
        state = state_or_none
        row = self._row(state, event)
        if isinstance(event, StepStarted):
            with self.writer.transaction():
                self._flush(event.run_id, state)
                self.writer.start_step(
                    event.run_id, event.index, event.attempt, event.request, event.forced
                )
                self.writer.add_events(event.run_id, [row])
        elif isinstance(event, StepFinished):
            with self.writer.transaction():
                self._flush(event.run_id, state)
                self.writer.finalize_step(event.run_id, event.step)
                self.writer.add_events(event.run_id, [row])
        elif isinstance(event, RunFinished):
            with self.writer.transaction():
                self._flush(event.run_id, state)
                self.writer.finish_run(event.record)
                self.writer.add_events(event.run_id, [row])
            del self._runs[event.run_id]
        else:
            state.buffered.append(row)
            if len(state.buffered) >= MAX_BUFFERED:
                with self.writer.transaction():
                    self._flush(event.run_id, state)

    def _row(self, state: _RunState, event: Event) -> EventRow:
        seq = state.seq
        state.seq += 1
        t_ms = round((self.clock() - state.t0) * 1000, 3)
        body = None if event.kind in REBUILT_KINDS else event.model_dump_json(exclude={"run_id"})
        index = (
            event.step.index if isinstance(event, StepFinished) else getattr(event, "index", None)
        )
        return (seq, t_ms, event.kind, index, body)

    def _flush(self, run_id: str, state: _RunState) -> None:
        if state.buffered:
            self.writer.add_events(run_id, state.buffered)
            state.buffered = []

    def _save_unseen(self, event: RunFinished) -> None:
        exists = self.writer.conn.execute(
            "SELECT 1 FROM runs WHERE run_id = ?", (event.run_id,)
        ).fetchone()
        if exists is None:
            save_record(self.writer, event.record, host=self._host, pid=self._pid)


def save_record(writer: RowWriter, record: RunRecord, *, host: str, pid: int) -> None:
    """Writes a finished record whole (no events): the same rows the recorder writes."""
    header = RunStarted.from_record(record)
    with writer.transaction():
        writer.start_run(header, host=host, pid=pid)
        for step in record.steps:
            writer.finalize_step(record.run_id, step)
        writer.finish_run(record)
