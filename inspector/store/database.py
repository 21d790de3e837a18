"""Opening the SQLite file: WAL, a busy timeout, foreign keys on, the schema migrated.

Before anything is written the file is checked by reading only: a path that is not a regular
file, a file that is not SQLite, another application's database, a store of a newer schema
version and a damaged file are refused with one line (``StoreUnusable``, CLI exit 2) and left
exactly as they were — no tables added, no switch to WAL.
"""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

from inspector.core.errors import BadInputError, InspectorError
from inspector.store.schema import SCHEMA_VERSION, current_version, migrate

BUSY_TIMEOUT_MS = 10_000  # opening, migrating, recovering: worth waiting for
# Once open, writes happen on the engine's event loop (the window's UI thread): a lock held
# elsewhere may stall it this long at most; past it the write fails, the recorder detaches and
# the finished run is settled from its record (Store.settle).
RUNNING_BUSY_TIMEOUT_MS = 2_000
# The tables every store has had since version 1: a file with tables but not these is another
# application's database.
SIGNATURE_TABLES = frozenset({"schema_version", "runs", "steps"})


class StoreError(InspectorError):
    """The store cannot be opened, read or written (one line naming the file)."""


class StoreUnusable(StoreError, BadInputError):
    """The file ``--db`` names cannot be used as a store: not a regular file, not SQLite,
    another application's database, a newer schema version, damaged pages. Nothing was written."""


class StoreMissing(StoreUnusable):
    """Asked to open an existing store (``create=False``: a command that reads) and there is no
    file there. Nothing was created."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"no store at {path}")
        self.path = path


# SQLite's messages for a file that is not (or no longer) a sound database.
_DAMAGED = ("malformed", "not a database", "corrupt", "Could not decode")


def damaged(exc: sqlite3.Error) -> bool:
    return any(word in str(exc) for word in _DAMAGED)


def short(exc: BaseException, limit: int = 120) -> str:
    """An error's first line, printable and cut short: a damaged row's bytes must not flood the
    terminal."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    text = text.split(" with text ", 1)[0]  # SQLite quotes the undecodable row
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_path(path: Path) -> None:
    """Refuses a path that cannot hold a store before SQLite touches it (a folder, a device,
    a FIFO — opening one of those blocks or fails with an unhelpful I/O error)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return  # a new store
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StoreUnusable(f"{path}: cannot open the store: {reason}") from None
    if stat.S_ISDIR(mode):
        raise StoreUnusable(f"{path}: is a folder, not a store file")
    if not stat.S_ISREG(mode):
        raise StoreUnusable(f"{path}: not a regular file (a device, FIFO or socket)")


def check_identity(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version, reading only; refuses another application's database and a
    newer store. An empty file (a new store) is version 0."""
    tables = {
        str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if not tables:
        # An empty database is a new store, unless another application has marked it its own.
        marks = [
            int(conn.execute(f"PRAGMA {mark}").fetchone()[0])
            for mark in ("application_id", "user_version")
        ]
        if any(marks):
            raise StoreUnusable(
                f"{path}: not an agent-inspector store (an SQLite database another application "
                f"marked as its own: application_id {marks[0]}, user_version {marks[1]}); "
                "left unchanged"
            )
        return 0
    if not tables >= SIGNATURE_TABLES:
        shown = ", ".join(sorted(tables)[:4]) + (", ..." if len(tables) > 4 else "")
        raise StoreUnusable(
            f"{path}: not an agent-inspector store (an SQLite database with other tables: "
            f"{shown}); left unchanged"
        )
    try:
        version = current_version(conn)
    except (TypeError, ValueError):
        raise StoreUnusable(
            f"{path}: damaged store (no readable schema version); left unchanged"
        ) from None
    if version > SCHEMA_VERSION:
        raise StoreUnusable(
            f"{path}: store schema version {version} is newer than this agent-inspector "
            f"understands ({SCHEMA_VERSION}); upgrade agent-inspector (the file is left unchanged)"
        )
    return version


def _translate(path: Path, exc: sqlite3.Error) -> StoreError:
    if "not a database" in str(exc):
        return StoreUnusable(f"{path}: not an agent-inspector store ({short(exc)})")
    if damaged(exc):
        return StoreUnusable(f"{path}: damaged store ({short(exc)}); left unchanged")
    if "unable to open" in str(exc):
        return StoreUnusable(f"{path}: cannot open the store: {exc}")
    return StoreError(f"{path}: cannot open the store: {exc}")


def connect(path: Path, *, read_only: bool = False, create: bool = True) -> sqlite3.Connection:
    """A connection to ``path`` (created with its folder if missing), migrated to this version.

    Autocommit mode (``isolation_level=None``): the store opens its transactions explicitly, so
    a step row is committed the moment its method returns. ``read_only``: an existing store at
    this version, opened for reading only (nothing is created, migrated or recovered).
    ``create=False``: an existing store only; no file is ``StoreMissing``, an empty one
    ``StoreUnusable``, and nothing is created (no folder, no file, no side file)."""
    check_path(path)
    if not (create or path.exists()):
        raise StoreMissing(path)
    try:
        if read_only:
            conn = _connect_read_only(path)
        elif not create:  # mode=rw: SQLite itself never creates it (the file may just have gone)
            uri = f"{path.resolve().as_uri()}?mode=rw"
            conn = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except OSError as exc:
        raise StoreUnusable(f"{path}: cannot open the store: {exc.strerror or exc}") from None
    except (sqlite3.Error, ValueError) as exc:
        raise StoreUnusable(f"{path}: cannot open the store: {exc}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        version = check_identity(conn, path)
        if version == 0 and not create:  # a store is never left without its tables
            raise StoreUnusable(
                f"{path}: not an agent-inspector store (an empty file); left unchanged"
            )
        if read_only:
            if version < SCHEMA_VERSION:
                raise StoreError(
                    f"{path}: store schema version {version} needs an upgrade, which cannot "
                    "be written now"
                )
            conn.execute("PRAGMA query_only = ON")
            return conn
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        # WAL + NORMAL: a killed process loses nothing committed (the OS holds the WAL); only a
        # power cut can drop the last transactions.
        conn.execute("PRAGMA synchronous = NORMAL")
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: cannot use write-ahead logging (journal mode {mode})")
        _migrate(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise _translate(path, exc) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """Reading a WAL store needs its shared-memory file, which a full disk may not let SQLite
    create; when no write-ahead log holds committed pages the main file is all there is, and
    ``immutable`` reads it with no side files at all."""
    uri = path.resolve().as_uri()
    timeout = BUSY_TIMEOUT_MS / 1000
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=timeout)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.Error:
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
    return sqlite3.connect(
        f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None, timeout=timeout
    )


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    if check_identity(conn, path) == SCHEMA_VERSION:
        return
    # IMMEDIATE: two processes opening a new store at once migrate it one after the other.
    conn.execute("BEGIN IMMEDIATE")
    try:
        check_identity(conn, path)  # re-read under the lock: another process may have migrated
        migrate(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
