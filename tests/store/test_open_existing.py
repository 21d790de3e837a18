"""``Store.open(path, create=False)``: an existing store or nothing — no file, no folder, no side
file made just to read; and which lookups are bad input (the CLI's exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.errors import BadInputError
from inspector.core.events import RunStarted
from inspector.store import (
    RunNotFound,
    RunStillRecording,
    Store,
    StoreMissing,
    StoreUnusable,
    SweepNotFound,
)
from inspector.store.models import UnknownRun
from tests.store.conftest import record_demo


def test_no_file_is_store_missing_and_nothing_is_made(tmp_path: Path) -> None:
    path = tmp_path / "no" / "folder" / "runs.sqlite3"
    with pytest.raises(StoreMissing, match=rf"^no store at {path}$") as raised:
        Store.open(path, create=False, read_only_fallback=True)
    assert raised.value.path == path and isinstance(raised.value, StoreUnusable)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_is_no_store_and_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    path.touch()
    with pytest.raises(StoreUnusable, match="not an agent-inspector store \\(an empty file\\)"):
        Store.open(path, create=False)
    assert [p.name for p in tmp_path.iterdir()] == ["runs.sqlite3"]
    assert path.stat().st_size == 0


def test_an_existing_store_opens_as_before(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with Store.open(path) as store:
        record, _ = record_demo(store, "empty-final")
    with Store.open(path, create=False) as store:
        assert store.load(record.run_id[:6]) == record


def test_an_unknown_run_or_sweep_is_bad_input_a_run_still_recording_is_not(
    store: Store,
) -> None:
    record, _ = record_demo(store, "empty-final")
    with pytest.raises(UnknownRun, match=f"^no run 'zzz' in {store.path}$") as unknown:
        store.load("zzz")
    assert isinstance(unknown.value, RunNotFound) and isinstance(unknown.value, BadInputError)
    with pytest.raises(SweepNotFound) as sweep:
        store.sweep("swzzz")
    assert isinstance(sweep.value, BadInputError)
    recorder = store.recorder()  # alive: the run stays "running"
    recorder(RunStarted.from_record(record.model_copy(update={"run_id": "0still0running"})))
    with pytest.raises(RunStillRecording) as still:
        store.load("0still0running")
    assert isinstance(still.value, RunNotFound) and not isinstance(still.value, BadInputError)
