"""The window as a user drives it: pick a scenario, run it (Ctrl+R) and watch the timeline grow,
stop it (Esc / Ctrl+.), edit the policy for the next run, open files, filter and pick recorded
runs; errors appear in the window."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from inspector.app.library.runs_item_model import STATUS
from inspector.app.shell.main_window import MainWindow, record_problem, run_title
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, Usage
from inspector.store import Store
from tests.helpers.scenarios import streaming_scenario, write_scenario

CTRL = Qt.KeyboardModifier.ControlModifier


def _run_with_keys(window: MainWindow, qtbot: QtBot) -> RunRecord:
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    qtbot.waitUntil(lambda: not window.runner.busy)
    record: RunRecord = finished.args[0]
    return record


def _is(kind: str) -> object:
    return lambda event: event.kind == kind


def test_a_run_grows_the_timeline_while_it_streams(window: MainWindow, qtbot: QtBot) -> None:
    assert window.library.select_scenario("demo:retry-feedback")
    rows_at_each_step: list[int] = []
    pending_rows_seen: list[bool] = []

    def watch(event: Event) -> None:  # connected after the window: sees what it just showed
        model = window.timeline.model
        if event.kind == "step_started":
            rows_at_each_step.append(model.rowCount())
        if event.kind == "text_delta":
            live = window.live.step(event.index) if window.live else None
            pending_rows_seen.append(
                live is not None and live.pending and model.row_of_step(event.index) >= 0
            )

    window.runner.engineEvent.connect(watch)
    record = _run_with_keys(window, qtbot)
    assert record.status == "succeeded"
    assert len(rows_at_each_step) == len(record.steps) == 4
    assert rows_at_each_step == sorted(set(rows_at_each_step))  # strictly growing
    assert pending_rows_seen and all(pending_rows_seen)  # a streaming step is on screen
    assert window.timeline.selected_step() == 4  # followed the stream to the last step
    assert window.detail.current_step == 4
    assert window.timeline.outcome.outcome.status == "succeeded"  # said once: in the header
    assert "succeeded" not in window.run_heading.text()
    assert not window.message_bar.isVisible()


def test_runs_list_shows_the_new_run_first_with_status_and_reason(
    window: MainWindow, qtbot: QtBot, store: Store
) -> None:
    window.library.select_scenario("demo:step-cap")
    record = _run_with_keys(window, qtbot)
    runs = window.library.runs
    assert runs.rowCount() == 1 and runs.run(0).run_id == record.run_id
    reason = (record.termination or "").replace("_", " ")
    shown = record.status if record.status == "succeeded" else f"{record.status} · {reason}"
    assert runs.index(0, STATUS).data() == shown
    assert not runs.index(0, STATUS).data(Qt.ItemDataRole.DecorationRole).isNull()
    assert store.load(record.run_id).status == record.status


def test_an_edited_policy_value_is_used_by_the_next_run(
    window: MainWindow, qtbot: QtBot, store: Store
) -> None:
    window.library.select_scenario("demo:retry-feedback")
    spin = window.policy.policy_form.editors["max_attempts"].editor
    assert spin.value() == 3  # the scenario's own value
    spin.setValue(1)
    record = _run_with_keys(window, qtbot)
    assert record.policy.max_attempts == 1
    assert record.overrides == ["policy.max_attempts=1"]
    assert store.load(record.run_id).policy.max_attempts == 1
    assert record.status == "failed" and record.termination == "validator_exhausted"
    # A failed run is explained in the window, not only in the list.
    assert window.message_bar.level == "warning"
    assert "validator exhausted" in window.message_bar.text.text()


def test_an_invalid_policy_value_blocks_the_run_with_its_message(
    window: MainWindow, qtbot: QtBot, store: Store
) -> None:
    window.library.select_scenario("demo:retry-feedback")
    window.policy.policy_form.editors["feedback_history"].editor.setCurrentText("custom")
    builder_error = window.policy.policy_form.editors["feedback_builder"].error
    assert builder_error.isVisible() and "file.py:function" in builder_error.text()
    qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    assert not window.runner.busy
    assert window.message_bar.level == "error"
    assert "policy.feedback_builder" in window.message_bar.text.text()
    assert store.runs() == []


@pytest.mark.parametrize(
    "key,modifier",
    [(Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier), (Qt.Key.Key_Period, CTRL)],
    ids=["Esc", "Ctrl+."],
)
def test_stop_mid_stream_records_a_cancelled_run(
    window: MainWindow,
    qtbot: QtBot,
    store: Store,
    tmp_path: Path,
    key: Qt.Key,
    modifier: Qt.KeyboardModifier,
) -> None:
    window.library.select_scenario(str(streaming_scenario(tmp_path)))
    with qtbot.waitSignal(
        window.runner.engineEvent, timeout=20_000, check_params_cb=_is("text_delta")
    ):
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    assert window.stop_action.isEnabled() and window.status.progress.isVisible()
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        qtbot.keyClick(window, key, modifier)
    record: RunRecord = finished.args[0]
    assert record.status == "cancelled"
    qtbot.waitUntil(lambda: not window.runner.busy)
    assert window.run_action.isEnabled() and not window.status.progress.isVisible()
    assert window.library.runs.run(0).run_id == record.run_id
    assert window.library.runs.run(0).status == "cancelled"
    assert store.load(record.run_id).status == "cancelled"
    assert window.message_bar.level == "warning"


def test_a_broken_scenario_shows_a_readable_error(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    broken = write_scenario(tmp_path, 'name = "broken"\n[prompt\nuser = "hi"\n', "broken.toml")
    assert window.library.select_scenario(str(broken))
    assert window.message_bar.isVisible() and window.message_bar.level == "error"
    text = window.message_bar.text.text()
    assert "broken.toml" in text and "Traceback" not in text
    assert not window.policy.isEnabled()
    # Run anyway: the runner refuses it the same way, in the window.
    window.message_bar.clear()
    with qtbot.waitSignal(window.runner.failed, timeout=20_000):
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    assert "broken.toml" in window.message_bar.text.text()
    qtbot.waitUntil(lambda: not window.runner.busy)


def test_a_scenario_that_fails_only_when_built_shows_its_error(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    missing_validator = write_scenario(
        tmp_path,
        """
        name = "missing-validator"
        [prompt]
        user = "hi"
        [[validators]]
        kind = "python"
        function = "nowhere.py:check"
        [[script]]
        text = "hello"
        """,
    )
    window.library.select_scenario(str(missing_validator))
    assert not window.message_bar.isVisible()  # it loads; the turn cannot be built
    with qtbot.waitSignal(window.runner.failed, timeout=20_000):
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    assert window.message_bar.level == "error"
    assert "nowhere.py" in window.message_bar.text.text()


def test_open_adds_the_file_and_selects_it(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = streaming_scenario(tmp_path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.keyClick(window, Qt.Key.Key_O, CTRL)
    assert window.library.current_scenario() == str(path.resolve())
    assert window.library.scenarios.index(0).data() == "slow-stream.toml"
    assert window.policy.scenario is not None and window.policy.scenario.name == "slow-stream"


def test_picking_a_recorded_run_shows_it_and_the_filter_narrows_the_list(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.library.select_scenario("demo:empty-final")
    first = _run_with_keys(window, qtbot)
    window.library.select_scenario("demo:step-cap")
    second = _run_with_keys(window, qtbot)
    assert window.shown is not None and window.shown.run_id == second.run_id

    window.library.select_run(first.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == first.run_id)
    assert window.timeline.model.run.run_id == first.run_id
    assert window.timeline.selected_step() == len(first.steps)

    qtbot.keyClick(window, Qt.Key.Key_F, CTRL)
    assert window.library.filter_box.hasFocus()
    qtbot.keyClicks(window.library.filter_box, "step-cap")
    proxy = window.library.runs_filter
    assert proxy.rowCount() == 1
    assert proxy.index(0, 0).data(Qt.ItemDataRole.UserRole + 1) == second.run_id


def test_show_cleared_is_a_menu_action_in_step_with_the_timeline(
    window: MainWindow, qtbot: QtBot
) -> None:
    window.library.select_scenario("demo:retry-feedback")
    _run_with_keys(window, qtbot)
    rows = window.timeline.model.rowCount()
    qtbot.keyClick(window, Qt.Key.Key_H, CTRL)
    assert not window.show_cleared_action.isChecked()
    assert not window.timeline.show_cleared_box.isChecked()
    assert window.timeline.model.rowCount() < rows
    window.timeline.show_cleared_box.setChecked(True)
    assert window.show_cleared_action.isChecked()


def test_run_title_and_problem_lines(window: MainWindow, qtbot: QtBot) -> None:
    window.library.select_scenario("demo:retry-feedback")
    window.policy.policy_form.editors["max_attempts"].editor.setValue(1)
    record = _run_with_keys(window, qtbot)
    title = run_title(LiveRun.from_record(record))
    assert record.run_id in title and "scripted · demo" in title and "started " in title
    assert "failed" not in title  # how it ended is the outcome header's line, not repeated
    outcome = window.timeline.outcome.outcome
    assert outcome.status == "failed" and outcome.ended.startswith("Every attempt failed")
    cap = record.budgets.max_steps
    assert f"{len(record.steps)} steps of {cap} max" in outcome.facts  # the step cap is stated
    problem = record_problem(record)
    assert problem is not None and problem.startswith(f"Run {record.run_id} failed")
    assert record_problem(record.model_copy(update={"status": "succeeded"})) is None


def test_a_run_still_being_recorded_elsewhere_shows_what_it_has(
    window: MainWindow, store: Store, qtbot: QtBot
) -> None:
    import asyncio

    from inspector.core.events import RunFinished
    from inspector.core.loop import Turn
    from inspector.providers.factory import build_provider
    from inspector.resources import resolve_scenario

    scenario = resolve_scenario("demo:step-cap")
    events: list[Event] = []
    task = asyncio.ensure_future(Turn(scenario, build_provider(scenario), events.append).run())
    qtbot.waitUntil(task.done, timeout=20_000)
    record = task.result()
    recorder = store.recorder()  # a writer that is alive and has not seen the end yet
    for event in events:
        if not isinstance(event, RunFinished):
            recorder(event)
    window.refresh_runs()
    window.library.select_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == record.run_id)
    assert not window.shown.finished and len(window.shown.steps) == len(record.steps)
    assert "running" in window.run_heading.text()


def test_a_stored_run_loads_off_the_ui_thread_and_a_stale_load_is_dropped(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from inspector.app.shell import main_window

    window.library.select_scenario("demo:empty-final")
    first = _run_with_keys(window, qtbot)
    window.library.select_scenario("demo:step-cap")
    second = _run_with_keys(window, qtbot)
    window.live = window.shown = None  # both are stored runs now, as after a restart

    gate = threading.Event()
    threads: list[int] = []
    real = main_window.load_stored_run

    def slow_first(path: Path, run_id: str) -> LiveRun:
        threads.append(threading.get_ident())
        if run_id == first.run_id:
            gate.wait(timeout=30)
        return real(path, run_id)

    monkeypatch.setattr(main_window, "load_stored_run", slow_first)
    try:
        window.show_stored_run(first.run_id)
        stale = window._load_task
        assert stale is not None and not stale.done()
        assert "Loading" in window.run_heading.text()
        window.show_stored_run(second.run_id)
        qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == second.run_id)
    finally:
        gate.set()
    qtbot.waitUntil(stale.done)
    assert window.shown.run_id == second.run_id  # the first load arrived late and was dropped
    assert threads and threading.main_thread().ident not in threads


def test_a_finishing_run_leaves_the_runs_list_on_the_run_being_looked_at(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    window.library.select_scenario("demo:empty-final")
    earlier = _run_with_keys(window, qtbot)
    window.library.select_scenario(str(streaming_scenario(tmp_path, words=60)))
    with qtbot.waitSignal(
        window.runner.engineEvent, timeout=20_000, check_params_cb=_is("text_delta")
    ):
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
    window.library.select_run(earlier.run_id)  # the user looks back while it streams
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == earlier.run_id)
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        pass
    assert finished.args[0].run_id != earlier.run_id
    current = window.library.run_list.currentIndex()
    assert current.data(Qt.ItemDataRole.UserRole + 1) == earlier.run_id
    assert window.shown.run_id == earlier.run_id


@pytest.mark.parametrize(
    ("demo", "status"),
    [("retry-feedback", "failed · validator exhausted"), ("invalid-output-fallback", "fallback")],
)
def test_at_1400_by_900_the_runs_list_says_why_and_the_timeline_fits(
    window: MainWindow, qtbot: QtBot, demo: str, status: str
) -> None:
    from inspector.app.library.runs_item_model import SCENARIO

    window.library.select_scenario(f"demo:{demo}")
    window.policy.policy_form.editors["max_attempts"].editor.setValue(1)
    _run_with_keys(window, qtbot)
    window.timeline.select_last()  # the long forced-step title of the fallback demo
    runs = window.library.run_list
    assert window.library_dock.width() >= 250
    status_and_name = runs.columnWidth(STATUS) + runs.columnWidth(SCENARIO)
    assert status_and_name <= runs.viewport().width()  # no column hides off to the right
    assert runs.model().index(0, STATUS).data() == status
    table = window.timeline.table
    columns = sum(table.columnWidth(c) for c in range(table.model().columnCount()))
    assert columns <= table.viewport().width()


def test_running_usage_adds_each_finished_step_once() -> None:
    """The status bar's tokens while a run streams: summed per step, not over the whole run at
    each step (quadratic at 100,000 steps)."""
    from inspector.core.live import LiveRun
    from inspector.reports.run_text import RunningUsage
    from inspector.reports.run_text import usage_so_far as _usage
    from tests.helpers.demo_events import demo_run

    events, record = demo_run("retry-feedback")
    run, tokens = LiveRun(), RunningUsage()
    for event in events:
        run.apply(event)
        if event.kind == "step_finished":
            assert tokens.after(run, event.step) == _usage(run) != Usage()
    other = LiveRun.from_record(record)  # another run: summed from its steps
    assert tokens.after(other, record.steps[-1]) == _usage(other)
