"""``release_run``: a stored run nobody shows is emptied slice by slice (off the UI thread)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from inspector.core.lazy_steps import light_rows
from inspector.store import Store
from inspector.workflows import runs
from tests.store.test_bulk_read import varied_turn


def test_a_released_run_is_emptied_and_its_steps_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs, "RELEASE_SLICE", 4)
    db = tmp_path / "runs.sqlite3"
    record = varied_turn(23)
    with Store.open(db) as store:
        store.save(record)
    run = runs.load_stored_run(db, record.run_id)
    assert run.record is not None
    step = weakref.ref(run.record.steps[5])
    gc.collect()
    runs.release_run(run)
    assert run.steps == [] and run.finals == [] and run.record.steps == []
    assert run.record.transcript == []
    assert step() is None  # freed by reference counting, no collection needed


def test_a_light_run_the_user_moved_away_from_is_released_through_its_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.sqlite3"
    record = varied_turn(23)
    with Store.open(db) as store:
        store.save(record)
    run = runs.load_light_run(db, record.run_id, min_steps=0)
    assert run is not None and run.light
    rows = light_rows(run)
    assert rows is not None
    runs.release_run(run)  # read-only sequences: no item deletion, the bodies dropped
    assert rows.held() == 0
