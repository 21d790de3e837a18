"""B4 after a crash: a step row left pending by a dead process becomes interrupted on reopen."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.events import RunStarted
from inspector.core.policy import Policy
from inspector.core.records import StepRequest
from inspector.store import RunStillRecording, Store
from inspector.store.recovery import process_alive, writer_alive
from inspector.store.writer import RowWriter

SLOW_SCENARIO = """
name = "slow"
[model]
provider = "scripted"
name = "demo"
[prompt]
system = "You look things up."
user = "find x"
[[tools]]
name = "lookup"
result = "x is here"
[[script]]
tool_calls = [{ name = "lookup", arguments = {} }]
[[script]]
text = "this answer never finishes streaming"
delay_ms = 600000
"""


@pytest.fixture
def slow_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    scenario = tmp_path / "slow.toml"
    scenario.write_text(SLOW_SCENARIO)
    db = tmp_path / "runs.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "inspector", "run", str(scenario), "--db", str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield proc, db
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


def wait_for_pending_step(proc: subprocess.Popen[bytes], db: Path) -> str:
    """The run id once the store shows step 2 started and not finished (polls; the test's
    timeout bounds the wait)."""
    while True:
        assert proc.poll() is None, "the run ended before it could be killed"
        if db.exists():
            with Store.open(db) as store:
                runs = store.runs()
                if runs:
                    kinds = [
                        (e.event.kind, getattr(e.event, "index", None))
                        for e in store.events(runs[0].run_id)
                    ]
                    if ("step_started", 2) in kinds:
                        return runs[0].run_id
        time.sleep(0.05)


def test_killed_run_is_interrupted_on_reopen(
    slow_run: tuple[subprocess.Popen[bytes], Path],
) -> None:
    proc, db = slow_run
    run_id = wait_for_pending_step(proc, db)
    # While its writer lives, opening the store leaves the run alone.
    with Store.open(db) as store:
        assert store.recovered == []
        assert store.runs()[0].status == "running"
        with pytest.raises(RunStillRecording, match=f"run '{run_id}' in .* is still being"):
            store.load(run_id)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store.open(db) as store:
        assert store.recovered == [run_id]
        record = store.load(run_id)
        summary = store.runs()[0]
    assert (summary.status, summary.steps) == ("interrupted", 2)
    assert record.status == "interrupted" and record.termination is None
    assert record.error is not None and "died before the run finished" in record.error.message
    first, second = record.steps
    assert first.status == "success" and first.tool_results[0].content == "x is here"
    assert second.status == "interrupted" and second.response is None
    assert [m.content for m in second.request.messages] == ["find x", None, "x is here"]
    assert record.budgets.steps_used == 2 and record.duration_ms > 0
    # Recovery happens once; the rows hold no pending step any more.
    with Store.open(db) as store:
        assert store.recovered == []
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM steps WHERE status = 'pending'").fetchone() == (0,)
    conn.close()


def test_rows_of_a_writer_without_liveness_columns_are_dead(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    with Store.open(db) as store:
        writer = RowWriter(store._conn, db)
        header = RunStarted(
            run_id="orphan000001",
            scenario="s",
            started_at="2026-01-01T00:00:00+00:00",
            policy=Policy(),
            provider="scripted",
            model="m",
        )
        with writer.transaction():
            writer.start_run(header, host="elsewhere", pid=1)
            writer.start_step("orphan000001", 1, 1, StepRequest(system="", messages=[]), None)
        # Another machine's writer cannot be checked: left alone...
        with Store.open(db) as other:
            assert other.recovered == []
        store._conn.execute("UPDATE runs SET writer_host = NULL, writer_pid = NULL")
    # ...a row with no writer recorded (schema version 1) is dead.
    with Store.open(db) as store:
        assert store.recovered == ["orphan000001"]
        assert [s.status for s in store.load("orphan000001").steps] == ["interrupted"]


def test_liveness() -> None:
    assert process_alive(os.getpid())
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert not process_alive(done.pid)
    assert not process_alive(0)
    assert writer_alive("some-other-host", done.pid)
    assert not writer_alive(None, None)
