"""The store as an engine event subscriber: a run is written while it streams.

Transactions follow the step boundaries. ``StepStarted`` commits the step row ``pending`` (the
engine emits it just before the request leaves); a finished step's streamed events and its final
row are committed together, in the run's next transaction — its next ``StepStarted``, its
``RunFinished``, or, when the engine waits for anything first (a model, a tool, a timer), one of
their own at the event loop's next turn. So a tool step costs one transaction, not two, and a
finished step is in the store before the turn waits for anything. Without a running event loop
(a writer thread) a finished step is committed at once. Deltas are kept in memory until then,
so a crash loses at most the events of the step in flight.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import sys
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from inspector.core.events import (
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
from inspector.core.records import RunRecord, Step
from inspector.store.database import StoreError
from inspector.store.writer import EventRow, RowWriter

# Events whose content the rows already hold: stored as a marker and rebuilt on read.
REBUILT_KINDS = frozenset({"run_started", "step_started", "step_finished", "run_finished"})
# A step streaming this many events is written in parts (memory stays bounded).
MAX_BUFFERED = 5000


# A streamed piece, verdicts or feedback the finished step holds too is stored as a reference to
# it (``{"$step": ...}``), so a long reply or feedback text is not kept twice (issue 13 item 11).
# Pieces already written (a long stream is written in parts) are rewritten in the step's final
# transaction; until then every row holds its own content, so a crash loses nothing.
STEP_REF = '{"$step":'


@dataclass
class _Pieces:
    """A step's streamed text (or reasoning) pieces: their rows and a digest of them joined."""

    digest: Any = field(default_factory=lambda: hashlib.blake2b(digest_size=16))
    seqs: array[int] = field(default_factory=lambda: array("q"))
    lengths: array[int] = field(default_factory=lambda: array("q"))

    def add(self, seq: int, text: str) -> None:
        self.digest.update(text.encode("utf-8", "surrogatepass"))
        self.seqs.append(seq)
        self.lengths.append(len(text))

    def refs(self, whole: str | None) -> dict[int, str]:
        """Each piece's reference into ``whole``, if the pieces joined are ``whole``."""
        if whole is None or len(whole) != sum(self.lengths):
            return {}
        if hashlib.blake2b(whole.encode("utf-8", "surrogatepass"), digest_size=16).digest() != (
            self.digest.digest()
        ):
            return {}
        # Only the length: a reader rebuilds the offsets adding up the step's pieces in order
        # (all of them are references, or none).
        return {
            seq: f"{STEP_REF}{length}}}"
            for seq, length in zip(self.seqs, self.lengths, strict=True)
        }


@dataclass
class _Finished:
    """A finished step waiting for its run's next transaction: the step, its events not yet
    written (ending with ``step_finished``) and new bodies of rows written before (``refs``)."""

    step: Step
    rows: list[EventRow]
    bodies: dict[int, str]


@dataclass
class _RunState:
    run_id: str
    t0: float
    seq: int = 0
    buffered: list[EventRow] = field(default_factory=list)
    pieces: dict[tuple[int, str], _Pieces] = field(default_factory=dict)  # (step, kind)
    held: list[tuple[int, Event]] = field(default_factory=list)  # verdicts, feedback: (seq, event)
    finished: list[_Finished] = field(default_factory=list)

    def keep(self, row: EventRow, event: Event) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            self.pieces.setdefault((event.index, event.kind), _Pieces()).add(row[0], event.text)
        elif isinstance(event, VerdictsReady | FeedbackInjected):
            self.held.append((row[0], event))
        self.buffered.append(row)

    def refs(self, step: Step) -> dict[int, str]:
        """seq -> reference, for the events of ``step`` whose content it holds itself."""
        response = step.response
        text = self.pieces.pop((step.index, "text_delta"), None)
        reasoning = self.pieces.pop((step.index, "reasoning_delta"), None)
        out: dict[int, str] = {}
        if response is not None and text is not None:
            out.update(text.refs(response.text))
        if response is not None and reasoning is not None:
            out.update(reasoning.refs(response.reasoning))
        for seq, event in self.held:
            if isinstance(event, VerdictsReady) and event.index == step.index:
                same = event.verdicts == step.verdicts
            elif isinstance(event, FeedbackInjected) and event.index == step.index:
                same = event.messages == step.feedback
            else:
                continue
            if same:
                out[seq] = f"{STEP_REF}0}}"
        self.held = [(seq, e) for seq, e in self.held if getattr(e, "index", None) != step.index]
        return out


