"""Recording that fails part-way never leaves a finished run pending or interrupted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.store import Store


def test_a_locked_store_mid_run_still_ends_with_the_finished_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.sqlite3"
    with Store.open(db):
        pass
    calls = {"n": 0}
    real = Store.recorder

    def flaky_recorder(self: Store):  # type: ignore[no-untyped-def]
        recorder = real(self)
        write = recorder._record

        def record(event):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 3:  # after the run and its first step started
                raise sqlite3.OperationalError("database is locked")
            write(event)

        recorder._record = record  # type: ignore[method-assign]
        return recorder

    monkeypatch.setattr(Store, "recorder", flaky_recorder)
    code = main(["run", "demo:retry-feedback", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 0 and "database is locked" in err
    with Store.open(db) as store:
        (summary,) = store.runs()
        record = store.load(summary.run_id)
    assert (summary.status, record.status) == ("succeeded", "succeeded")
    assert [s.status for s in record.steps] == [
        "success",
        "failed_validation",
        "failed_validation",
        "success",
    ]
