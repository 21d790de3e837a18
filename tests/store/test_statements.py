"""What recording costs in SQL statements: a scripted tool-call turn's steps each take a fixed,
small number of statements (bench/process.py times the whole process; this counts)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from inspector.core.loop import run_turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.store import Store

STEPS = 30


def tool_turn(steps: int, folder: Path) -> Any:
    """``steps`` calls of a canned tool, then a final answer (bench/process.py's turn)."""
    call = {"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}
    data = {
        "name": "statements",
        "model": {"provider": "scripted", "name": "m", "stream": False},
        "prompt": {"system": "You are a bench.", "user": "go"},
        "tools": [
            {
                "name": "lookup",
                "description": "Look it up",
                "result": "found",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            }
        ],
        "policy": {"max_steps": steps + 1, "final_step": "none"},
        "script": [call] * steps + [{"text": "done"}],
    }
    return scenario_from_dict(data, source="statements.toml", base_dir=folder)


class Counting:
    """A connection that counts the statements it is given: ``execute`` and ``executemany``
    calls (one statement each, whatever the number of rows), by their first words."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    def _count(self, sql: str) -> None:
        words = sql.replace("OR IGNORE ", "").split()
        self.counts[" ".join(words[:3] if words[0] in ("INSERT", "SELECT") else words[:2])] += 1

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._count(sql)
        return self.conn.execute(sql, *args)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        self._count(sql)
        return self.conn.executemany(sql, rows)


def statements_per_turn(tmp_path: Path, steps: int) -> Counter[str]:
    """Statements the recorder ran for a turn of ``steps`` tool steps."""
    with Store.open(tmp_path / f"runs-{steps}.sqlite3") as store:
        recorder = store.recorder()
        counting = Counting(recorder.writer.conn)
        recorder.writer.conn = counting  # type: ignore[assignment]
        scenario = tool_turn(steps, tmp_path)
        record = asyncio.run(run_turn(scenario, build_provider(scenario), recorder))
        assert record.status == "succeeded" and len(record.steps) == steps + 1
    return counting.counts


def test_a_tool_step_costs_a_fixed_few_statements(tmp_path: Path) -> None:
    short, long = statements_per_turn(tmp_path, 2), statements_per_turn(tmp_path, 2 + STEPS)
    per_step = {k: (long[k] - short[k]) / STEPS for k in long | short}
    per_step = {k: v for k, v in per_step.items() if v}
    # One transaction per step: a step's final row and events go with the next step's row,
    # written pending before its request leaves; its events in one statement; the final row
    # needs no look-up, an empty verdict list no insert, and an unchanged frame (system prompt,
    # tools) no write.
    assert per_step == {
        "BEGIN IMMEDIATE": 1,
        "COMMIT": 1,
        "INSERT INTO steps": 1,
        "UPDATE steps": 1,
        "INSERT INTO messages": 1,  # the tool call and its result
        "INSERT INTO events": 1,  # step_finished, the deltas and tool result, next step_started
    }
