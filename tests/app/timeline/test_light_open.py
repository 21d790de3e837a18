"""A long stored run opened from the store's light read (core/lazy_steps.py): the timeline lays
out the same rows and paints the same cells as from the full record, building only the steps
with notes; once the full steps are put in (``LiveRun.fill`` + ``steps_filled``) nothing is
laid out again and every cell is still the same."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester

from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel, TimelineRole
from inspector.app.timeline.timeline_rows import lay_out_light
from inspector.core.lazy_steps import light_rows, light_run
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord
from inspector.store import Store
from tests.store.synthetic import every_shape
from tests.store.test_bulk_read import varied_turn

ROLES = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.ToolTipRole,
    TimelineRole.STATUS,
    TimelineRole.CLEARED,
    TimelineRole.ATTEMPT,
    TimelineRole.STEP_INDEX,
    TimelineRole.VERDICTS,
    TimelineRole.MARKERS,
    TimelineRole.LATENCY_FRACTION,
)


def cells(model: TimelineItemModel) -> list[Any]:
    """Every row's entry, note and cells (painted, and each role the views read)."""
    out: list[Any] = []
    for row in range(model.rowCount()):
        out.append((model.step_at(row), model.note_at(row)))
        for column in range(len(Column)):
            index = model.index(row, column)
            out.append(model.paint_cell(row, column))
            out.extend(index.data(role) for role in ROLES)
    return out


def opened(tmp_path: Path, record: RunRecord) -> tuple[LiveRun, LiveRun, LiveRun]:
    """(the run folded from its full record, the same from the light read, another full fold
    to fill the light one with)."""
    with Store.open(tmp_path / "runs.sqlite3") as store:
        store.save(record)
        light = store.load_light(record.run_id)
        assert light is not None
        return (
            LiveRun.from_record(store.load(record.run_id)),
            light_run(light),
            LiveRun.from_record(store.load(record.run_id)),
        )


RUNS: dict[str, Callable[[], RunRecord]] = {
    "every shape": every_shape,  # notes, a cleared attempt, an error, forced steps
    "varied": lambda: varied_turn(23),  # failed verdicts, feedback, large texts
}


@pytest.mark.parametrize("show_cleared", [True, False])
@pytest.mark.parametrize("name", list(RUNS))
def test_light_rows_and_cells_are_the_full_runs(
    qtbot: object, tmp_path: Path, name: str, show_cleared: bool
) -> None:
    full, light, filler = opened(tmp_path, RUNS[name]())
    expected, model = TimelineItemModel(), TimelineItemModel()
    ModelTester(qtbot).check(model)  # type: ignore[arg-type]
    for each, run in ((expected, full), (model, light)):
        each.set_show_cleared(show_cleared)
        each.show_run(run)
    rows = light_rows(light)
    assert rows is not None and rows.built() <= len(rows.noted)  # only steps with notes
    assert model.attempt_counts() == expected.attempt_counts()
    want = cells(expected)
    assert cells(model) == want

    light.fill(filler)
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    with qtbot.waitSignal(model.dataChanged, timeout=1_000):  # type: ignore[attr-defined]
        model.steps_filled()
    assert not resets and not light.light and light.steps is filler.steps
    assert cells(model) == want


def test_fill_swaps_steps_and_record_in_place(tmp_path: Path) -> None:
    full, light, _ = opened(tmp_path, every_shape())
    assert light.light and light.finished
    assert light.step(2) is not None and light.step(2).step.request.messages == []  # type: ignore[union-attr]
    light.fill(full)
    assert light.record is full.record and light.steps is full.steps
    assert light.finals is full.finals and light_rows(light) is None


@pytest.mark.parametrize("prepared_cleared", [True, False])
def test_rows_laid_out_ahead_are_adopted_only_for_the_same_filter(
    qtbot: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prepared_cleared: bool
) -> None:
    """``lay_out_light`` (a worker thread's) gives the rows ``show_run`` would lay out; the
    model adopts them (no ``take_light`` of its own) unless its cleared-steps filter differs."""
    from inspector.app.timeline import timeline_item_model

    full, light, _ = opened(tmp_path, every_shape())
    expected, model = TimelineItemModel(), TimelineItemModel()
    for each, run in ((expected, full), (model, light)):
        each.set_show_cleared(False)
        each.show_run(run)
    want = cells(expected)
    model.show_run(LiveRun())
    takes: list[int] = []
    real = timeline_item_model.take_light
    monkeypatch.setattr(timeline_item_model, "take_light", lambda *a: takes.append(1) or real(*a))
    rows = light_rows(light)
    assert rows is not None
    model.prepare(lay_out_light(rows, light.steps, prepared_cleared))
    model.show_run(light)
    assert len(takes) == (1 if prepared_cleared else 0)  # filter changed: laid out again
    assert cells(model) == want
    model.show_run(light)  # a layout is adopted once: the next show lays out its own
    assert len(takes) == (2 if prepared_cleared else 1) and cells(model) == want
