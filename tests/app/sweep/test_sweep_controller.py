"""The sweep controller without the window: a real store, the qasync loop, a notifier that
remembers what it was told."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.sweep.sweep_controller import SweepController
from inspector.store import Store
from inspector.sweeps.report import FINAL_STATUSES
from inspector.workflows.sweeps import report_of

VARY = ["policy.feedback_history=accumulate,none"]


class Said:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []
        self.statuses: list[str] = []

    def show_message(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def clear(self) -> None:
        pass

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        self.statuses.append(text)

    def clear_status(self) -> None:
        pass


def _run(qtbot: QtBot, controller: SweepController, **kwargs: Any) -> None:
    with qtbot.waitSignal(
        controller.runningChanged, timeout=60_000, check_params_cb=lambda r: not r
    ):
        assert controller.start("demo:sweep", VARY, kwargs.get("repeat", 3), 2)


def test_a_sweep_reports_the_numbers_of_the_command_line(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot
) -> None:
    said = Said()
    controller = SweepController(store, said, slice_ms=20)
    reports: list[Any] = []
    controller.reportChanged.connect(reports.append)
    _run(qtbot, controller)
    assert controller.sweep_id is not None
    cli = report_of(store, store.sweep(controller.sweep_id))
    assert controller.report == cli  # the same build_report over the same rows
    assert [a.name for a in cli.arms] == ["feedback_history=accumulate", "feedback_history=none"]
    assert cli.runs == cli.expected == 6
    assert reports[-1] == cli
    assert said.statuses[-1] == f"Sweep {controller.sweep_id} finished: 6/6 runs"
    rows = store.sweep_runs(controller.sweep_id)
    assert sorted(controller.arm_runs(1)) == sorted(r["run_id"] for r in rows if r["arm"] == 1)
    assert len(controller.arm_runs(0)) == 3


def test_a_bad_grid_is_one_line_and_stores_nothing(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot
) -> None:
    said = Said()
    controller = SweepController(store, said)
    assert not controller.start("demo:sweep", ["policy.feedback_history"], 2, 2)
    assert said.messages and said.messages[-1][0] == "error"
    assert "policy.feedback_history" in said.messages[-1][1]
    assert "\n" not in said.messages[-1][1]
    # A value the policy refuses is found when the arms load (off the UI thread).
    with qtbot.waitSignal(
        controller.runningChanged, timeout=30_000, check_params_cb=lambda r: not r
    ):
        assert controller.start("demo:sweep", ["policy.feedback_history=sometimes"], 2, 2)
    assert "arm 'feedback_history=sometimes'" in said.messages[-1][1]
    assert store.sweeps() == []


def test_cancel_keeps_the_finished_runs(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot
) -> None:
    said = Said()
    controller = SweepController(store, said, slice_ms=20)

    def cancel_once_some_finished(report: Any) -> None:
        if report is not None and report.runs >= 1:
            controller.cancel()

    controller.reportChanged.connect(cancel_once_some_finished)
    _run(qtbot, controller, repeat=400)
    assert controller.sweep_id is not None
    report = report_of(store, store.sweep(controller.sweep_id))
    assert 1 <= report.runs < report.expected
    statuses = [r["status"] for r in store.sweep_runs(controller.sweep_id)]
    assert set(statuses) <= set(FINAL_STATUSES) | {"cancelled"}
    assert sum(s in FINAL_STATUSES for s in statuses) == report.runs
    assert "cancelled" in said.statuses[-1]


def test_a_stored_sweep_opens_with_its_statistics(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot
) -> None:
    first = SweepController(store, Said(), slice_ms=20)
    _run(qtbot, first)
    later = SweepController(store, Said())
    assert [s for s, _ in later.stored()] == [first.sweep_id]
    assert first.sweep_id is not None
    later.open_sweep(first.sweep_id)
    assert later.report == first.report
