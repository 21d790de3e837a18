"""Opening the SQLite file: WAL, a busy timeout, foreign keys on, the schema migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from inspector.core.errors import InspectorError
from inspector.store.schema import SCHEMA_VERSION, current_version, migrate

BUSY_TIMEOUT_MS = 10_000  # opening, migrating, recovering: worth waiting for
# Once open, writes happen on the engine's event loop (the window's UI thread): a lock held
# elsewhere may stall it this long at most; past it the write fails, the recorder detaches and
# the finished run is settled from its record (Store.settle).
RUNNING_BUSY_TIMEOUT_MS = 2_000


class StoreError(InspectorError):
    """The store cannot be opened, read or written (one line naming the file)."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to ``path`` (created with its folder if missing), migrated to this version.

    Autocommit mode (``isolation_level=None``): the store opens its transactions explicitly, so
    a step row is committed the moment its method returns."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"{path}: cannot open the store: {exc}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        # WAL + NORMAL: a killed process loses nothing committed (the OS holds the WAL); only a
        # power cut can drop the last transactions.
        conn.execute("PRAGMA synchronous = NORMAL")
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: cannot use write-ahead logging (journal mode {mode})")
        _migrate(conn, path)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(f"{path}: not an agent-inspector store ({exc})") from None
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: store schema version {version} is newer than this agent-inspector "
            f"understands ({SCHEMA_VERSION}); upgrade agent-inspector"
        )
    if version == SCHEMA_VERSION:
        return
    # IMMEDIATE: two processes opening a new store at once migrate it one after the other.
    conn.execute("BEGIN IMMEDIATE")
    try:
        migrate(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
