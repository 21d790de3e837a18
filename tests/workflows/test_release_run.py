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
    monkeypatch.setattr(runs, "RELEASE_BUILT", 4)
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


def test_a_light_runs_built_steps_are_dropped_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the light read built (the steps with notes, those a view read) is dropped
    ``RELEASE_BUILT`` steps per call, with a pause between two (the UI thread takes the GIL
    then); slices with nothing built cost no pause. The sequences keep their length."""
    from inspector.core import lazy_steps

    monkeypatch.setattr(lazy_steps, "RELEASE_BUILT", 4)
    monkeypatch.setattr(lazy_steps, "RELEASE_SLICE", 1_000)
    pauses: list[float] = []
    monkeypatch.setattr(lazy_steps.time, "sleep", pauses.append)
    db = tmp_path / "runs.sqlite3"
    record = varied_turn(23)
    with Store.open(db) as store:
        store.save(record)
    run = runs.load_light_run(db, record.run_id, min_steps=0)
    assert run is not None
    steps, rows = lazy_steps.light_steps(run), light_rows(run)
    assert steps is not None and rows is not None
    built = (0, 1, 2, 3, 20, 22)  # only these (the light read built those with notes)
    for sequence in (steps, rows):
        sequence._items = [sequence[n] if n in built else None for n in range(23)]
    first, last = weakref.ref(steps[0]), weakref.ref(rows[22])
    gc.collect()
    runs.release_run(run)
    assert first() is None and last() is None
    assert steps.built() == rows.built() == rows.held() == 0
    assert len(steps) == len(rows) == 23
    # the bodies: one slice; each sequence's slices from the end, 4 a slice: 19-22, 3-6 and
    # 0-2 hold built steps, 15-18, 11-14 and 7-10 none
    assert len(pauses) == 1 + 3 + 3


def test_release_items_empties_a_list_and_a_dict_a_slice_at_a_time() -> None:
    items = list(range(1_001))
    cells = {n: (str(n),) for n in range(1_001)}
    runs.release_items(items)
    runs.release_items(cells)
    assert items == [] and cells == {}
