"""A small sweep of ``demo:sweep`` in the whole window: the table, a chart's data, the runs
list filtered to an arm's runs, two arms' runs in Compare."""

from __future__ import annotations

from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.library.runs_item_model import RUN_ID_ROLE
from inspector.app.shell.main_window import MainWindow
from inspector.app.sweep.arms_item_model import HEADERS, arm_cells
from inspector.store import Store
from inspector.workflows.sweeps import report_of


def test_a_sweep_in_the_window(
    window: MainWindow, store: Store, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    view, controller = window.sweep_view, window.sweep
    assert window.library.select_scenario("demo:sweep")
    window.centre_tabs.show_sweep()
    assert view.scenario == "demo:sweep"
    view.vary.setPlainText("policy.feedback_history=accumulate,latest,none")
    view.repeat.setValue(4)
    view.concurrency.setValue(3)
    with qtbot.waitSignal(
        controller.runningChanged, timeout=60_000, check_params_cb=lambda r: not r
    ):
        view.run_button.click()
    assert controller.sweep_id is not None
    assert window.centre_tabs.currentWidget() is view  # the runs list's news moved nothing
    report = report_of(store, store.sweep(controller.sweep_id))
    assert report.runs == 12

    table = view.arms
    assert table.rowCount() == 3 and table.columnCount() == len(HEADERS)
    for row, arm in enumerate(report.arms):
        cells = tuple(str(table.index(row, c).data()) for c in range(len(HEADERS)))
        assert cells == arm_cells(arm)
    rates = [p[0] for p in view.charts.pass_data]
    assert rates == pytest.approx([(a.pass_rate or 0) * 100 for a in report.arms])
    assert sorted(view.charts.front) == [i for i, a in enumerate(report.arms) if a.pareto]
    assert sum(sum(v) for v in view.charts.ends_data.values()) == 12

    # The arm's runs, and only them, in the runs list.
    window.note_runs()
    qtbot.waitUntil(lambda: window.library.runs.rowCount() >= 12)
    view.table.selectRow(1)
    view.show_runs.click()
    shown = window.library.runs_filter
    ids = {str(shown.index(r, 0).data(RUN_ID_ROLE)) for r in range(shown.rowCount())}
    assert shown.rowCount() == 4
    assert ids == set(controller.arm_runs(1))
    view.show_all.click()
    assert shown.rowCount() == window.library.runs.rowCount()

    # Two arms' first runs go to the shell's Compare.
    asked: list[Any] = []
    monkeypatch.setattr(window.compare, "compare", asked.append)
    selection = view.table.selectionModel()
    flags = selection.SelectionFlag
    selection.clearSelection()
    for row in (0, 2):
        selection.select(table.index(row, 0), flags.Select | flags.Rows)
    view.compare.click()
    assert asked == [[controller.arm_runs(0)[0], controller.arm_runs(2)[0]]]

    # The stored sweep opens with the same numbers.
    view.refresh_stored()
    assert view.stored.currentData() == controller.sweep_id
    controller.report = None
    view.open_button.click()
    assert controller.report == report
