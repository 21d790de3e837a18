"""The table's row painter draws the same pixels as Qt's cell-by-cell paint: every demo, at
three sizes, with a step selected or none, the mouse over a row, cleared and flipped steps, note
rows and attempt headers, scrolled by part of a row, cells drawn from their pictures
(``CellPictures``), texts overflowing a narrow column, another font. Each comparison also checks
that the row painter painted (so that it is not Qt's path compared with itself). Run them with
``QT_SCALE_FACTOR=2`` and ``1.5`` too (pictures at whole device pixel ratios only)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFont, QHoverEvent, QImage
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.timeline import row_painter
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip
from inspector.resources import demo_names
from tests.helpers.demo_events import demo_run, stored_run

SIZES = [(1400, 900), (1024, 700), (640, 420)]


def grab(view: TimelineView, rows: bool) -> QImage:
    table = view.table
    table.row_painting = rows
    table.viewport().repaint()
    return table.viewport().grab().toImage()


def assert_same(view: TimelineView) -> None:
    """Three paints by the row painter (cells pictured on the way: their second paint makes
    their pictures, the third draws them) each give Qt's pixels."""
    before = view.table.cells_painted
    by_rows = [grab(view, True) for _ in range(3)]
    assert view.table.cells_painted > before  # the row painter painted
    by_qt = grab(view, False)
    for image in by_rows:
        assert image == by_qt


def shown(qtbot: QtBot, name: str, size: tuple[int, int]) -> TimelineView:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show_run(stored_run(name))
    view.show()
    qtbot.waitExposed(view)
    QApplication.processEvents()
    return view


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", demo_names())
def test_every_demo_paints_as_qt_does(qtbot: QtBot, name: str, size: tuple[int, int]) -> None:
    view = shown(qtbot, name, size)
    assert row_painter.can_paint(view.table)
    assert_same(view)  # nothing selected
    view.select_last()
    assert_same(view)  # the last step selected and current (its row is Qt's)
    view.table.setFocus()
    assert_same(view)


def test_hover_selection_flips_and_partial_rows(qtbot: QtBot) -> None:
    view = shown(qtbot, "retry-feedback", (900, 300))
    steps = view.model.run.steps
    flip = Flip(step=steps[0].index, validator="max_length", before="fail", after="pass")
    view.set_flips({steps[0].index: [flip]})  # a tinted band, a chip and a note row
    QApplication.processEvents()
    assert_same(view)
    table = view.table
    viewport = table.viewport()
    point = QPointF(40, table.rowViewportPosition(1) + 3)
    hover = QHoverEvent(
        QHoverEvent.Type.HoverMove, point, viewport.mapToGlobal(point), QPointF(-1, -1)
    )
    QApplication.sendEvent(viewport, hover)  # Qt's view takes that cell as hovered
    assert_same(view)
    table.selectRow(2)
    assert_same(view)
    table.verticalScrollBar().setValue(7)  # rows cut by the viewport's top
    assert_same(view)


def test_other_cases_take_qts_paint(qtbot: QtBot) -> None:
    view = shown(qtbot, "retry-feedback", (900, 400))
    table = view.table
    table.setShowGrid(True)
    assert not row_painter.can_paint(table)
    before = table.cells_painted
    table.viewport().repaint()
    assert table.cells_painted == before
    table.setShowGrid(False)
    table.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    assert not row_painter.can_paint(table)
    table.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
    assert row_painter.can_paint(table)


def test_narrow_columns_a_new_font_and_a_scroll_keep_qts_pixels(qtbot: QtBot) -> None:
    """Texts that overflow their cell (a column narrower than "…") are not pictured; a new font
    drops the pictures; cells pictured in one place are drawn in another after a scroll."""
    view = shown(qtbot, "retry-feedback", (900, 400))
    table = view.table
    header = table.horizontalHeader()
    for width in (4, 9, 14):
        header.resizeSection(1, width)  # Att.
        header.resizeSection(0, width + 2)  # #
        assert_same(view)
    font = QFont(table.font())
    font.setPointSizeF(font.pointSizeF() * 1.3)
    table.setFont(font)
    QApplication.processEvents()
    made = table.pictures.made
    assert_same(view)
    ratio = table.viewport().devicePixelRatioF()
    if ratio == int(ratio):  # else none are made
        assert table.pictures.made > made > 0  # made again, in the new font
    table.verticalScrollBar().setValue(3)
    assert_same(view)


def long_run(steps: int) -> LiveRun:
    """demo:step-cap's first step repeated: ``steps`` steps of one attempt."""
    record = demo_run("step-cap")[1]
    first, last = record.steps[0], record.steps[-1]
    built = [first.model_copy(update={"index": i}) for i in range(1, steps)]
    built.append(last.model_copy(update={"index": steps}))
    return LiveRun.from_record(record.model_copy(update={"steps": built}))


def test_step_numbers_elided_alike_are_pictured_and_keep_qts_pixels(qtbot: QtBot) -> None:
    """Step numbers from 1,000 on: the ``#`` column shows them elided ("10…"), the same shown
    text down a page, pictured by what it shows; at every width the pixels are Qt's."""
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show_run(long_run(1_200))
    view.show()
    qtbot.waitExposed(view)
    table = view.table
    table.scrollToBottom()
    QApplication.processEvents()
    header = table.horizontalHeader()
    margin = view.delegate.text_margin(row_painter._options(table)[0])
    metrics = table.fontMetrics()
    height = table.rowHeight(0)
    widths, shown_as = set(), set()
    for wanted in (20, 28, 34, 36, 44, 60):
        header.resizeSection(0, wanted)
        width = header.sectionSize(0)  # the view keeps a least width
        widths.add(width)
        assert_same(view)
        row = table.rowAt(table.viewport().height() // 2)
        number = str(view.model.step_at(row))
        shown = metrics.elidedText(number, Qt.TextElideMode.ElideRight, width - 2 * margin)
        key = (shown, width, height, True)
        shown_as.add(shown == number)
        ratio = table.viewport().devicePixelRatioF()
        if shown != number and ratio == int(ratio):  # elided: the same text down the page
            assert isinstance(table.pictures.get(key), tuple)
    assert len(widths) >= 4 and shown_as == {True, False}  # whole at some widths, elided at others
