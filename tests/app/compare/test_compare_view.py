"""Comparing 2–4 runs in the window: the item model (qtmodeltester), the line diff of what the
model saw, and the whole path — runs recorded in the window under different policies, selected
with Ctrl+click, compared with Ctrl+D."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPalette
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from inspector.app.app import save_screenshot
from inspector.app.compare import compare_controller
from inspector.app.compare.compare_item_model import (
    CELL_ROLE,
    DIVERGES_ROLE,
    ROW_KIND_ROLE,
    STEP_ROLE,
    CompareItemModel,
)
from inspector.app.compare.compare_view import CompareView
from inspector.app.shell.main_window import MainWindow
from inspector.app.widgets.diff_tints import diff_colour
from inspector.core.records import RunRecord
from inspector.reports import compare_lines
from inspector.reports.compare import StepCell, compare_runs
from inspector.reports.compare_lines import align, diff_requests, request_lines, rewrapped
from tests.app.shell.test_screenshots import not_blank
from tests.helpers.runs import demo_record
from tests.helpers.scenarios import streaming_scenario
from tests.helpers.window import run_in_window

DEMO = "demo:retry-feedback"
LATEST = 'policy.feedback_history="latest"'
CTRL = Qt.KeyboardModifier.ControlModifier


@functools.cache
def _record(*overrides: str) -> RunRecord:
    # On a thread of its own: a test's qasync loop may be running on this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, demo_record("retry-feedback", *overrides)).result()


def _labels(model: CompareItemModel) -> list[str]:
    return [
        str(model.headerData(r, Qt.Orientation.Vertical, Qt.ItemDataRole.DisplayRole))
        for r in range(model.rowCount())
    ]


def test_compare_item_model(qtmodeltester: ModelTester) -> None:
    records = [_record(), _record("policy.feedback_history=latest")]
    comparison = compare_runs(records)
    model = CompareItemModel()
    qtmodeltester.check(model)
    model.set_comparison(comparison)
    qtmodeltester.check(model)

    assert model.columnCount() == 2
    labels = _labels(model)
    assert labels[0] == "policy · feedback_history"
    assert model.index(0, 1).data() == "latest"
    assert labels[1] == "summary"
    assert model.index(1, 0).data().startswith("succeeded")
    assert comparison.divergence is not None
    row = model.divergence_row()
    assert labels[row] == f"▶ step {comparison.divergence.index}"
    assert model.index(row, 1).data(DIVERGES_ROLE) is True
    assert model.index(row - 1, 1).data(DIVERGES_ROLE) is False
    assert model.index(row, 0).data(STEP_ROLE) == comparison.divergence.index
    assert model.index(row, 0).data(ROW_KIND_ROLE) == "step"
    tip = model.headerData(row, Qt.Orientation.Vertical, Qt.ItemDataRole.ToolTipRole)
    assert "the requests differ at messages[" in tip
    # Step 2 failed a validator in both runs: the chip marks and the reason in the tooltip.
    step2 = model.index(model.row_of_step(2), 0)
    cell = step2.data(CELL_ROLE)
    assert isinstance(cell, StepCell) and cell.status == "failed_validation"
    assert "✗" in step2.data() and "cleared" in step2.data()
    failed = next(v for v in cell.verdicts if v.status == "fail")
    assert f"✗ {failed.validator} fail: {failed.reason}" in step2.data(Qt.ItemDataRole.ToolTipRole)
    assert model.row_of_step(99) == -1

    model.set_comparison(None)
    qtmodeltester.check(model)
    assert model.rowCount() == 0 and model.columnCount() == 0


def test_request_lines_and_the_aligned_line_diff() -> None:
    accumulate, latest = _record(), _record("policy.feedback_history=latest")
    lines = request_lines(accumulate.steps[3].request)
    assert lines[0] == "SYSTEM PROMPT" and "— user" in lines and "— assistant" in lines
    assert any(line.startswith("TOOL_CHOICE") for line in lines)
    assert not any("call_" in line for line in lines)  # provider call ids are renamed #1, #2

    diff = diff_requests([accumulate.steps[3].request, latest.steps[3].request])
    kinds = {cell.kind for row in diff.rows for cell in row}
    assert "same" in kinds and kinds - {"same"}
    # A differing line counts once, however narrow the wrap.
    narrow = diff_requests([accumulate.steps[3].request, latest.steps[3].request], wrap=20)
    assert len(narrow.rows) > len(diff.rows) and narrow.changed == diff.changed > 0
    assert rewrapped(diff, 20) == narrow  # a new width re-wraps, without diffing again
    assert diff.clipped == [0, 0]
    same = diff_requests([accumulate.steps[0].request, latest.steps[0].request])
    assert all(cell.kind == "same" for row in same.rows for cell in row)
    missing = diff_requests([accumulate.steps[0].request, None])
    assert {row[1].kind for row in missing.rows} == {"filler"}  # no say in the baseline
    assert {row[0].kind for row in missing.rows} == {"same"}

    rows = align([["a", "b", "c", "d"], ["a", "B", "c", "x", "d"], ["a", "c"]])
    assert [tuple((c.text, c.kind) for c in row) for row in rows] == [
        (("a", "same"), ("a", "same"), ("a", "same")),
        (("b", "removed"), ("B", "changed"), ("", "removed")),
        (("c", "same"), ("c", "same"), ("c", "same")),
        (("", "filler"), ("x", "added"), ("", "filler")),
        (("d", "removed"), ("d", "same"), ("", "removed")),
    ]
    wrapped = align([["  " + "word " * 40], ["short"]], wrap=60)
    assert len(wrapped) > 1 and all(len(row[0].text) <= 60 for row in wrapped)
    assert all(row[1].kind == "changed" for row in wrapped)  # every line of it, kept aligned


def test_a_line_indented_past_the_wrap_width_wraps() -> None:
    """textwrap never returns when the continuation indent fills the line: the indent kept on
    continuation lines is capped (a daemon thread, so that a regression fails, not hangs)."""
    result: list[list[tuple[compare_lines.DiffLine, ...]]] = []
    line = " " * 120 + "word " * 30
    worker = threading.Thread(target=lambda: result.append(align([[line], ["x"]], wrap=60)))
    worker.daemon = True
    worker.start()
    worker.join(timeout=10)
    assert result, "wrapping a deeply indented line did not finish"
    assert all(len(row[0].text) <= 60 for row in result[0])
    assert "".join(row[0].text for row in result[0]).split() == line.split()


# ---- in the window ----------------------------------------------------------------------------


def _run(window: MainWindow, qtbot: QtBot, *overrides: str) -> RunRecord:
    start = lambda: window.runner.start(DEMO, list(overrides))  # noqa: E731
    return run_in_window(window, qtbot, start=start, timeout_ms=30_000)


def _click_run(
    window: MainWindow, qtbot: QtBot, run_id: str, modifier: Qt.KeyboardModifier
) -> None:
    runs = window.library
    index = runs.runs_filter.mapFromSource(runs.runs.index(runs.runs.row_of(run_id), 0))
    rect = runs.run_list.visualRect(index)
    qtbot.mouseClick(runs.run_list.viewport(), Qt.MouseButton.LeftButton, modifier, rect.center())


def _compared(window: MainWindow, qtbot: QtBot, trigger: object) -> None:
    view = window.compare.view
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        trigger()  # type: ignore[operator]
    qtbot.waitUntil(lambda: window.centre_tabs.currentWidget() is view)


def test_select_two_runs_and_compare_them(window: MainWindow, qtbot: QtBot) -> None:
    first = _run(window, qtbot)
    second = _run(window, qtbot, LATEST)
    _click_run(window, qtbot, second.run_id, Qt.KeyboardModifier.NoModifier)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == second.run_id)
    _click_run(window, qtbot, first.run_id, CTRL)  # a Ctrl+click adds a run to the selection
    assert sorted(window.library.selected_runs()) == sorted([first.run_id, second.run_id])
    window.refresh_runs(keep=first.run_id)  # as when a run ends: the selection stays
    assert sorted(window.library.selected_runs()) == sorted([first.run_id, second.run_id])
    assert window.compare.action in window.run_menu.actions()
    assert window.compare.action in window.library.run_list.actions()  # the context menu

    _compared(window, qtbot, lambda: qtbot.keyClick(window, Qt.Key.Key_D, CTRL))
    view = window.compare.view
    model = view.model
    assert model.columnCount() == 2
    assert [r.run_id for r in view.records] == [first.run_id, second.run_id]  # oldest first
    labels = _labels(model)
    assert "policy · feedback_history" in labels
    expected = compare_runs(view.records).divergence
    assert expected is not None
    row = model.divergence_row()
    assert labels[row] == f"▶ step {expected.index}"
    assert view.divergence.text().startswith(f"▶ First divergence at step {expected.index}")
    assert first.run_id in view.heading.text() and second.run_id in view.heading.text()

    # The divergence row is selected first; its line diff tints the lines that differ.
    assert view.table.currentIndex().row() == row
    assert view.line_diff.step == expected.index
    kinds = view.line_diff.line_kinds(1)
    changed = [n for n, kind in enumerate(kinds) if kind != "same"]
    assert changed
    pane = view.line_diff.panes[1]
    block = pane.document().findBlockByNumber(changed[0])
    colour = diff_colour(kinds[changed[0]], pane.palette())
    assert colour is not None and block.blockFormat().background().color() == colour
    same = kinds.index("same")
    assert pane.document().findBlockByNumber(same).blockFormat().background().style() == (
        Qt.BrushStyle.NoBrush
    )

    # A dark palette re-tints the lines in its own colours.
    dark = QPalette(view.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    view.line_diff.setPalette(dark)
    dark_colour = diff_colour(kinds[changed[0]], dark)
    assert dark_colour is not None and dark_colour != colour
    block = pane.document().findBlockByNumber(changed[0])
    assert block.blockFormat().background().color() == dark_colour

    # Another step: its diff replaces the first (step 1 was the same in both runs).
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        view.select_row(model.row_of_step(1))
    assert set(view.line_diff.line_kinds(1)) == {"same"}

    # A plain click on one run brings its timeline back.
    _click_run(window, qtbot, first.run_id, Qt.KeyboardModifier.NoModifier)
    qtbot.waitUntil(lambda: window.centre_tabs.currentWidget() is window.timeline_page)
    assert window.library.selected_runs() == [first.run_id]


def _three_way(window: MainWindow, qtbot: QtBot) -> list[RunRecord]:
    records = [
        _run(window, qtbot),
        _run(window, qtbot, LATEST),
        _run(window, qtbot, "policy.max_attempts=2"),
    ]
    _compared(window, qtbot, lambda: window.compare_runs([r.run_id for r in records]))
    return records


def test_a_three_way_compare(window: MainWindow, qtbot: QtBot) -> None:
    records = _three_way(window, qtbot)
    view = window.compare.view
    assert view.model.columnCount() == 3
    assert [r.run_id for r in view.records] == [r.run_id for r in records]
    labels = _labels(view.model)
    assert "policy · feedback_history" in labels and "policy · max_attempts" in labels
    panes = [p for p in view.line_diff.panes if p.parentWidget().isVisible()]
    assert len(panes) == 3
    rows = len(view.line_diff.line_kinds(0))
    assert all(p.document().blockCount() == rows for p in panes)  # aligned line for line

    # Fewer runs next: the third pane is hidden, the line diff still shown.
    _compared(window, qtbot, lambda: window.compare_runs([r.run_id for r in records[:2]]))
    assert view.model.columnCount() == 2
    assert [p.parentWidget().isVisible() for p in view.line_diff.panes] == [True, True, False]
    assert view.line_diff.headings[1].text().startswith(f"2: {records[1].run_id[:8]}")

    # The right docks are put away while comparing (the columns get the width), and come back
    # with the timeline, the tab that was raised raised again.
    window.compare.show_timeline()
    qtbot.waitUntil(lambda: window.detail_dock.isVisible())
    window.policy_dock.raise_()
    qtbot.waitUntil(lambda: not window.policy_dock.visibleRegion().isEmpty())
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):  # rewrapped to the new width
        window.centre_tabs.setCurrentWidget(view)
    assert not window.detail_dock.isVisible() and not window.policy_dock.isVisible()
    assert view.line_diff.panes[0].horizontalScrollBar().maximum() == 0  # lines fit the pane

    window.welcome_action.trigger()  # the welcome page lives on the Timeline tab
    assert window.detail_dock.isVisible() and window.policy_dock.isVisible()
    qtbot.waitUntil(lambda: not window.policy_dock.visibleRegion().isEmpty())
    assert window.detail_dock.visibleRegion().isEmpty()  # behind the policy tab, as before
    assert window.centre_tabs.currentWidget() is window.timeline_page
    window.centre_tabs.setCurrentWidget(view)
    # Starting a run brings the timeline back to the front.
    _run(window, qtbot)
    assert window.centre_tabs.currentWidget() is window.timeline_page


def test_the_compare_screenshot(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> None:
    """The window with a three-way compare, as a PNG: ``COMPARE_SCREENSHOT=path`` keeps it (the
    lead's docs/screenshots/compare.png)."""
    _three_way(window, qtbot)
    path = Path(os.environ.get("COMPARE_SCREENSHOT", tmp_path / "compare.png"))
    save_compare_screenshot(window, path)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1400, 900)
    assert not_blank(image) is None, not_blank(image)


