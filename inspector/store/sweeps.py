"""Sweeps in the store (issue 15): a sweep's spec, and which run filled which slot.

The store knows nothing of what a spec means (``inspector.sweeps`` does): it keeps the JSON and
hands back, per sweep, each of its runs' indexed columns with its arm and repetition.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from inspector.core.errors import BadInputError


class SweepNotFound(BadInputError):
    """No sweep (or no single sweep) matches the id or prefix asked for: bad input (CLI exit
    2)."""


class StoredSweep(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    sweep_id: str
    scenario: str
    created_at: str
    spec: dict[str, Any]
    runs: int = 0  # runs started for it (re-runs of a slot included)
    finished: int = 0  # (arm, repetition) slots a run has finished for good


# Per run: what the statistics need, from the run row's indexed columns. Attempts used are the
# last step's attempt (the loop counts an attempt up only when a step follows; 1 without a
# step): an index lookup, where json_extract would parse each record whole (~10 KB; 4x the
# query's time for a 10,000-run sweep). Transport retries are only in the record, and only HTTP
# runs have any.
_RUN_COLUMNS = (
    "s.arm, s.rep, r.run_id, r.status, r.termination, r.started_at, r.duration_ms, r.steps,"
    " r.input_tokens, r.output_tokens, r.provider, r.model,"
    " coalesce((SELECT max(t.attempt) FROM steps t WHERE t.run_id = r.run_id), 1),"
    " CASE WHEN r.provider = 'scripted' THEN 0"
    " ELSE json_extract(r.record, '$.budgets.transport_retries') END"
)
_RUN_NAMES = (
    "arm", "rep", "run_id", "status", "termination", "started_at", "duration_ms", "steps",
    "input_tokens", "output_tokens", "provider", "model", "attempts_used", "transport_retries",
)  # fmt: skip
# A run that ended without being cut short: what fills its slot for good.
_FINAL = "('succeeded', 'fallback', 'failed', 'error')"


def create(
    conn: sqlite3.Connection, sweep_id: str, scenario: str, created_at: str, spec: dict[str, Any]
) -> None:
    conn.execute(
        "INSERT INTO sweeps (sweep_id, scenario, created_at, spec) VALUES (?, ?, ?, ?)",
        (sweep_id, scenario, created_at, json.dumps(spec, ensure_ascii=False)),
    )


def add_run(conn: sqlite3.Connection, sweep_id: str, run_id: str, arm: int, rep: int) -> None:
    conn.execute(
        "INSERT INTO sweep_runs (sweep_id, run_id, arm, rep) VALUES (?, ?, ?, ?)",
        (sweep_id, run_id, arm, rep),
    )


def resolve(conn: sqlite3.Connection, path: Path, sweep_id: str) -> str:
    """The full id of the sweep ``sweep_id`` names exactly or as a unique prefix."""
    if conn.execute("SELECT 1 FROM sweeps WHERE sweep_id = ?", (sweep_id,)).fetchone():
        return sweep_id
    escaped = sweep_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = conn.execute(
        "SELECT sweep_id FROM sweeps WHERE sweep_id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
    ).fetchall()
    if len(rows) == 1:
        return str(rows[0][0])
    if rows:
        raise SweepNotFound(f"sweep id prefix {sweep_id!r} is ambiguous in {path}")
    raise SweepNotFound(f"no sweep {sweep_id!r} in {path} (agent-inspector sweeps lists them)")


def _stored(row: tuple[Any, ...]) -> StoredSweep:
    sweep_id, scenario, created_at, spec, runs, finished = row
    return StoredSweep(
        sweep_id=sweep_id,
        scenario=scenario,
        created_at=created_at,
        spec=json.loads(spec),
        runs=runs or 0,
        finished=finished or 0,
    )


_SWEEP_SQL = f"""
SELECT w.sweep_id, w.scenario, w.created_at, w.spec,
       (SELECT count(*) FROM sweep_runs s WHERE s.sweep_id = w.sweep_id),
       (SELECT count(*) FROM (SELECT DISTINCT s.arm, s.rep FROM sweep_runs s
         JOIN runs r ON r.run_id = s.run_id WHERE s.sweep_id = w.sweep_id AND r.status IN {_FINAL}))
FROM sweeps w
"""


def load(conn: sqlite3.Connection, path: Path, sweep_id: str) -> StoredSweep:
    full = resolve(conn, path, sweep_id)
    return _stored(conn.execute(_SWEEP_SQL + " WHERE w.sweep_id = ?", (full,)).fetchone())


def listing(conn: sqlite3.Connection) -> list[StoredSweep]:
    """Every sweep, newest first."""
    return [_stored(r) for r in conn.execute(_SWEEP_SQL + " ORDER BY w.created_at DESC")]


def runs(conn: sqlite3.Connection, sweep_id: str) -> list[dict[str, Any]]:
    """Every run started for the sweep (any status), in arm, repetition, start order."""
    sql = (
        f"SELECT {_RUN_COLUMNS} FROM sweep_runs s JOIN runs r ON r.run_id = s.run_id"
        " WHERE s.sweep_id = ? ORDER BY s.arm, s.rep, r.id"
    )
    return [dict(zip(_RUN_NAMES, row, strict=True)) for row in conn.execute(sql, (sweep_id,))]


def filled(conn: sqlite3.Connection, sweep_id: str) -> set[tuple[int, int]]:
    """The (arm, repetition) slots a run has finished for good (what ``--resume`` skips)."""
    sql = (
        "SELECT DISTINCT s.arm, s.rep FROM sweep_runs s JOIN runs r ON r.run_id = s.run_id"
        f" WHERE s.sweep_id = ? AND r.status IN {_FINAL}"
    )
    return {(int(a), int(r)) for a, r in conn.execute(sql, (sweep_id,))}
