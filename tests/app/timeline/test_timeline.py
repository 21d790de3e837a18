"""TimelineView: selection, Up/Down, the cleared toggle and live growth, on real demo runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from inspector.app.timeline import row_painter
from inspector.app.timeline.timeline_item_model import Column, TimelineRole
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.events import StepStarted
from inspector.core.live import LiveRun
from tests.helpers.demo_events import demo_run, stored_run


def make_view(qtbot: QtBot, run: LiveRun) -> TimelineView:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1100, 520)  # the outcome header above the steps, then every row
    view.show_run(run)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_selecting_a_step_emits_its_index(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    with qtbot.waitSignal(view.stepSelected) as signal:
        view.select_step(3)
    assert signal.args == [3]
    assert view.selected_step() == 3
    with qtbot.waitSignal(view.stepSelected) as signal:
        view.select_last()
    assert signal.args == [4]


def test_up_and_down_move_between_steps_skipping_attempt_headers(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    view.select_step(2)
    view.table.setFocus()
    seen: list[int] = []
    view.stepSelected.connect(seen.append)
    qtbot.keyClick(view.table, Qt.Key.Key_Down)  # over the "Attempt 2" header
    qtbot.keyClick(view.table, Qt.Key.Key_Down)
    qtbot.keyClick(view.table, Qt.Key.Key_Up)
    qtbot.keyClick(view.table, Qt.Key.Key_Up)
    qtbot.keyClick(view.table, Qt.Key.Key_Up)
    assert seen == [3, 4, 3, 2, 1]


def test_the_toggle_hides_cleared_attempts_and_keeps_the_selection(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    assert view.show_cleared_box.text() == "Show cleared attempts"
    view.select_step(4)
    assert view.model.rowCount() == 11  # 3 attempt headers, 4 steps, 4 notes
    view.show_cleared_box.click()
    assert view.model.rowCount() == 4
    assert view.model.row_of_step(2) == -1
    assert view.selected_step() == 4
    view.select_step(2)  # hidden: nothing to select
    assert view.selected_step() == 4
    view.set_show_cleared(True)
    assert view.show_cleared_box.isChecked() and view.model.rowCount() == 11


def test_attempt_headers_span_the_row(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    model = view.model
    headers = [r for r in range(model.rowCount()) if model.index(r, 0).data(TimelineRole.IS_HEADER)]
    assert headers == [0, 5, 9]
    # No setSpan (10,000 of them stalled a big run's open): each cell paints its slice.
    assert all(view.table.columnSpan(r, 0) == 1 for r in headers)
    image = view.table.viewport().grab().toImage()
    top = view.table.rowViewportPosition(0)
    height = view.table.rowHeight(0)
    width = view.table.viewport().width()

    def inked(left: int, right: int) -> bool:  # something but the background drawn there
        background = image.pixelColor(right - 2, top + 2).rgba()
        return any(
            image.pixelColor(x, y).rgba() != background
            for x in range(left, right)
            for y in range(top + 3, top + height - 3)
        )

    # "Attempt 1" runs from the # column over Att. and on; the row's right end is bare.
    step_end = view.table.columnViewportPosition(Column.ATTEMPT)
    assert inked(0, step_end) and inked(step_end, step_end + 30)
    assert not inked(width - 40, width - 1)
    # The header's background runs the whole row, the same in every column.
    columns = [view.table.columnViewportPosition(c) for c in Column]
    tones = {image.pixelColor(x + 2, top + 1).rgba() for x in columns if x >= 0}
    assert len(tones) == 1


def test_the_timeline_grows_while_the_run_streams(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot, run)
    row_counts = []
    for event in events:
        run.apply(event)
        view.on_event(event)
        if isinstance(event, StepStarted):
            row_counts.append(view.model.rowCount())
            status = view.model.index(view.model.row_of_step(event.index), 0).data(
                TimelineRole.STATUS
            )
            assert status == "pending"
    assert row_counts == [2, 3, 7, 11]  # each failed step's reason and feedback came before
    assert view.summary.text() == "4 steps · 3 attempts · 2 cleared"
    with qtbot.waitSignal(view.stepSelected) as signal:
        view.select_last()
    assert signal.args == [record.steps[-1].index]
    header = view.model.row_of_step(4) - 1  # new rows' headers are headers in every column
    assert all(view.model.paint_cell(header, c).header for c in Column)


def test_renders_in_light_and_dark(qtbot: QtBot, tmp_path: Path) -> None:
    view = make_view(qtbot, stored_run("retry-feedback"))
    view.select_step(2)
    image = view.grab().toImage()
    image.save(str(tmp_path / "timeline.png"))
    colours = {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 7)
        for y in range(0, image.height(), 5)
    }
    assert len(colours) > 20  # text, chips, bars and selection, not a blank pane
    palette = view.palette()
    palette.setColor(palette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(palette.ColorRole.Text, QColor("#e6e6e6"))
    view.setPalette(palette)
    dark = view.grab().toImage()
    assert dark.pixelColor(dark.width() // 2, dark.height() - 5).lightness() < 60


def _cell_pixels(view: TimelineView, row: int, column: int) -> set[str]:
    rect = view.table.visualRect(view.model.index(row, column))
    image = view.table.viewport().grab().toImage()
    return {
        image.pixelColor(x, y).name()
        for x in range(rect.left(), rect.right() + 1)
        for y in range(rect.top(), rect.bottom() + 1)
    }


def test_a_slow_steps_latency_bar_is_drawn_at_the_default_width(qtbot: QtBot) -> None:
    from inspector.app.timeline.timeline_delegate import latency_bar_colour

    view = make_view(qtbot, stored_run("retry-feedback"))
    view.table.clearSelection()
    fractions = {
        row: view.model.index(row, Column.LATENCY).data(TimelineRole.LATENCY_FRACTION)
        for row in range(view.model.rowCount())
        if not view.model.index(row, Column.LATENCY).data(TimelineRole.CLEARED)  # not dimmed
    }
    slowest = max((r for r, f in fractions.items() if f is not None), key=lambda r: fractions[r])
    bar = latency_bar_colour(view.table.palette(), selected=False).name()
    assert bar in _cell_pixels(view, slowest, Column.LATENCY)


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # the offscreen tooltip
def test_chips_stay_in_their_cell_and_failures_come_first(qtbot: QtBot) -> None:
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QFont, QFontMetrics, QHelpEvent
    from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

    from inspector.app.timeline.timeline_delegate import chip_order, chip_rects
    from inspector.core.records import Verdict

    metrics = QFontMetrics(QFont())
    area = QRect(100, 0, 40, 20)
    (only,) = chip_rects(area, ["✗ a-very-long-validator-name", "✓ b"], metrics)
    assert only.left() >= area.left() and only.right() <= area.right()

    verdicts = [
        Verdict.passed("p1"),
        Verdict.failed("f1", "wrong"),
        Verdict.passed("p2"),
        Verdict(validator="e1", ok=False, status="error", reason="crashed"),
        Verdict.failed("f2", "also wrong"),
    ]
    assert [v.validator for v in chip_order(verdicts)] == ["f1", "e1", "f2", "p1", "p2"]

    # The hover tooltip follows the painted order: the first chip is the first failure.
    view = make_view(qtbot, stored_run("retry-feedback"))
    row = next(
        r
        for r in range(view.model.rowCount())
        if any(
            v.status == "fail"
            for v in view.model.index(r, Column.VERDICTS).data(TimelineRole.VERDICTS) or []
        )
    )
    index = view.model.index(row, Column.VERDICTS)
    shown = chip_order(index.data(TimelineRole.VERDICTS))
    option = QStyleOptionViewItem()
    option.rect = view.table.visualRect(index)
    option.font = view.table.font()
    first = chip_rects(option.rect, ["x"], QFontMetrics(QFont()))[0]
    pos = QPoint(first.left() + 2, first.center().y())
    event = QHelpEvent(QHelpEvent.Type.ToolTip, pos, view.table.viewport().mapToGlobal(pos))
    assert view.table.itemDelegate().helpEvent(event, view.table, option, index)
    assert QToolTip.text().startswith(f"✗ {shown[0].validator}")
    QToolTip.hideText()


def test_the_delegate_reads_one_paint_cell_per_painted_cell(qtbot: QtBot) -> None:
    """Painting a cell reads its ``PaintCell`` once, straight from the model, and no role
    through ``data()`` (it used to ask ~11 roles); another model is asked the PAINT role."""
    from typing import Any

    from PySide6.QtCore import QIdentityProxyModel
    from PySide6.QtWidgets import QTableView

    from inspector.app.timeline.timeline_delegate import TimelineDelegate
    from inspector.app.timeline.timeline_item_model import TimelineItemModel
    from inspector.reports.timeline_cells import PaintCell

    asked: list[tuple[int, int, int]] = []
    cells: list[tuple[int, int]] = []

    class Counting(TimelineItemModel):
        def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
            asked.append((index.row(), index.column(), role))
            return super().data(index, role)

        def paint_cell(self, row: int, column: int) -> PaintCell | None:
            cells.append((row, column))
            return super().paint_cell(row, column)

    model = Counting()
    model.show_run(stored_run("retry-feedback"))
    table = QTableView()
    qtbot.addWidget(table)
    table.setModel(model)
    table.setItemDelegate(TimelineDelegate(table))
    table.resize(1100, 320)
    table.show()
    qtbot.waitExposed(table)
    asked.clear()
    cells.clear()
    table.viewport().grab()  # a paint of every visible cell
    assert asked == []
    assert len(cells) == len(set(cells))  # once each
    assert (1, Column.VERDICTS) in cells and (0, 0) in cells  # steps and headers alike
    painted = model.index(1, Column.LATENCY).data(TimelineRole.PAINT)
    assert painted == model.paint_cell(1, Column.LATENCY)
    assert painted.text == model.index(1, Column.LATENCY).data()
    assert painted.fraction == model.index(1, Column.LATENCY).data(TimelineRole.LATENCY_FRACTION)

    proxy = QIdentityProxyModel()  # a model in between: the PAINT role, one per cell
    proxy.setSourceModel(model)
    table.setModel(proxy)
    asked.clear()
    table.viewport().grab()
    assert {role for _, _, role in asked} == {TimelineRole.PAINT}


def test_a_plain_cells_elided_text_is_kept_until_the_font_changes(qtbot: QtBot) -> None:
    """A plain cell's text, elided to its width, is made once and drawn from then on; a new
    font makes them again (the old ones would be cut at the wrong place)."""
    from PySide6.QtGui import QFontMetrics

    def as_elided(font: QFont) -> dict[tuple[str, int], str]:
        metrics = QFontMetrics(font)
        elide = Qt.TextElideMode.ElideRight
        return {(text, width): metrics.elidedText(text, elide, width) for text, width in kept}

    view = make_view(qtbot, stored_run("retry-feedback"))
    view.table.viewport().grab()
    kept = view.delegate._elided
    output = view.model.paint_cell(1, Column.OUTPUT)
    assert output is not None and any(text == output.text for text, _ in kept)
    assert kept == as_elided(view.table.font())
    font = view.table.font()
    font.setPointSizeF(font.pointSizeF() * 3)
    view.table.setFont(font)
    assert kept == {}  # the view's font changed: made again at the next paint
    view.table.viewport().grab()
    assert kept and kept == as_elided(font)
    assert any(shown.endswith("…") for shown in kept.values())


def test_step_numbers_read_whole_as_a_long_run_gains_digits(qtbot: QtBot) -> None:
    """From 1,000 on, the default ``#`` width elided every number ("10…"); the column widens
    as the numbers gain a digit, a stored run's at once, a streaming run's as it goes."""
    from tests.app.timeline.test_row_painter import long_run

    def whole(view: TimelineView, step: int) -> bool:
        margin = view.delegate.text_margin(row_painter._options(view.table)[0])
        inner = view.table.columnWidth(Column.STEP) - 2 * margin
        metrics = view.table.fontMetrics()
        return metrics.elidedText(str(step), Qt.TextElideMode.ElideRight, inner) == str(step)

    stored = make_view(qtbot, long_run(12_345))
    assert whole(stored, 12_345) and whole(stored, 10_000)
    events, _ = demo_run("step-cap")
    run = LiveRun()
    view = make_view(qtbot, run)
    narrow = view.table.columnWidth(Column.STEP)
    for event in events:
        run.apply(event)
        view.on_event(event)
    assert view.table.columnWidth(Column.STEP) == narrow  # a few steps: as it was
    started = next(e for e in events if isinstance(e, StepStarted))
    view.on_event(started.model_copy(update={"index": 1_000}))
    assert view.table.columnWidth(Column.STEP) > narrow and whole(view, 1_000)
    view.table.setColumnWidth(Column.STEP, narrow)  # the user's width stays...
    view.on_event(started.model_copy(update={"index": 9_999}))
    assert view.table.columnWidth(Column.STEP) == narrow
    view.on_event(started.model_copy(update={"index": 10_000}))  # ...until the next digit
    assert whole(view, 10_000)


@pytest.mark.parametrize("whose", ["table", "view"])
def test_step_numbers_read_whole_after_the_font_grows(qtbot: QtBot, whose: str) -> None:
    """A larger font (the table's own, or the view's, which the table inherits) widens
    ``#`` again: the 12,345 steps' numbers fitted to the old font were elided ("12…"). The
    rows grow with it, as tall as the view makes them for its font at the start."""
    from tests.app.timeline.test_row_painter import long_run

    view = make_view(qtbot, long_run(12_345))
    narrow = view.table.columnWidth(Column.STEP)
    font = QFont(view.table.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    shorter = view.table.rowHeight(0)
    (view.table if whose == "table" else view).setFont(font)
    assert view.table.font().pointSizeF() == font.pointSizeF()
    assert view.table.rowHeight(0) == view.table.fontMetrics().height() + 10 > shorter
    margin = view.delegate.text_margin(row_painter._options(view.table)[0])
    inner = view.table.columnWidth(Column.STEP) - 2 * margin
    metrics = view.table.fontMetrics()
    assert inner + 2 * margin > narrow
    for step in ("12345", "10000"):
        assert metrics.elidedText(step, Qt.TextElideMode.ElideRight, inner) == step


@pytest.mark.parametrize("pixels", [10, 18])
def test_step_numbers_read_whole_where_a_digits_advance_is_fractional(
    qtbot: QtBot, pixels: int
) -> None:
    """A digit 11.44 px wide (DejaVu Sans at 18 px) was measured 11 (``QFontMetrics``
    rounds): five digits are 57.2 px, and "12345" was elided in the width made for it."""
    from tests.app.timeline.test_row_painter import long_run

    view = make_view(qtbot, LiveRun())
    font = QFont("DejaVu Sans")
    font.setPixelSize(pixels)
    view.table.setFont(font)
    view.show_run(long_run(100_000))
    margin = view.delegate.text_margin(row_painter._options(view.table)[0])
    inner = view.table.columnWidth(Column.STEP) - 2 * margin
    metrics = view.table.fontMetrics()
    for step in ("100000", "99999"):
        assert metrics.elidedText(step, Qt.TextElideMode.ElideRight, inner) == step


def _note_row(view: TimelineView, start: str) -> tuple[int, str]:
    for row in range(view.model.rowCount()):
        found = view.model.note_at(row)
        if found is not None and found[1].text.startswith(start):
            return row, found[1].text
    raise AssertionError(f"no note starting {start!r}")


@pytest.mark.parametrize(
    ("demo", "start"),
    [("final-answer-tool", "✗ output: answered in plain text"), ("step-cap", "⚑ forced: the")],
)
def test_a_reason_too_long_for_one_line_reads_whole_on_two(
    qtbot: QtBot, demo: str, start: str
) -> None:
    """At 1024x700 the timeline is ~440 px wide: the reason row was elided ("…final_a…")."""
    from inspector.app.timeline.note_lines import shown_lines

    view = make_view(qtbot, stored_run(demo))
    view.resize(440, 520)
    row, text = _note_row(view, start)
    one_line = view.table.verticalHeader().defaultSectionSize()
    qtbot.waitUntil(lambda: view.table.rowHeight(row) > one_line)  # made tall after its paint
    option = QStyleOptionViewItem()
    view.table.initViewItemOption(option)
    column = view.table.itemDelegate().note_column
    option.rect = view.table.visualRect(view.model.index(row, column))
    lines = shown_lines(option, column, text)
    assert len(lines) == 2 and " ".join(lines) == text  # nothing elided
    step_row = view.model.row_of_step(1)
    assert view.table.rowHeight(step_row) == one_line  # steps keep their one line


def test_a_reason_that_fits_keeps_its_one_line_row(qtbot: QtBot) -> None:
    view = make_view(qtbot, stored_run("final-answer-tool"))  # 1100 px wide
    row, _text = _note_row(view, "✗ output:")
    qtbot.wait(50)
    assert view.table.rowHeight(row) == view.table.verticalHeader().defaultSectionSize()


def test_a_pinned_chip_too_narrow_for_its_tool_reads_pinned(qtbot: QtBot) -> None:
    """At 1400x900 demo:invalid-output-fallback's Markers chip read "final_answ…"."""
    from PySide6.QtGui import QFontMetrics

    from inspector.app.timeline.timeline_delegate import chip_label

    metrics = QFontMetrics(QFont())
    label = "final_answer pinned"
    narrow = metrics.horizontalAdvance("final_answ…")
    assert chip_label(metrics, label, narrow) == "pinned"
    assert chip_label(metrics, label, metrics.horizontalAdvance(label) + 1) == label
    assert chip_label(metrics, "✗ max_length", narrow // 2).endswith("…")