def save_compare_screenshot(window: MainWindow, path: Path) -> None:
    """The Compare tab in front, the first step's row hovered by nothing: as a user sees it."""
    window.centre_tabs.setCurrentWidget(window.compare.view)
    save_screenshot(window, path)


def test_compare_needs_two_to_four_finished_runs(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    only = _run(window, qtbot)
    _click_run(window, qtbot, only.run_id, Qt.KeyboardModifier.NoModifier)
    window.compare.action.trigger()
    assert window.message_bar.isVisible() and window.message_bar.level == "warning"
    assert "Select 2–4 runs" in window.message_bar.text.text()
    assert window.centre_tabs.currentWidget() is window.timeline_page

    window.compare_runs(["a", "b", "c", "d", "e"])
    assert "at most 4" in window.message_bar.text.text()

    window.compare_runs([only.run_id, "no-such-run"])  # read off-thread: the error comes back
    qtbot.waitUntil(lambda: window.message_bar.level == "error")
    assert "Cannot compare" in window.message_bar.text.text()

    # A run still recording cannot be compared yet.
    window.library.select_scenario(str(streaming_scenario(tmp_path, words=60)))
    with qtbot.waitSignal(window.runner.engineEvent, timeout=20_000):
        window.run_turn()
    qtbot.waitUntil(lambda: window.live is not None and window.live.run_id is not None)
    assert window.live is not None
    window.compare_runs([only.run_id, window.live.run_id])
    assert "still recording" in window.message_bar.text.text()
    with qtbot.waitSignal(window.runner.busyChanged, timeout=20_000):
        window.runner.stop()


def test_any_failure_to_read_is_one_line_and_leaves_no_status_behind(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(path: Path, run_ids: list[str]) -> None:
        raise RuntimeError("database disk image is malformed\n(at page 12)")

    monkeypatch.setattr(compare_controller, "load_comparison", broken)
    window.compare_runs(["aaaa", "bbbb"])
    assert window.statusBar().currentMessage() == "Comparing 2 runs…"
    qtbot.waitUntil(lambda: window.message_bar.level == "error")
    assert window.message_bar.text.text() == "Cannot compare: RuntimeError: (at page 12)"
    assert window.statusBar().currentMessage() == ""
    assert window.centre_tabs.currentWidget() is window.timeline_page


def test_a_comparison_the_user_moved_away_from_does_not_land(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = _run(window, qtbot), _run(window, qtbot, LATEST)
    release = threading.Event()
    load = compare_controller.load_comparison

    def slow(path: Path, run_ids: list[str]) -> object:
        release.wait(10)
        return load(path, run_ids)

    monkeypatch.setattr(compare_controller, "load_comparison", slow)
    window.compare_runs([first.run_id, second.run_id])
    window.library.select_run(first.run_id)  # a plain click on one run: its timeline
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == first.run_id)
    assert window.statusBar().currentMessage() == ""
    read = window.compare._read.task
    release.set()
    assert read is not None
    qtbot.waitUntil(read.done)
    assert window.centre_tabs.currentWidget() is window.timeline_page
    assert window.compare.view.records == []


def test_runs_of_different_scenarios_are_compared_with_a_warning(
    window: MainWindow, qtbot: QtBot
) -> None:
    first = _run(window, qtbot)
    with qtbot.waitSignal(window.runner.finished, timeout=30_000) as finished:
        assert window.runner.start("demo:empty-final")
    qtbot.waitUntil(lambda: not window.runner.busy)
    other: RunRecord = finished.args[0]
    _compared(window, qtbot, lambda: window.compare_runs([first.run_id, other.run_id]))
    qtbot.waitUntil(lambda: window.message_bar.level == "warning")
    assert "not the same turn" in window.message_bar.text.text()
    assert window.compare.view.model.columnCount() == 2


def _long(record: RunRecord, steps: int) -> RunRecord:
    """``record`` with its last step repeated up to ``steps`` steps (the grid's load)."""
    last = record.steps[-1]
    extra = [last.model_copy(update={"index": i}) for i in range(len(record.steps) + 1, steps + 1)]
    return record.model_copy(update={"steps": [*record.steps, *extra]})


def test_a_thousand_step_comparison_stays_one_painted_grid(
    qloop: object, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = [_long(_record(), 1000), _long(_record("policy.feedback_history=latest"), 990)]
    view = CompareView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    monkeypatch.setattr(compare_lines, "MAX_LINES", 10)  # and a history past the line limit
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        view.show_comparison(records)
    model = view.model
    assert model.rowCount() == 1 + 1 + 1000  # the policy field, the summary, the steps
    assert _labels(model)[model.divergence_row()] == "▶ step 4"
    assert view.line_diff.diff is not None and view.line_diff.diff.clipped[0] > 0
    assert "lines past the limit not shown" in view.line_diff.headings[0].text()
    # The last step: only the longer run got there; scrolled to, painted, no widget per cell.
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        view.select_row(model.row_of_step(1000))
    index = model.index(model.row_of_step(1000), 1)
    assert index.data(CELL_ROLE) is None
    assert view.table.viewport().rect().intersects(view.table.visualRect(index))
    assert view.table.indexWidget(index) is None
    assert set(view.line_diff.line_kinds(1)) == {"filler"}
    assert view.line_diff.title.text() == (
        "What the model saw at step 1000 — each run against run 1: the same; "
        "run 2 never got this far"
    )


def test_the_line_diff_wraps_to_the_width_of_its_panes(qloop: object, qtbot: QtBot) -> None:
    """Long lines wrap where the narrowest pane ends, and again when the panes are resized:
    no line of what the model saw hides past a pane's right edge."""
    records = [_record(), _record("policy.feedback_history=latest")]
    view = CompareView()
    qtbot.addWidget(view)
    view.resize(600, 700)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        view.show_comparison(records)
    diff = view.line_diff.diff
    assert diff is not None and diff.wrap < compare_lines.WRAP
    panes = view.line_diff.panes[:2]
    assert all(p.horizontalScrollBar().maximum() == 0 for p in panes)
    assert max(len(cell.text) for row in diff.rows for cell in row) <= diff.wrap

    with qtbot.waitSignal(view.lineDiffShown, timeout=20_000):
        view.resize(1400, 700)  # wider panes: rewrapped, the same step
    wider = view.line_diff.diff
    assert wider is not None and wider.wrap > diff.wrap and view.line_diff.step == 4
    assert all(p.horizontalScrollBar().maximum() == 0 for p in panes)
