"""A store written by an earlier schema version opens with the current code; bad files don't."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.core.records import RunRecord
from inspector.store import Store, StoreError, StoreUnusable
from inspector.store.schema import SCHEMA_VERSION, current_version, migrate
from tests.store.synthetic import every_shape, long_turn


def v1_store(path: Path) -> None:
    """A file as schema version 1 wrote it: a finished run and a run left with a pending step
    (version 1 did not record who was writing)."""
    conn = sqlite3.connect(path)
    with conn:
        assert migrate(conn, target=1) == 1
        header = (
            '{"scenario":"old","started_at":"2025-01-01T00:00:00+00:00","policy":{},'
            '"provider":"scripted","model":"m","replay_of":null,"scenario_source":{},'
            '"scenario_dir":"","scenario_origin":"","overrides":[]}'
        )
        record = (
            '{"version":1,"run_id":"done00000001","scenario":"old",'
            '"started_at":"2025-01-01T00:00:00+00:00","duration_ms":5.0,"policy":{},'
            '"status":"succeeded","termination":"stop","budgets":{"attempts_used":1,'
            '"max_attempts":3,"steps_used":1,"max_steps":20,"transport_retries":0},'
            '"output":"hi","error":null,"usage":{"input_tokens":1,"output_tokens":1},'
            '"replay_of":null,"provider":"scripted","model":"m"}'
        )
        conn.execute('INSERT INTO messages VALUES (\'h1\', \'{"role":"user","content":"hi"}\')')
        conn.execute(
            'INSERT INTO frames VALUES (\'f1\', \'{"system":"s","tools":[],'
            '"tool_choice":null,"response_format":null}\')'
        )
        for run_id, status in (("done00000001", "succeeded"), ("dead00000002", "running")):
            conn.execute(
                "INSERT INTO runs (run_id, scenario, status, started_at, header, record,"
                " transcript) VALUES (?, 'old', ?, '2025-01-01T00:00:00+00:00', ?, ?, ?)",
                (
                    run_id,
                    status,
                    header,
                    record if status == "succeeded" else None,
                    '["h1"]' if status == "succeeded" else None,
                ),
            )
        conn.execute(
            "INSERT INTO steps (run_id, idx, attempt, status, frame, msg_keep, msg_added, body)"
            " VALUES ('done00000001', 1, 1, 'success', 'f1', 0, '[\"h1\"]', ?)",
            ('{"index":1,"attempt":1,"status":"success","response":{"text":"hi"}}',),
        )
        conn.execute(
            "INSERT INTO steps (run_id, idx, attempt, status, frame, msg_keep, msg_added)"
            " VALUES ('dead00000002', 1, 1, 'pending', 'f1', 0, '[\"h1\"]')"
        )
    conn.close()


def test_a_version_1_store_opens_migrated(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    v1_store(path)
    with Store.open(path) as store:
        assert store.recovered == ["dead00000002"]
        done = store.load("done0")
        assert (done.status, done.output) == ("succeeded", "hi")
        response = done.steps[0].response
        assert response is not None and response.text == "hi"
        assert [m.content for m in done.transcript] == ["hi"]
        dead = store.load("dead0")
        assert dead.status == "interrupted"
        assert [s.status for s in dead.steps] == ["interrupted"]
        assert [s.status for s in store.runs()] == ["interrupted", "succeeded"]
    conn = sqlite3.connect(path)
    assert current_version(conn) == SCHEMA_VERSION == 7  # 7: texts stored once (issue 13)
    columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    assert {"writer_host", "writer_pid"} <= columns
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_a_new_store_gets_every_migration(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "runs.sqlite3"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    assert current_version(conn) == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables >= {"runs", "steps", "messages", "frames", "verdicts", "events", "texts"}
    conn.close()


def test_connection_settings(store: Store) -> None:
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    # An open store waits at most 2 s for a lock, so a run's writes never stall the loop long.
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (2000,)


def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    Store.open(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE schema_version SET version = 99")
    conn.close()
    newer = rf"schema version 99 is newer than .* understands \({SCHEMA_VERSION}\)"
    with pytest.raises(StoreError, match=newer):
        Store.open(path)


def test_a_file_that_is_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, long enough to not be a database header at all" * 20)
    with pytest.raises(StoreError, match=r"notes\.txt: not an agent-inspector store") as caught:
        Store.open(path)
    assert "\n" not in str(caught.value)


def test_a_folder_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "runs.sqlite3").mkdir()
    with pytest.raises(StoreUnusable, match=r"runs\.sqlite3: is a folder, not a store file"):
        Store.open(tmp_path / "runs.sqlite3")


def test_a_version_4_store_keeps_every_row_as_rowid_tables(tmp_path: Path) -> None:
    # Issue 18 item 7: version 5 rebuilds steps, verdicts, messages and frames as rowid tables.
    path = tmp_path / "runs.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    with conn:
        assert migrate(conn, target=4) == 4
    written = [every_shape(), long_turn(12)]
    _save_into_old_schema(conn, path, written)
    counts = {t: _count(conn, t) for t in ("steps", "verdicts", "messages", "frames", "events")}
    assert counts["verdicts"] > 0
    conn.close()
    with Store.open(path) as store:
        for record in written:
            assert store.load(record.run_id) == record
    conn = sqlite3.connect(path)
    assert current_version(conn) == SCHEMA_VERSION
    assert {t: _count(conn, t) for t in counts} == counts
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    for table in ("steps", "verdicts", "messages", "frames"):
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        assert "WITHOUT ROWID" not in sql and "_v5" not in sql, sql
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"steps_pending", "verdicts_by_validator"} <= indexes
    conn.close()
    with Store.open(path) as store:  # later writes work, deletes still cascade
        store.save(long_turn(3, run_id="after0000001"))
        assert store.load("after0000001") == long_turn(3, run_id="after0000001")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("DELETE FROM runs WHERE run_id = ?", (written[0].run_id,))
    left = conn.execute("SELECT count(*) FROM verdicts WHERE run_id = ?", (written[0].run_id,))
    assert left.fetchone() == (0,)
    conn.close()


def _save_into_old_schema(conn: sqlite3.Connection, path: Path, records: list[RunRecord]) -> None:
    """Rows the current writer makes, in a store of an earlier version: the writer names the
    columns version 7 added, which are there only while it writes (the records have no text long
    enough to fill them or ``texts``)."""
    conn.execute("CREATE TABLE texts (hash TEXT, zipped INTEGER, body BLOB)")
    conn.execute("ALTER TABLE verdicts ADD COLUMN reason_text TEXT")
    conn.execute("ALTER TABLE verdicts ADD COLUMN feedback_text TEXT")
    for record in records:
        Store(conn, path).save(record)
    assert _count(conn, "texts") == 0
    conn.execute("DROP TABLE texts")
    conn.execute("ALTER TABLE verdicts DROP COLUMN reason_text")
    conn.execute("ALTER TABLE verdicts DROP COLUMN feedback_text")


def _count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_a_version_3_store_gains_the_captured_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    with conn:
        assert migrate(conn, target=3) == 3
    assert "captured" not in {r[1] for r in conn.execute("PRAGMA table_info(verdicts)")}
    conn.close()
    Store.open(path).close()
    conn = sqlite3.connect(path)
    assert current_version(conn) == SCHEMA_VERSION
    assert "captured" in {r[1] for r in conn.execute("PRAGMA table_info(verdicts)")}
    conn.close()
