"""``Store``: one SQLite file holding every recorded run (see docs/store.md)."""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from inspector.core.records import RunRecord
from inspector.store import reader
from inspector.store import sweeps as sweep_rows
from inspector.store.database import RUNNING_BUSY_TIMEOUT_MS, StoreError, connect
from inspector.store.locations import resolve_db_path
from inspector.store.models import RunSummary, StoredEvent
from inspector.store.recorder import Recorder, save_record
from inspector.store.recovery import recover
from inspector.store.sweeps import StoredSweep
from inspector.store.writer import RowWriter


class Store:
    """A connection to the store. One ``Store`` per thread (SQLite connections are not shared);
    several stores, in one process or many, may read and write the same file at once."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._writer = RowWriter(conn, path)
        self.recovered: list[str] = []  # runs this open found dead and marked interrupted

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Store:
        """Opens (creating and migrating) the store at ``path`` (``resolve_db_path`` rules) and
        settles the runs dead processes left pending."""
        resolved = resolve_db_path(path)
        store = cls(connect(resolved), resolved)
        try:
            store.recovered = recover(store._writer)
        except sqlite3.Error as exc:
            store.close()
            raise StoreError(f"{resolved}: cannot recover interrupted runs: {exc}") from None
        store._conn.execute(f"PRAGMA busy_timeout = {RUNNING_BUSY_TIMEOUT_MS}")
        return store

    def recorder(self) -> Recorder:
        """An ``EventSink`` that writes every run it sees start while it streams."""
        return Recorder(self._writer)

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

    def runs(self, *, scenario: str | None = None, limit: int | None = None) -> list[RunSummary]:
        """Summaries, newest first."""
        return reader.summaries(self._conn, scenario=scenario, limit=limit)

    def load(self, run_id: str) -> RunRecord:
        """The full record of ``run_id`` (or a unique prefix of it)."""
        return reader.load(self._conn, self.path, run_id)

    def events(self, run_id: str) -> list[StoredEvent]:
        """The run's events in order, each with its offset since ``RunStarted``."""
        return reader.events(self._conn, self.path, run_id)

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
