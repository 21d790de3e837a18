"""The shell's item models, checked by qtmodeltester, and the text of their cells."""

from __future__ import annotations

import weakref
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from inspector.app.library import runs_item_model
from inspector.app.library.runs_item_model import (
    COLUMNS,
    RUN_ID_ROLE,
    RunsItemModel,
    duration_text,
    run_cells,
    started_text,
)
from inspector.app.library.scenarios_item_model import REF_ROLE, ScenariosItemModel
from inspector.app.runtime import releaser
from tests.helpers.runs import run_summary as _summary


def test_runs_item_model(qtmodeltester: ModelTester) -> None:
    model = RunsItemModel()
    qtmodeltester.check(model)
    model.set_runs(
        [_summary("b2"), _summary("a1", "failed", replay_of="b2"), _summary("c3", "running")]
    )
    qtmodeltester.check(model)
    assert model.rowCount() == 3 and model.columnCount() == len(COLUMNS)
    assert model.index(0, 0).data() == "succeeded"  # "stop" says nothing more
    assert model.index(1, 0).data() == "failed · validator exhausted"
    model.set_runs([_summary("f1", "fallback", termination="fallback")])
    assert model.index(0, 0).data() == "fallback"
    model.set_runs(
        [_summary("b2"), _summary("a1", "failed", replay_of="b2"), _summary("c3", "running")]
    )
    assert model.index(1, 1).data() == "↻ retry-feedback"  # a replay
    assert model.index(0, 1).data() == "retry-feedback"
    tip = model.index(1, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert "a1" in tip and "ended by validator exhausted" in tip and "scripted / demo" in tip
    assert "replay of b2" in tip
    assert model.index(1, 0).data(RUN_ID_ROLE) == "a1"
    for row in range(3):  # the running run has an icon too
        assert not model.index(row, 0).data(Qt.ItemDataRole.DecorationRole).isNull()
    assert model.row_of("c3") == 2 and model.row_of("zz") == -1
    model.set_runs([])
    assert model.rowCount() == 0


def test_runs_merge_the_newest_in_place(qtmodeltester: ModelTester) -> None:
    """A run starting or ending updates its row or adds one on top; nothing is reset."""
    model = RunsItemModel()
    early, later = "2026-01-04T09:30:00.000+00:00", "2026-01-04T09:31:00.000+00:00"
    model.set_runs([_summary("b2"), _summary("a1")])
    qtmodeltester.check(model)
    resets, changed, inserted = [], [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    assert model.merge_newest([_summary("c3", "running", started_at=later), _summary("b2")])
    assert [model.run(r).run_id for r in range(3)] == ["c3", "b2", "a1"]
    assert inserted == [(0, 0)] and changed == []  # b2 was already as listed
    assert model.merge_newest([_summary("c3", "failed", started_at=later), _summary("b2")])
    assert changed == [0] and model.index(0, 0).data() == "failed · validator exhausted"
    assert model.row_of("a1") == 2 and model.row_of("c3") == 0
    # A new run older than the top one (an import) cannot go on top: read the list again.
    assert not model.merge_newest([_summary("z9", started_at=early)])
    assert model.rowCount() == 3 and resets == []
    qtmodeltester.check(model)


def test_run_cells_text() -> None:
    cells = run_cells(_summary("a1"))
    assert cells[2] == ""  # the scenario as written
    assert cells[4:] == ("4", "370 → 84", "1.5 s", "a1")
    replay = run_cells(_summary("a2", replay_of="a1", overrides=["policy.max_attempts=1"]))
    assert replay[1:3] == ("↻ retry-feedback", "max_attempts=1 · replay of a1")
    assert duration_text(12.4) == "12 ms"


def test_started_text_is_local_time_today_and_a_date_otherwise() -> None:
    now = datetime(2026, 1, 4, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    when = now.astimezone().replace(hour=9, minute=30, second=5)
    assert started_text(when.isoformat(), now) == "09:30:05"
    earlier = (when - timedelta(days=3)).isoformat()
    assert started_text(earlier, now) == (when - timedelta(days=3)).strftime("%Y-%m-%d %H:%M")
    assert started_text("not a time") == "not a time"


def test_scenarios_item_model(qtmodeltester: ModelTester, tmp_path: Path) -> None:
    model = ScenariosItemModel(["retry-feedback", "step-cap"])
    qtmodeltester.check(model)
    assert [model.index(r).data() for r in range(2)] == ["demo:retry-feedback", "demo:step-cap"]
    path = tmp_path / "mine.toml"
    assert model.add_file(path) == 0
    qtmodeltester.check(model)
    assert model.index(0).data() == "mine.toml"
    assert model.index(0).data(REF_ROLE) == str(path.resolve())
    assert model.add_file(path) == 0 and model.rowCount() == 3  # listed once
    assert model.ensure("demo:step-cap") == 2
    assert model.ensure("demo:nope") == -1
    assert not model.index(2).data(Qt.ItemDataRole.DecorationRole).isNull()


def test_listing_many_runs_asks_nothing_of_each_row(qtbot: object) -> None:
    """The runs list lays out without calls into Python per run (a QTreeView asked the model
    its row and column counts once per row, through the filter proxy: ~1 s for 100,000)."""
    from PySide6.QtCore import QModelIndex, QPersistentModelIndex

    from inspector.app.library.library_panel import LibraryPanel

    counted: list[int] = []

    class Counting(RunsItemModel):
        def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
            counted.append(parent.row())
            return super().rowCount(parent)

    panel = LibraryPanel([])
    qtbot.addWidget(panel)  # type: ignore[attr-defined]
    panel.runs = Counting()
    panel.runs_filter.setSourceModel(panel.runs)
    panel.resize(300, 600)
    panel.show()
    runs = [_summary(f"r{n:05d}") for n in range(5_000)]
    counted.clear()
    panel.set_runs(runs, keep="r00100")
    panel.repaint()
    assert panel.selected_runs() == ["r00100"]
    assert len(counted) < 100  # not one (or two) per run


def test_a_runs_tooltip_lists_its_overrides(qtmodeltester: ModelTester) -> None:
    model = RunsItemModel()
    model.set_runs([_summary("a1", overrides=["policy.max_attempts=1", "model.temperature=0.5"])])
    qtmodeltester.check(model)
    tip = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith("\n--set policy.max_attempts=1\n--set model.temperature=0.5")


def test_a_long_list_is_shown_a_chunk_per_event_loop_turn(
    qtmodeltester: ModelTester, qtbot: object
) -> None:
    """Listing 100,000 runs in one reset held the UI thread ~54 ms: the newest CHUNK rows come
    at once, the older ones CHUNK rows per insert at the bottom, in the next loop turns."""
    model = RunsItemModel()
    model.CHUNK = 10
    qtmodeltester.check(model)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    runs = [_summary(f"r{n:03d}") for n in range(35)]  # newest first
    model.set_runs(runs)
    assert model.rowCount() == 10 and model.listing
    assert model.row_of("r005") == 5 and model.row_of("r020") == -1  # not shown yet
    qtbot.waitUntil(lambda: not model.listing)  # type: ignore[attr-defined]
    assert inserted == [(10, 19), (20, 29), (30, 34)]  # each a chunk, at the bottom
    assert [model.run(r).run_id for r in range(35)] == [r.run_id for r in runs]
    assert model.row_of("r020") == 20
    qtmodeltester.check(model)


def test_a_run_starting_while_the_list_is_shown_in_chunks(qtbot: object) -> None:
    model = RunsItemModel()
    model.CHUNK = 10
    model.set_runs([_summary(f"r{n:03d}") for n in range(25)])
    later = "2099-01-01T00:00:00.000+00:00"
    changed: list[int] = []
    model.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))
    # r020 is not shown yet: its new status is kept, no row changes for it
    assert model.merge_newest(
        [_summary("new", "running", started_at=later), _summary("r020", "failed")]
    )
    assert model.rowCount() == 11 and model.run(0).run_id == "new" and changed == []
    qtbot.waitUntil(lambda: not model.listing)  # type: ignore[attr-defined]
    assert model.rowCount() == 26 and model.run(model.row_of("r020")).status == "failed"


def test_a_new_listing_hands_the_old_one_to_the_releasing_worker(
    qtbot: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 summaries freed inside ``set_runs`` held the UI thread ~40 ms: the old list,
    its cells and its index go to the worker that frees them a slice at a time."""
    model = RunsItemModel()
    first = [_summary(f"r{n:03d}") for n in range(300)]
    kept = [weakref.ref(run) for run in first]
    model.set_runs(first)
    model.index(0, 1).data()  # a row's cells made
    del first
    handed: list[object] = []
    monkeypatch.setattr(runs_item_model, "release_soon", handed.append)
    model.set_runs([_summary("new")])
    assert all(ref() is not None for ref in kept)  # not freed on this thread
    old_runs = next(items for items in handed if isinstance(items, list))
    assert {id(ref()) for ref in kept} == {id(run) for run in old_runs}
    assert any(isinstance(items, dict) and items for items in handed)  # the cells, the index
    assert model.rowCount() == 1 and model.run(0).run_id == "new"
    monkeypatch.undo()
    for items in handed:
        assert isinstance(items, list | dict)
        releaser.release_soon(items)
    del handed, old_runs, items
    releaser.releaser().submit(lambda: None).result(timeout=10)  # the worker's queue drained
    assert all(ref() is None for ref in kept)
