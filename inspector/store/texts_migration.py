"""Schema version 7's data step: the large texts earlier versions kept inline move to ``texts``.

Only rows that hold a string of ``TEXT_MIN`` characters or more (or a dict shaped like a
reference, to be escaped) are rewritten; they are found by SQL (``length``, ``instr``), so a
store of short texts is scanned once and left as it was. Runs inside the migration's
transaction: a crash rolls it back whole.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

from inspector.store.texts import MARKED_PREFIXES, PIECE_KINDS, TEXT_MIN, TextWriter, write

# (table, key columns, JSON column, which rows, how its stored form is made)
Rewrite = Callable[[TextWriter, str], str]
_PIECES = ", ".join(f"'{kind}'" for kind in sorted(PIECE_KINDS))
_JSON_COLUMNS: tuple[tuple[str, str, str, str, Rewrite], ...] = (
    ("messages", "id", "body", "1", lambda w, body: w.body(body)),
    ("frames", "id", "body", "1", lambda w, body: w.body(body)),
    ("steps", "id", "body", "1", lambda w, body: w.body(body)),
    ("steps", "id", "raw_response", "1", lambda w, body: w.raw_response(json.loads(body))),
    ("runs", "id", "header", "1", lambda w, body: w.run(json.loads(body))),
    ("runs", "id", "record", "1", lambda w, body: w.run(json.loads(body))),
    ("events", "run_id, seq", "body", f"kind NOT IN ({_PIECES})", lambda w, body: w.body(body)),
)


def move_texts(conn: sqlite3.Connection) -> None:
    writer = TextWriter()
    for table, key, column, rows, rewrite in _JSON_COLUMNS:
        marks = " OR ".join(f"instr({column}, ?) > 0" for _ in MARKED_PREFIXES)
        where = " AND ".join(f"{k} = ?" for k in key.split(", "))
        # Keys first: a table is not updated under an open cursor over it.
        keys = conn.execute(
            f"SELECT {key} FROM {table} WHERE {column} IS NOT NULL AND {rows}"
            f" AND (length({column}) >= ? OR {marks})",
            (TEXT_MIN, *MARKED_PREFIXES),
        ).fetchall()
        for row_key in keys:
            sql = f"SELECT {column} FROM {table} WHERE {where}"
            (body,) = conn.execute(sql, row_key).fetchone()
            stored = rewrite(writer, body)
            if stored != body:
                conn.execute(f"UPDATE {table} SET {column} = ? WHERE {where}", (stored, *row_key))
            write(conn, writer.take())
    for column in ("reason", "feedback"):
        emptied = "''" if column == "reason" else "NULL"
        ids = conn.execute(
            f"SELECT id FROM verdicts WHERE length({column}) >= ?", (TEXT_MIN,)
        ).fetchall()
        for (row_id,) in ids:
            sql = f"SELECT {column} FROM verdicts WHERE id = ?"
            (text,) = conn.execute(sql, (row_id,)).fetchone()
            conn.execute(
                f"UPDATE verdicts SET {column} = {emptied}, {column}_text = ? WHERE id = ?",
                (writer.text(text), row_id),
            )
            write(conn, writer.take())
