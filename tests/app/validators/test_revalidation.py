"""Instant re-validation in the window: a recorded run re-judged on every save of its validators,
offline; flips listed and highlighted in the timeline; broken validators shown at their line."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot
from qasync import QThreadExecutor

from inspector.app.shell.main_window import MainWindow
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel, TimelineRole
from inspector.app.validators.flips_view import (
    FlipColumn,
    FlipRow,
    FlipsItemModel,
    change_text,
    flip_rows,
    summary_line,
)
from inspector.app.validators.revalidation import (
    RevalidationResult,
    Revalidator,
    python_files,
    revalidate_runs,
    syntax_problem,
)
from inspector.app.validators.validators_panel import NEW_VALIDATORS, ValidatorsPanel
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord, SourceLocation
from inspector.core.revalidate import Flip, Revalidation
from inspector.reports.revalidate_text import format_matrix
from inspector.resources import resolve_scenario
from tests.helpers.demo_events import stored_run
from tests.helpers.scenarios import write_scenario
from tests.helpers.window import run_in_window
from tests.store.synthetic import long_turn

SCENARIO = """
    name = "sms"
    [model]
    provider = "scripted"
    [prompt]
    user = "Tell Sam the meeting moved."
    [[validators]]
    kind = "python"
    function = "checks.py:no_markdown"
    [policy]
    max_attempts = 3
    [[script]]
    text = "**Hi Sam**, the meeting moved."
    [[script]]
    text = "Hi Sam, the meeting moved."
"""
STRICT = """\
def no_markdown(output, ctx):
    if "*" in output:
        return "No markdown."
    return None
"""
LAX = """\
def no_markdown(output, ctx):
    return None
"""
SYNTAX_ERROR = """\
def no_markdown(output, ctx)
    return None
"""
RAISES = """\
def no_markdown(output, ctx):
    words = output.split()
    return words[99]
"""


@pytest.fixture(autouse=True)
def collected() -> Iterator[None]:
    """Earlier windows are cyclic garbage; collected on a worker thread (re-validation runs
    there) their Qt objects warn "Timers cannot be stopped from another thread". Collect them
    here, on the GUI thread, before and after each test."""
    gc.collect()
    yield
    gc.collect()


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(STRICT, encoding="utf-8")
    return write_scenario(tmp_path, SCENARIO, "sms.toml")


def dock_of(window: MainWindow) -> ValidatorsPanel:
    return window.validators


def run_it(window: MainWindow, qtbot: QtBot) -> RunRecord:
    qtbot.waitUntil(lambda: not window.runner.busy)  # the last run has let go of the runner
    record = run_in_window(window, qtbot)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.record is not None)
    return record


def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, building a provider (a model call) fails the test."""

    def forbidden(*_args: Any) -> Any:
        raise AssertionError("re-validation must never build a provider")

    monkeypatch.setattr("inspector.providers.factory.build_provider", forbidden)


