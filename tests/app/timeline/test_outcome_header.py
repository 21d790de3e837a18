"""The Timeline page answers "why" at a glance: the outcome header, the note rows under each
step, the line about hidden cleared attempts, and columns dropped before the answer's."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from pytestqt.qtbot import QtBot

from inspector.app.theme import status_colour
from inspector.app.timeline.timeline_item_model import NOTE_COLUMN, Column, TimelineRole
from inspector.app.timeline.timeline_view import MIN_OUTPUT, STATUS_DOT, TimelineView
from inspector.core.live import LiveRun, LiveStep
from inspector.core.records import Verdict
from tests.helpers.demo_events import demo_run, stored_run


def make_view(qtbot: QtBot, run: LiveRun, width: int = 1100) -> TimelineView:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(width, 520)
    view.show_run(run)
    view.show()
    qtbot.waitExposed(view)
    return view


def note_texts(view: TimelineView) -> list[str]:
    model = view.model
    return [
        str(model.index(row, NOTE_COLUMN).data())
        for row in range(model.rowCount())
        if model.note_at(row) is not None
    ]


def test_a_fallback_runs_header_shows_the_fallback_value(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("invalid-output-fallback"))
    header = view.outcome
    assert header.isVisible()
    assert header.answer_label.text() == "<b>Fallback value</b>"
    assert '"body": "Meeting moved to 3pm."' in header.answer.text()
    assert "fallback value was used instead of the model's" in header.ended.text()
    assert "attempt 3 of 3 · 3 steps of 20 max" in header.facts.text()
    # The price is looked up off the UI thread; a model the table does not know is unknown.
    qtbot.waitUntil(lambda: "cost unknown" in header.facts.text())
    assert "$0" not in header.facts.text()


def test_a_dark_palette_repaints_the_headers_status_colours(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("invalid-output-fallback"))
    strip = view.outcome.strip
    assert strip.palette().color(QPalette.ColorRole.Window) == status_colour("empty", False)
    dark = QPalette(view.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    view.setPalette(dark)  # as a switch of the application's palette reaches the window
    assert strip.palette().color(QPalette.ColorRole.Window) == status_colour("empty", True)


def test_hiding_cleared_attempts_never_leaves_an_unexplained_blank(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("invalid-output-fallback"))
    assert not view.hidden_line.isVisible()
    view.set_show_cleared(False)
    assert view.model.rowCount() == 0  # every attempt was cleared
    assert view.hidden_line.isVisible()
    assert "Nothing to show: all 3 attempts were cleared" in view.hidden_line.text()
    assert "Fallback value" in view.outcome.answer_label.text()  # the answer is still there
    view.hidden_line.linkActivated.emit("show-cleared")
    assert view.show_cleared_box.isChecked() and view.model.rowCount() > 0
    assert not view.hidden_line.isVisible()


def test_some_hidden_attempts_are_counted_with_a_way_back(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    view.show_cleared_box.click()
    assert view.hidden_line.isVisible()
    assert view.hidden_line.text().startswith("2 cleared attempts hidden.")


def test_a_failed_verdicts_reason_and_the_feedback_are_rows_of_their_own(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    assert note_texts(view) == [
        "✗ no_markdown: found '*' at 0",
        "↳ feedback (user): Plain text only: no markdown characters.",
        "✗ max_length: 171 characters > 160",
        "↳ feedback (user): An SMS holds 160 characters at most. Shorten it.",
    ]
    rows = view.model.note_rows(2)
    assert list(rows) == [view.model.row_of_step(2) + 1, view.model.row_of_step(2) + 2]
    cell = view.model.paint_cell(rows[0], Column.KIND)
    assert cell is not None and cell.note == "fail" and cell.cleared  # dimmed, still painted
    # Notes are not steps: Up/Down go from step to step; a click on a note selects its step.
    assert not view.model.flags(view.model.index(rows[0], 0))
    view.select_step(4)
    rect = view.table.visualRect(view.model.index(rows[1], Column.OUTPUT))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.selected_step() == 2


def test_an_error_verdict_is_worded_as_a_validator_error(qtbot: QtBot) -> None:
    run = stored_run("step-cap")
    last = run.steps[-1]
    assert last.step is not None
    broken = Verdict.errored("no_cjk", "ZeroDivisionError: division by zero")
    step = last.step.model_copy(update={"verdicts": [broken], "status": "validator_error"})
    run.steps[-1] = LiveStep.from_step(step)
    view = make_view(qtbot, run)
    rows = view.model.note_rows(last.index)
    notes = [view.model.index(r, 0).data(TimelineRole.NOTE) for r in rows]
    assert [n.kind for n in notes] == ["forced", "forced", "error"]
    assert notes[2].text.startswith("! validator error in no_cjk: ZeroDivisionError")
    assert notes[2].text.endswith("the validator broke, not the model's failure")


def test_the_forced_request_is_said_in_full(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("step-cap"))
    assert note_texts(view) == [
        "⚑ forced: tools disabled on this step (tool_choice: none)",
        "⚑ forced: the final-step instruction was appended to the system prompt",
    ]


@pytest.mark.parametrize("width", [1100, 640, 560, 420])
def test_narrowing_drops_columns_not_the_answer(qtbot: QtBot, width: int) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"), width)
    table = view.table
    hidden = [c for c in Column if table.isColumnHidden(c)]
    assert Column.OUTPUT not in hidden
    order = [Column.TOKENS, Column.LATENCY, Column.KIND, Column.MARKERS, Column.ATTEMPT]
    assert set(hidden) == set(order[: len(hidden)])  # dropped in this order, nothing else
    if len(hidden) < len(order):  # a column is dropped only while Output is under its minimum
        assert table.columnWidth(Column.OUTPUT) >= MIN_OUTPUT
        assert view.delegate.status_words  # and Status keeps its words until the last
    assert view.delegate.note_column == (Column.STATUS if Column.KIND in hidden else Column.KIND)
    view.resize(1300, 520)
    qtbot.waitUntil(lambda: not any(table.isColumnHidden(c) for c in Column))


def test_the_answer_keeps_its_width_beside_the_default_docks(qtbot: QtBot) -> None:
    # The centre pane of a 1024x700 window with the default docks is ~440 px wide.
    view = make_view(qtbot, stored_run("retry-feedback"), 440)
    table, model = view.table, view.model
    assert table.columnWidth(Column.OUTPUT) >= MIN_OUTPUT
    assert table.isColumnHidden(Column.ATTEMPT)  # the attempt header above names it
    # Status is its dot alone; its words are the tooltip (and the attempt header's chip).
    assert not view.delegate.status_words
    assert table.columnWidth(Column.STATUS) == STATUS_DOT
    assert model.headerData(Column.STATUS, Qt.Orientation.Horizontal) == ""
    header_tip = model.headerData(
        Column.STATUS, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    assert header_tip == "Status"
    row = model.row_of_step(2)
    tip = model.index(row, Column.STATUS).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == "failed validation"
    view.resize(1300, 520)  # room again: the words and the column come back as they were
    qtbot.waitUntil(lambda: view.delegate.status_words)
    assert not table.isColumnHidden(Column.ATTEMPT)
    assert model.headerData(Column.STATUS, Qt.Orientation.Horizontal) == "Status"
    assert table.columnWidth(Column.STATUS) > 100


def test_the_header_follows_a_streaming_run_at_most_every_50_ms(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot, run)
    header = view.outcome
    assert not header.isVisible()  # no run: no header
    run.apply(events[0])
    view.on_event(events[0])
    run.apply(events[1])
    view.on_event(events[1])
    assert header.outcome.status == ""  # not redrawn per event
    qtbot.waitUntil(lambda: header.outcome.status == "running")
    assert header.ended.text() == "Running: step 1 of attempt 1."
    for event in events[2:]:
        run.apply(event)
        view.on_event(event)
    assert header.outcome.status == "succeeded"  # the end is drawn at once
    assert header.answer.text() == record.output


def test_a_long_answer_is_cut_to_three_lines_until_show_all(qtbot: QtBot) -> None:
    run = stored_run("retry-feedback")
    assert run.record is not None
    long = " ".join(f"word{n}" for n in range(400))
    run.record = run.record.model_copy(update={"output": long})
    view = make_view(qtbot, run, width=700)
    header = view.outcome
    assert header.show_all.isVisible() and header.answer.text().endswith("…")
    assert len(header.answer.text()) < len(long)
    header.show_all.click()
    assert header.answer.text() == long and header.show_all.text() == "Show less"
    header.copy_button.click()
    assert QGuiApplication.clipboard().text() == long


def test_a_short_answer_has_no_show_all(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("step-cap"))
    assert not view.outcome.show_all.isVisible()
    assert view.outcome.copy_button.isVisible()
    assert view.outcome.answer.text().startswith("The tallest building in Europe")
