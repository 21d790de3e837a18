"""``Store``: one SQLite file holding every recorded run (see docs/store.md)."""

from __future__ import annotations

import os
import socket
import sqlite3
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from inspector.core.lazy_steps import LightParts
from inspector.core.records import RunRecord, Step
from inspector.locations import resolve_db_path
from inspector.store import event_rows, light_read, reader
from inspector.store import sweeps as sweep_rows
from inspector.store.database import (
    RUNNING_BUSY_TIMEOUT_MS,
    StoreError,
    StoreUnusable,
    connect,
    damaged,
    short,
)
from inspector.store.event_rows import EventStream
from inspector.store.models import AsStored, RunSummary, StoredEvent
from inspector.store.recorder import Recorder, save_record
from inspector.store.recovery import recover, writer_alive
from inspector.store.sweeps import StoredSweep
from inspector.store.writer import RowWriter


class Store:
    """A connection to the store. One ``Store`` per thread (SQLite connections are not shared);
    several stores, in one process or many, may read and write the same file at once."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._writer = RowWriter(conn, path)
        # Flushed when the store closes (weakly held: the window makes one per run).
        self._recorders: weakref.WeakSet[Recorder] = weakref.WeakSet()
        self.recovered: list[str] = []  # runs this open found dead and marked interrupted
        # Why the store was opened for reading only (``open(..., read_only_fallback=True)``).
        self.read_only: str | None = None

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only_fallback: bool = False,
        create: bool = True,
    ) -> Store:
        """Opens (creating and migrating) the store at ``path`` (``resolve_db_path`` rules) and
        settles the runs dead processes left pending.

        ``read_only_fallback`` (commands that only read): when that needs a write that cannot be
        made — a full disk, a read-only file or folder — the store is opened for reading only
        and ``read_only`` says why. A file that is no store (``StoreUnusable``) is refused.
        ``create=False`` (commands that read a recorded run): no file there is ``StoreMissing``,
        and nothing is created."""
        resolved = resolve_db_path(path)
        try:
            return cls._open_writable(resolved, create=create)
        except StoreUnusable:
            raise
        except StoreError as exc:
            if not read_only_fallback:
                raise
            try:
                store = cls(connect(resolved, read_only=True), resolved)
            except StoreError:
                raise exc from None
            store.read_only = str(exc).removeprefix(f"{resolved}: ")
            return store

    @classmethod
    def _open_writable(cls, resolved: Path, *, create: bool) -> Store:
        store = cls(connect(resolved, create=create), resolved)
        try:
            store.recovered = recover(store._writer)
            store._conn.execute(f"PRAGMA busy_timeout = {RUNNING_BUSY_TIMEOUT_MS}")
        except sqlite3.Error as exc:
            store.close()
            if damaged(exc):
                raise StoreUnusable(f"{resolved}: damaged store ({short(exc)})") from None
            raise StoreError(f"{resolved}: cannot recover interrupted runs: {short(exc)}") from None
        except BaseException:
            store.close()
            raise
        return store

    @contextmanager
    def _reading(self, what: str) -> Iterator[None]:
        """Damaged pages or rows become one line naming the store and what was being read."""
        try:
            yield
        except sqlite3.Error as exc:
            if damaged(exc):
                raise StoreUnusable(
                    f"{self.path}: damaged store: cannot read {what} ({short(exc)})"
                ) from None
            raise StoreError(f"{self.path}: cannot read {what}: {short(exc)}") from None
        except (ValueError, KeyError, TypeError) as exc:
            # Undecodable JSON, a row no record validates from, a reference to a lost row.
            raise StoreUnusable(
                f"{self.path}: damaged store: cannot read {what} ({type(exc).__name__}: "
                f"{short(exc)})"
            ) from None

    def recorder(self) -> Recorder:
        """An ``EventSink`` that writes every run it sees start while it streams."""
        if self.read_only is not None:
            raise StoreError(f"{self.path}: opened read-only ({self.read_only}); cannot record")
        recorder = Recorder(self._writer)
        self._recorders.add(recorder)
        return recorder

    def save(self, record: RunRecord) -> None:
        """Writes a finished record whole (an import; no events are stored)."""
        try:
            save_record(self._writer, record, host=socket.gethostname(), pid=os.getpid())
        except sqlite3.Error as exc:
            raise StoreError(f"saving run {record.run_id} to {self.path} failed: {exc}") from None

    def settle(self, record: RunRecord) -> None:
        """Makes the stored run equal its finished ``record`` after recording failed part-way
        (a locked file, a full disk): the rows written so far are completed and no row stays
        pending — or the record is saved whole if its run row never made it."""
        try:
            exists = self._conn.execute(
                "SELECT 1 FROM runs WHERE run_id = ?", (record.run_id,)
            ).fetchone()
            if exists is None:
                save_record(self._writer, record, host=socket.gethostname(), pid=os.getpid())
                return
            with self._writer.transaction():
                self._writer.finish_run(record)
        except sqlite3.Error as exc:
            raise StoreError(f"saving run {record.run_id} to {self.path} failed: {exc}") from None

    def data_version(self) -> int:
        """Changes whenever another connection (another process, the proxy's writer thread)
        commits to the store: a watcher's cheap question before it reads any run."""
        with self._reading("the store's version"):
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def runs(self, *, scenario: str | None = None, limit: int | None = None) -> list[RunSummary]:
        """Summaries, newest first."""
        with self._reading("the run list"):
            return reader.summaries(self._conn, scenario=scenario, limit=limit)

    def load(self, run_id: str, reuse: LightParts | None = None) -> RunRecord:
        """The full record of ``run_id`` (or a unique prefix of it). ``reuse``: what the run's
        light read produced (``StepRows.parts``: its step bodies and verdicts), not read again."""
        with self._reading(f"run {run_id}"):
            try:
                return reader.load(self._conn, self.path, run_id, reuse)
            except reader.RunStillRecording:
                if self.read_only is None:
                    raise
                # Opened read-only, recovery could not settle a dead writer's run: show it as
                # recovery would record it, without writing anything.
                full_id = reader.resolve(self._conn, self.path, run_id)
                host, pid = self._conn.execute(
                    "SELECT writer_host, writer_pid FROM runs WHERE run_id = ?", (full_id,)
                ).fetchone()
                if writer_alive(host, pid):
                    raise
                return reader.interrupted_record(self._conn, full_id)

    def load_light(self, run_id: str, min_steps: int = 0) -> RunRecord | None:
        """``run_id``'s record for a first paint, its steps built when read (``StepRows``, with
        stand-in requests; no transcript, no ``scenario_source``): docs/store.md, "Opening a
        long run light". None when the run has fewer than ``min_steps`` steps or is not a
        finished run (``load`` reads those)."""
        with self._reading(f"run {run_id}"):
            return light_read.load_light(self._conn, self.path, run_id, min_steps)

    def load_step(self, run_id: str, index: int) -> Step:
        """Step ``index`` (1-based) of ``run_id`` alone, as ``load`` reads it (its request, raw
        exchange and verdicts included): a step shown before its run is read whole."""
        with self._reading(f"step {index} of run {run_id}"):
            return light_read.load_step(self._conn, self.path, run_id, index)

    def events(self, run_id: str) -> list[StoredEvent]:
        """The run's events in order, each with its offset since ``RunStarted``."""
        with self._reading(f"the events of run {run_id}"):
            return event_rows.events(self._conn, self.path, run_id)

    def events_as_stored(self, run_id: str, kinds: frozenset[str]) -> list[StoredEvent | AsStored]:
        """``events``, except that an event of ``kinds`` the recorder wrote whole comes with
        its stored JSON (``AsStored``)."""
        with self._reading(f"the events of run {run_id}"):
            return event_rows.events_as_stored(self._conn, self.path, run_id, kinds)

    def event_stream(self, run_id: str, kinds: frozenset[str]) -> EventStream:
        """``events_as_stored``, read as they are iterated (``PlainEvent`` for
        ``StoredEvent``), the store open until then: what an export writes as it goes."""
        what = f"the events of run {run_id}"
        with self._reading(what):
            stream = event_rows.event_stream(self._conn, self.path, run_id, kinds)
        return stream.guarded(lambda: self._reading(what))

    def has_events(self, run_id: str) -> bool:
        """Whether the run was recorded with its event log (an import has none)."""
        with self._reading(f"the events of run {run_id}"):
            return reader.has_events(self._conn, self.path, run_id)

    # ---- sweeps (issue 15; inspector/store/sweeps.py) ----------------------------------------

    def create_sweep(
        self, sweep_id: str, scenario: str, created_at: str, spec: dict[str, Any]
    ) -> None:
        self._write(lambda: sweep_rows.create(self._conn, sweep_id, scenario, created_at, spec))

    def add_sweep_run(self, sweep_id: str, run_id: str, arm: int, rep: int) -> None:
        """Written before the run starts: a killed sweep still knows the slot was in flight."""
        self._write(lambda: sweep_rows.add_run(self._conn, sweep_id, run_id, arm, rep))

    def sweep(self, sweep_id: str) -> StoredSweep:
        """The sweep ``sweep_id`` (or a unique prefix of it) names."""
        return sweep_rows.load(self._conn, self.path, sweep_id)

    def sweeps(self) -> list[StoredSweep]:
        """Every sweep, newest first."""
        return sweep_rows.listing(self._conn)

    def sweep_runs(self, sweep_id: str) -> list[dict[str, Any]]:
        """The runs started for the sweep with their arm and repetition (see sweeps.runs)."""
        return sweep_rows.runs(self._conn, sweep_id)

    def filled_slots(self, sweep_id: str) -> set[tuple[int, int]]:
        return sweep_rows.filled(self._conn, sweep_id)

    def _write(self, write: Callable[[], None]) -> None:
        try:
            write()
        except sqlite3.Error as exc:
            raise StoreError(f"writing a sweep to {self.path} failed: {exc}") from None

    def close(self) -> None:
        """Commits the finished steps its recorders still hold (``Recorder.flush``), then
        closes the connection."""
        for recorder in list(self._recorders):
            recorder.flush()
        self._recorders.clear()
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