def save_text(window: MainWindow, qtbot: QtBot, text: str) -> RevalidationResult:
    dock = dock_of(window)
    dock.python_editor.editor.setPlainText(text)
    with qtbot.waitSignal(dock.revalidator.finished, timeout=20_000) as done:
        qtbot.keyClick(dock.python_editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    result: RevalidationResult = done.args[0]
    return result


def flips_rows(window: MainWindow) -> list[tuple[str, ...]]:
    model = dock_of(window).flips.model
    return [
        tuple(str(model.index(r, c).data()) for c in range(model.columnCount()))
        for r in range(model.rowCount())
    ]


def timeline_flips(window: MainWindow, step: int) -> Any:
    model = window.timeline.model
    return model.index(model.row_of_step(step), Column.STEP).data(TimelineRole.FLIPS)


def test_saving_a_laxer_validator_flips_the_rejected_step_without_a_model_call(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    dock = dock_of(window)
    assert dock.python_editor.path() == (scenario.parent / "checks.py").resolve()
    assert dock.python_editor.text() == STRICT
    record = run_it(window, qtbot)
    assert [s.status for s in record.steps] == ["failed_validation", "success"]
    no_model(monkeypatch)

    result = save_text(window, qtbot, LAX)

    assert (scenario.parent / "checks.py").read_text(encoding="utf-8") == LAX
    assert [r.run_id for r in result.runs] == [record.run_id]
    assert flips_rows(window) == [(record.run_id, "1", "no_markdown", "fail → pass", "")]
    assert dock.flips_title.text() == "<b>Flips (1)</b>"
    assert dock.flips.summary.text().startswith(f"1 flip in run {record.run_id}")
    assert "accepted output: step 2 as recorded, step 1 now" in dock.flips.summary.text()
    # The timeline: step 1 is marked, with the flip as its tooltip; step 2 is not.
    flip = Flip(step=1, validator="no_markdown", before="fail", after="pass")
    assert timeline_flips(window, 1) == [flip]
    assert timeline_flips(window, 2) is None
    model = window.timeline.model
    row = model.row_of_step(1)
    assert model.index(row, Column.STEP).data(Qt.ItemDataRole.ToolTipRole) == (
        "no_markdown: fail → pass"
    )
    assert "flipped" in model.index(row, Column.MARKERS).data()
    window.timeline.table.viewport().grab()  # the delegate paints the flipped row

    # Clicking the flip selects its step in the timeline.
    window.timeline.select_step(2)
    table = dock.flips.table
    assert window.validators_dock.widget() is dock
    window.validators_dock.raise_()
    qtbot.waitUntil(table.isVisible)
    rect = table.visualRect(dock.flips.model.index(0, FlipColumn.VALIDATOR))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.timeline.selected_step() == 1

    # Saving the recorded version again: nothing flips, and the marks go.
    save_text(window, qtbot, STRICT)
    assert flips_rows(window) == []
    assert timeline_flips(window, 1) is None
    assert dock.flips.summary.text().startswith(f"no verdict flips in run {record.run_id}")


def test_a_syntax_error_shows_at_its_line_and_as_error_verdicts(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    record = run_it(window, qtbot)
    no_model(monkeypatch)

    result = save_text(window, qtbot, SYNTAX_ERROR)

    editor = dock_of(window).python_editor
    assert editor.editor.problems() == [(1, "SyntaxError: expected ':'")]
    [run] = result.runs
    assert [(v.step, v.status) for v in run.verdicts] == [(1, "error"), (2, "error")]
    assert "checks.py:1: syntax error" in run.verdicts[0].reason
    assert flips_rows(window) == [
        (record.run_id, "1", "no_markdown", "fail → error", run.verdicts[0].reason),
        (record.run_id, "2", "no_markdown", "pass → error", run.verdicts[1].reason),
    ]
    assert window.message_bar.isHidden()  # not a failure of the window: verdicts

    save_text(window, qtbot, STRICT)  # fixed: the problem goes
    assert editor.editor.problems() == []


def test_a_raising_validator_is_an_error_verdict_with_a_problem_at_the_raising_line(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    run_it(window, qtbot)
    no_model(monkeypatch)

    result = save_text(window, qtbot, RAISES)

    [run] = result.runs
    assert {(v.status, v.reason) for v in run.verdicts} == {
        ("error", "IndexError: list index out of range")
    }
    assert {v.location.line for v in run.verdicts if v.location} == {3}
    assert dock_of(window).python_editor.editor.problems() == [
        (3, "no_markdown: IndexError: list index out of range")
    ]


def test_the_raising_line_is_recorded_and_read_back_by_the_store(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    (scenario.parent / "checks.py").write_text(RAISES, encoding="utf-8")
    window.library.select_scenario(str(scenario))
    record = run_it(window, qtbot)
    location = SourceLocation(file=str((scenario.parent / "checks.py").resolve()), line=3)
    assert record.steps[0].verdicts[0].location == location
    assert window.store.load(record.run_id).steps[0].verdicts[0].location == location


def test_a_file_that_raises_on_import_shows_the_line(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    run_it(window, qtbot)
    no_model(monkeypatch)

    result = save_text(window, qtbot, "import math\nLIMIT = math.sqrt(-1)\n" + LAX)

    [run] = result.runs
    assert {v.status for v in run.verdicts} == {"error"}
    assert run.verdicts[0].reason.endswith(
        "checks.py raised on import: ValueError: math domain error"
    )
    [(line, message)] = dock_of(window).python_editor.editor.problems()
    assert line == 2 and message.startswith("no_markdown: ") and "math domain error" in message


def test_every_run_of_the_scenario_gives_a_matrix(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    first = run_it(window, qtbot)
    second = run_it(window, qtbot)
    no_model(monkeypatch)
    dock = dock_of(window)
    dock.every_run_box.setChecked(True)  # nothing re-validated yet: waits for a save

    result = save_text(window, qtbot, LAX)

    assert result.matrix is not None
    assert {row.run_id for row in result.matrix.rows} == {first.run_id, second.run_id}
    assert [row.flips for row in result.matrix.rows] == [1, 1]
    assert len(flips_rows(window)) == 2
    text = dock.flips.matrix.toPlainText()
    assert dock.flips.matrix.isVisibleTo(dock.flips)
    assert first.run_id in text and second.run_id in text and "no_markdown" in text
    assert dock.flips.summary.text().startswith("2 flips in 2 of 2 runs of sms")
    # Only the shown run's flips are in the timeline.
    assert timeline_flips(window, 1) == [
        Flip(step=1, validator="no_markdown", before="fail", after="pass")
    ]

    with qtbot.waitSignal(dock.revalidator.finished, timeout=20_000) as done:
        dock.every_run_box.setChecked(False)  # the shown run only, at once
    assert done.args[0].matrix is None and not dock.flips.matrix.isVisibleTo(dock.flips)


def test_an_outside_edit_reloads_and_revalidates(
    window: MainWindow, qtbot: QtBot, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.library.select_scenario(str(scenario))
    record = run_it(window, qtbot)
    no_model(monkeypatch)
    dock = dock_of(window)

    with qtbot.waitSignal(dock.revalidator.finished, timeout=20_000):
        (scenario.parent / "checks.py").write_text(LAX, encoding="utf-8")

    assert dock.python_editor.text() == LAX
    assert flips_rows(window) == [(record.run_id, "1", "no_markdown", "fail → pass", "")]


def test_unsaved_edits_survive_choosing_another_scenario_and_coming_back(
    window: MainWindow, qtbot: QtBot, scenario: Path, tmp_path: Path
) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    (other_dir / "checks.py").write_text(LAX, encoding="utf-8")
    other = write_scenario(other_dir, SCENARIO.replace('"sms"', '"other"'), "other.toml")
    window.library.select_scenario(str(scenario))
    editor = dock_of(window).python_editor
    editor.editor.textCursor().insertText("# mine\n")

    window.library.select_scenario(str(other))
    assert editor.path() == (other_dir / "checks.py").resolve() and editor.text() == LAX
    assert "unsaved edits of checks.py are kept" in window.message_bar.text.text()
    window.library.select_scenario(str(scenario))

    assert editor.text() == "# mine\n" + STRICT and editor.is_modified()
    assert (scenario.parent / "checks.py").read_text(encoding="utf-8") == STRICT


def test_showing_another_run_clears_the_marks_and_a_stale_result_is_dropped(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    window.library.select_scenario(str(scenario))
    first = run_it(window, qtbot)
    save_text(window, qtbot, LAX)
    assert timeline_flips(window, 1)
    second = run_it(window, qtbot)  # shown now: not re-validated yet
    assert window.shown is not None and window.shown.run_id == second.run_id
    assert timeline_flips(window, 1) is None
    # Back to the first run: its flips come back from the last re-validation.
    window.show_stored_run(first.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == first.run_id)
    assert timeline_flips(window, 1)

    dock = dock_of(window)
    results: list[RevalidationResult] = []
    dock.revalidator.finished.connect(results.append)
    dock.revalidator.revalidate(str(scenario), [first.run_id])
    dock.revalidator.revalidate(str(scenario), [second.run_id])  # supersedes the first
    qtbot.waitUntil(lambda: bool(results), timeout=20_000)
    qtbot.wait(50)  # a late first result would have arrived by now (events are processed)
    assert [r.runs[0].run_id for r in results] == [second.run_id]


def test_a_stored_run_of_another_scenario_brings_its_validators(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    window.library.select_scenario(str(scenario))
    mine = run_it(window, qtbot)
    window.library.select_scenario("demo:retry-feedback")
    demo = run_it(window, qtbot)
    window.library.select_scenario(str(scenario))
    dock = dock_of(window)

    window.show_stored_run(demo.run_id)  # read from the store: no live header
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == demo.run_id)
    assert dock.table.heading.text().startswith("Validators of demo:retry-feedback")
    window.show_stored_run(mine.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == mine.run_id)
    assert dock.table.path == scenario
    assert dock.python_editor.path() == (scenario.parent / "checks.py").resolve()


def test_a_scenario_without_python_validators_offers_a_new_file(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    path = write_scenario(
        tmp_path,
        """
        name = "plain"
        [model]
        provider = "scripted"
        [prompt]
        user = "Hi"
        [[script]]
        text = "Hello!"
        """,
    )
    window.library.select_scenario(str(path))
    dock = dock_of(window)
    assert dock.new_button.isVisibleTo(dock) and dock.python_editor.isHidden()
    created = dock.new_validators_file()
    assert created == (tmp_path / "validators.py").resolve()
    assert created.read_text(encoding="utf-8") == NEW_VALIDATORS
    assert dock.python_editor.path() == created and not dock.python_editor.isHidden()
    assert "validators.py:no_exclamation" in dock.note.text()
    compile(NEW_VALIDATORS, "validators.py", "exec")  # the example itself is valid

    window.library.select_scenario("demo:retry-feedback")  # demos: nothing to create
    assert dock.new_button.isHidden() and "read-only" in dock.note.text()


# ---- the pieces ------------------------------------------------------------------------------


def test_syntax_problem_gives_the_line_and_message(tmp_path: Path) -> None:
    assert syntax_problem(STRICT, tmp_path / "a.py") is None
    assert syntax_problem(SYNTAX_ERROR, tmp_path / "a.py") == (1, "SyntaxError: expected ':'")
    assert syntax_problem("x = 1\ny = (\n", tmp_path / "a.py") == (
        2,
        "SyntaxError: '(' was never closed",
    )


def test_python_files_lists_each_referenced_file_once(tmp_path: Path) -> None:
    path = write_scenario(
        tmp_path,
        """
        name = "two"
        [prompt]
        user = "Hi"
        [[script]]
        text = "Hi"
        [[validators]]
        kind = "python"
        function = "a.py:one"
        [[validators]]
        kind = "max_length"
        max = 3
        [[validators]]
        kind = "python"
        function = "lib/b.py:two"
        [[validators]]
        kind = "python"
        function = "a.py:three"
        """,
    )
    assert python_files(resolve_scenario(str(path))) == [
        (tmp_path / "a.py").resolve(),
        (tmp_path / "lib" / "b.py").resolve(),
    ]


def test_revalidate_runs_with_no_run_reports_only_the_files_problems(
    scenario: Path, tmp_path: Path
) -> None:
    (scenario.parent / "checks.py").write_text(SYNTAX_ERROR, encoding="utf-8")
    result = revalidate_runs(tmp_path / "empty.sqlite3", str(scenario), [])
    assert result.runs == [] and result.matrix is None and result.scenario == "sms"
    assert result.problems == {
        (scenario.parent / "checks.py").resolve(): [(1, "SyntaxError: expected ':'")]
    }


def test_a_run_that_cannot_be_read_is_listed_not_fatal(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    window.library.select_scenario(str(scenario))
    record = run_it(window, qtbot)
    with qtbot.waitSignal(dock_of(window).revalidator.finished, timeout=20_000) as done:
        dock_of(window).revalidator.revalidate(str(scenario), [record.run_id, "nope0000"])
    result: RevalidationResult = done.args[0]
    assert [r.run_id for r in result.runs] == [record.run_id]
    assert len(result.errors) == 1 and result.errors[0].startswith("run nope0000: ")
    assert result.matrix is not None
    assert [(r.run_id, r.error is None) for r in result.matrix.rows] == [
        (record.run_id, True),
        ("nope0000", False),
    ]
    assert "cannot re-validate" in format_matrix(result.matrix)
    assert summary_line(result).endswith("· 1 could not be re-validated")


def test_a_hanging_validator_is_called_once_per_revalidation_of_every_run(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    """Each call that times out leaves a thread running user code (it cannot be stopped): one
    per judged output of every run starved the UI thread of the GIL for seconds."""
    text = scenario.read_text(encoding="utf-8")
    scenario.write_text(
        text.replace("max_attempts = 3", "max_attempts = 3\nvalidator_timeout_s = 0.05")
    )
    window.library.select_scenario(str(scenario))
    for _ in range(3):
        run_it(window, qtbot)
    dock = dock_of(window)
    dock.every_run_box.setChecked(True)
    calls = scenario.parent / "calls.txt"
    hangs = f"""\
import pathlib, time

def no_markdown(output, ctx):
    with pathlib.Path({str(calls)!r}).open("a") as log:
        log.write("call\\n")
    time.sleep(2)
"""

    result = save_text(window, qtbot, hangs)

    assert calls.read_text(encoding="utf-8") == "call\n"
    verdicts = [v for run in result.runs for v in run.verdicts]
    assert len(verdicts) == 6 and {v.status for v in verdicts} == {"error"}
    assert verdicts[0].reason == "timed out after 0.05 s"
    assert verdicts[1].reason.endswith("on an earlier output: not called again")


def test_a_revalidation_stops_at_its_next_run_once_cancelled(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    window.library.select_scenario(str(scenario))
    ids = [run_it(window, qtbot).run_id for _ in range(3)]
    asked = iter([False, True])

    with ThreadPoolExecutor(1) as thread:  # not on the thread of the running loop
        job = thread.submit(
            revalidate_runs, window.store.path, str(scenario), ids, cancelled=lambda: next(asked)
        )
        result = job.result()

    assert [r.run_id for r in result.runs] == ids[:1]


def test_a_validators_file_that_hangs_on_import_holds_no_thread_of_the_window(
    window: MainWindow, qtbot: QtBot, scenario: Path, qloop: asyncio.AbstractEventLoop
) -> None:
    """The window reads the store on the loop's executor: a re-validation stuck importing the
    user's file must not sit there (nor hold up the app's exit, which joins that executor)."""
    window.library.select_scenario(str(scenario))
    record = run_it(window, qtbot)
    run_it(window, qtbot)  # the live run now: showing the first one reads the store
    default = qloop._QEventLoop__default_executor  # type: ignore[attr-defined]
    executor = QThreadExecutor(1)
    qloop.set_default_executor(executor)
    release = scenario.parent / "release"
    dock = dock_of(window)
    dock.python_editor.editor.setPlainText(
        f"import pathlib, time\nwhile not pathlib.Path({str(release)!r}).exists():\n"
        f"    time.sleep(0.01)\n{LAX}"
    )
    try:
        dock.python_editor.save()
        assert dock.revalidator.busy
        window.shown = None
        window.show_stored_run(record.run_id)  # on the executor
        qtbot.waitUntil(lambda: window.shown is not None, timeout=10_000)
        assert dock.revalidator.busy
    finally:
        release.touch()
        qloop.set_default_executor(default)
        executor.shutdown()
    qtbot.waitUntil(lambda: not dock.revalidator.busy, timeout=20_000)


def test_summary_line_uses_the_cli_wording() -> None:
    run = Revalidation(
        run_id="abc123",
        flips=[Flip(step=1, validator="v", before="fail", after="pass")] * 3,
        outputs=4,
        accepted_before=4,
        accepted_after=2,
    )
    one = RevalidationResult(scenario="sms", ref="sms.toml", runs=[run])
    assert summary_line(one) == (
        "3 flips in run abc123 · 4 output(s) re-judged, no model call · "
        "accepted output: step 4 as recorded, step 2 now"
    )
    still = run.model_copy(update={"run_id": "def456", "flips": [], "accepted_after": None})
    assert summary_line(RevalidationResult(scenario="sms", ref="x", runs=[still])).startswith(
        "no verdict flips in run def456"
    )


def test_the_flips_item_model_passes_the_model_tester(qtmodeltester: ModelTester) -> None:
    model = FlipsItemModel()
    qtmodeltester.check(model)
    model.set_rows(
        [
            FlipRow("abc", 1, "no_markdown", "fail", "pass", ""),
            FlipRow("abc", 3, "short", None, "error", "ValueError: x"),
        ]
    )
    qtmodeltester.check(model, force_py=True)
    # A validator that did not judge the step before gives a new verdict, not a flip.
    assert model.index(0, FlipColumn.CHANGE).data() == "fail → pass"
    assert model.index(1, FlipColumn.CHANGE).data() == "new: error"
    assert model.index(1, FlipColumn.REASON).data(Qt.ItemDataRole.ToolTipRole) == "ValueError: x"
    model.set_rows([])
    assert model.rowCount() == 0


def test_timeline_flips_are_a_role_cleared_by_another_run(qtmodeltester: ModelTester) -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("retry-feedback"))
    qtmodeltester.check(model)
    changed: list[int] = []
    model.dataChanged.connect(lambda first, _last, _roles: changed.append(first.row()))
    flip = Flip(step=1, validator="no_bold", before="fail", after="pass")
    model.set_flips({1: [flip]})
    row = model.row_of_step(1)
    assert changed == [row, *model.note_rows(1)]  # the step, and its new note row (the flip)
    assert model.note_at(row + 1) is not None
    assert model.index(row, Column.MARKERS).data(TimelineRole.FLIPS) == [flip]
    assert (
        model.index(row, Column.MARKERS)
        .data(Qt.ItemDataRole.ToolTipRole)
        .endswith("no_bold: fail → pass")
    )
    model.set_flips({})
    assert model.index(row, Column.STEP).data(TimelineRole.FLIPS) is None
    model.set_flips({1: [flip]})
    model.show_run(stored_run("retry-feedback"))
    assert model.index(row, Column.STEP).data(TimelineRole.FLIPS) is None


def test_many_flipped_steps_change_in_one_signal(qtmodeltester: ModelTester) -> None:
    model = TimelineItemModel()
    model.show_run(LiveRun.from_record(long_turn(300)))
    qtmodeltester.check(model)
    signals: list[str] = []
    model.dataChanged.connect(lambda *_args: signals.append("changed"))
    model.rowsInserted.connect(lambda *_args: signals.append("inserted"))
    model.modelReset.connect(lambda: signals.append("reset"))
    flips = {s: [Flip(step=s, validator="v", before="fail", after="pass")] for s in range(5, 206)}
    model.set_flips(flips)
    assert signals == ["reset"]  # 201 steps gain a flip's note row: rebuilt once
    assert len(model.note_rows(100)) == 1
    row = model.row_of_step(100)
    assert model.index(row, Column.STEP).data(TimelineRole.FLIPS) == flips[100]


def test_an_unexpected_error_is_one_line_not_an_endless_revalidating(
    qloop: object, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr("inspector.app.validators.revalidation.revalidate_runs", broken)
    revalidator = Revalidator(tmp_path / "runs.sqlite3")
    with qtbot.waitSignal(revalidator.failed, timeout=10_000) as failed:
        revalidator.revalidate("demo:retry-feedback", ["abc"])
    assert failed.args == ["Cannot re-validate: RuntimeError: a bug of ours"]
    qtbot.waitUntil(lambda: not revalidator.busy)


def test_new_and_dropped_verdicts_are_listed_after_the_flips() -> None:
    result = Revalidation(
        run_id="abc",
        flips=[Flip(step=2, validator="short", before="fail", after="pass")],
        new_verdicts=[Flip(step=2, validator="names_sam", before=None, after="pass")],
        dropped_verdicts=[Flip(step=2, validator="no_markdown", before="fail", after=None)],
    )
    rows = flip_rows(result)
    assert [change_text(r.before, r.after) for r in rows] == [
        "fail → pass",
        "new: pass",
        "dropped (was fail)",
    ]