def _running_loop() -> Any:
    """The asyncio event loop running in this thread, if any (asyncio is not imported for it:
    without it nothing runs one)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class Recorder:
    """``EventSink`` writing every run it sees start. A storage failure raises ``StoreError``
    naming the run and the file (the engine reports it and detaches the recorder; the run goes
    on) and is kept in ``error``; one met while committing finished steps between events is
    raised at the run's next event."""

    def __init__(self, writer: RowWriter, clock: Callable[[], float] = time.perf_counter) -> None:
        self.writer = writer
        self.clock = clock
        self.error: StoreError | None = None
        self._runs: dict[str, _RunState] = {}
        self._failed: dict[str, StoreError] = {}  # run -> error met outside its own events
        self._commit_on: Any = None  # the loop a commit of finished steps is scheduled on
        self._host = socket.gethostname()
        self._pid = os.getpid()

    def __call__(self, event: Event) -> None:
        failed = self._failed.pop(event.run_id, None)
        if failed is not None:
            raise failed
        try:
            self._record(event)
        except (sqlite3.Error, StoreError) as exc:
            raise self._fail(event.run_id, exc) from None

    def _fail(self, run_id: str, exc: sqlite3.Error | StoreError) -> StoreError:
        self._runs.pop(run_id, None)
        message = str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
        self.error = StoreError(f"recording run {run_id} to {self.writer.path} failed: {message}")
        return self.error

    def flush(self) -> None:
        """Commits every finished step still waiting (the store calls it when it closes; the
        event loop, at its next turn)."""
        self._commit_on = None
        for run_id, state in list(self._runs.items()):
            if not state.finished:
                continue
            try:
                with self._transaction(state):
                    pass
            except (sqlite3.Error, StoreError) as exc:
                self._failed[run_id] = self._fail(run_id, exc)

    def _record(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            state = self._runs[event.run_id] = _RunState(event.run_id, self.clock())
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
            with self._transaction(state):
                self._flush(event.run_id, state, last=row)
                self.writer.start_step(
                    event.run_id, event.index, event.attempt, event.request, event.forced
                )
        elif isinstance(event, StepFinished):
            refs = state.refs(event.step)
            rows, bodies = self._take(state, refs, row)
            state.finished.append(_Finished(event.step, rows, bodies))
            if not self._commit_soon():
                with self._transaction(state):
                    pass
        elif isinstance(event, RunFinished):
            with self._transaction(state):
                self._flush(event.run_id, state, last=row)
                self.writer.finish_run(event.record)
            del self._runs[event.run_id]
        else:
            state.keep(row, event)
            if len(state.buffered) >= MAX_BUFFERED:
                with self._transaction(state):
                    self._flush(event.run_id, state)

    @contextmanager
    def _transaction(self, state: _RunState) -> Iterator[None]:
        """A transaction of the run's, which first settles its finished steps: their events go
        to the front of the buffer (written by the caller's ``_flush`` in the same statement)."""
        with self.writer.transaction():
            finished, state.finished = state.finished, []
            if finished:
                state.buffered = [row for f in finished for row in f.rows] + state.buffered
                for done in finished:
                    self.writer.finalize_step(state.run_id, done.step)
                    if done.bodies:
                        self.writer.set_event_bodies(state.run_id, done.bodies)
            yield
            if finished:
                self._flush(state.run_id, state)

    def _commit_soon(self) -> bool:
        """Has the running event loop commit the finished steps at its next turn, unless the
        run's next transaction comes first; False when no loop runs here (commit now)."""
        loop = _running_loop()
        if loop is None:
            return False
        if self._commit_on is not loop:
            loop.call_soon(self.flush)
            self._commit_on = loop
        return True

    def _row(self, state: _RunState, event: Event) -> EventRow:
        seq = state.seq
        state.seq += 1
        t_ms = round((self.clock() - state.t0) * 1000, 3)
        body = None if event.kind in REBUILT_KINDS else event.model_dump_json(exclude={"run_id"})
        index = (
            event.step.index if isinstance(event, StepFinished) else getattr(event, "index", None)
        )
        return (seq, t_ms, event.kind, index, body)

    def _take(
        self, state: _RunState, refs: dict[int, str], last: EventRow
    ) -> tuple[list[EventRow], dict[int, str]]:
        """The buffered events with ``refs`` (seq -> body) applied and ``last`` after them, and
        the refs left for rows written before; the buffer is emptied."""
        refs = dict(refs)
        rows = state.buffered
        if refs and rows:
            rows = [(seq, t, kind, i, refs.pop(seq, body)) for seq, t, kind, i, body in rows]
        rows.append(last)
        state.buffered = []
        return rows, refs

    def _flush(self, run_id: str, state: _RunState, last: EventRow | None = None) -> None:
        """Writes the buffered events and ``last`` (the boundary event itself) in one statement."""
        rows = state.buffered
        if last is not None:
            rows.append(last)
        if rows:
            self.writer.add_events(run_id, rows)
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
