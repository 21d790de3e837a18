"""Paints the timeline's rows in one Python call per repaint instead of one per cell.

``QTableView.paintEvent`` paints a cell by building its style option (selection, hover, focus,
the model's ``flags()``: a call into Python), asking the style for the row panel and calling the
delegate's ``paint`` with three new Python wrappers (painter, option, index); the delegate then
reads the option's rect, state, palette, font and metrics, each a copy made for Python. For the
~200–300 cells of a full repaint (a live run followed past a screen of new rows, a scroll by a
page) that was 10–15 ms of the repaint's ~20 ms. Here a row whose cells have no state of their
own (not selected, not current, not under the mouse) is painted from the table's geometry and
two style options made once per repaint (one for step rows, one for header and note rows, which
Qt paints disabled); a plain cell's text is drawn straight, the others through
``TimelineDelegate.paint_cell`` with the shared option moved to the cell. The rows with state
are left to ``QTableView.paintEvent`` itself (a paint event over their rows alone), so
selection, hover and focus look exactly as Qt draws them.

Only in the case it was written for (``can_paint``): the Fusion style (its row panel is empty
for a cell neither selected nor alternate), no grid, no alternating colours, no hidden rows,
left to right, the view enabled, the ``TimelineItemModel`` and ``TimelineDelegate``. Anything
else takes Qt's path. tests/app/timeline/test_row_painter.py compares the two pixel for pixel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette, QRegion
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QTableView

from inspector.app.timeline.cell_pictures import UNKNOWN, CellPictures
from inspector.app.timeline.timeline_delegate import (
    _ALIGN_BITS,
    _RICH,
    _STEP,
    TimelineDelegate,
    latency_bar_width,
)
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel

if TYPE_CHECKING:
    from collections.abc import Iterable

_TEXT = QPalette.ColorRole.Text
_ENABLED = QStyle.StateFlag.State_Enabled
_EMPTY_UNLESS = frozenset((int(Column.VERDICTS), int(Column.MARKERS)))  # chips or nothing
_STATUS = int(Column.STATUS)
_DRAWN = frozenset((_STATUS, int(Column.LATENCY)))  # rich cells drawn here, not by paint_cell
_ANTIALIASING = QPainter.RenderHint.Antialiasing


def can_paint(table: QTableView) -> bool:
    """Whether ``paint_rows`` paints ``table`` as ``QTableView.paintEvent`` would."""
    return (
        isinstance(table.model(), TimelineItemModel)
        and isinstance(table.itemDelegate(), TimelineDelegate)
        and table.style().name().lower() == "fusion"
        and not table.showGrid()
        and not table.alternatingRowColors()
        and not table.verticalHeader().sectionsHidden()
        and table.layoutDirection() == Qt.LayoutDirection.LeftToRight
        and table.isEnabled()
    )


def stateful_rows(table: QTableView, hover: QPersistentModelIndex) -> set[int]:
    """Rows with a cell Qt paints with state of its own: selected, current (focus), hovered,
    and the row under the mouse."""
    rows = {table.currentIndex().row(), hover.row()}
    selection = table.selectionModel()
    if selection is not None:  # one row at most (single selection)
        rows.update(index.row() for index in selection.selectedIndexes())
    viewport = table.viewport()
    if viewport.underMouse():
        rows.add(table.rowAt(viewport.mapFromGlobal(viewport.cursor().pos()).y()))
    rows.discard(-1)
    return rows


def _columns(table: QTableView, left: int, right: int) -> list[tuple[int, int, int]]:
    """(column, x, width) of the columns shown between viewport x ``left`` and ``right``."""
    header = table.horizontalHeader()
    first = header.visualIndexAt(left)
    last = header.visualIndexAt(right)
    first = 0 if first < 0 else first
    last = header.count() - 1 if last < 0 else last
    shown = []
    for visual in range(first, last + 1):
        column = header.logicalIndex(visual)
        if not header.isSectionHidden(column):
            shown.append((column, table.columnViewportPosition(column), header.sectionSize(column)))
    return shown


def _options(table: QTableView) -> tuple[QStyleOptionViewItem, QStyleOptionViewItem]:
    """The style options Qt gives an enabled (step) cell and a disabled (header, note) cell
    with no state of their own (``QTableViewPrivate::drawCell``)."""
    base = QStyleOptionViewItem()
    table.initViewItemOption(base)
    made = []
    for enabled in (True, False):
        option = QStyleOptionViewItem(base)
        palette = QPalette(base.palette)
        if enabled:
            palette.setCurrentColorGroup(QPalette.ColorGroup.Normal)
        else:
            option.state &= ~_ENABLED
            palette.setCurrentColorGroup(QPalette.ColorGroup.Disabled)
        option.palette = palette
        made.append(option)
    return made[0], made[1]


def _transform(painter: QPainter) -> tuple[float, float, float] | None:
    """(scale, dx, dy) of the painter's logical-to-device transform; None when it is more
    than a scale and a translation (no pictures then)."""
    m = painter.deviceTransform()
    if m.m12() or m.m21() or m.m11() != m.m22() or m.m11() <= 0:
        return None
    return m.m11(), m.dx(), m.dy()


def _whole(value: float) -> bool:
    return value == int(value)


def paint_rows(table: QTableView, event: QPaintEvent, stateful: Iterable[int]) -> QRegion:
    """Paints the rows of ``event``'s area but ``stateful``; returns the region of those left
    for Qt's own paint (empty when none)."""
    model = table.model()
    delegate = table.itemDelegate()
    assert isinstance(model, TimelineItemModel) and isinstance(delegate, TimelineDelegate)
    viewport = table.viewport()
    area = event.rect()
    top = table.rowAt(area.top())
    if top < 0:
        return QRegion()  # below the last row: the background, already painted
    bottom = table.rowAt(area.bottom())
    bottom = model.rowCount() - 1 if bottom < 0 else bottom
    columns = _columns(table, area.left(), area.right())
    left_for_qt = QRegion()
    width = viewport.width()
    skip = set(stateful)
    step_option, other_option = _options(table)
    font, metrics = step_option.font, step_option.fontMetrics
    colour = step_option.palette.color(_TEXT)
    margin = delegate.text_margin(step_option)
    elided, cached = delegate.elided, delegate.cached_elisions
    paint_cell, strip = delegate.paint_cell, delegate.paint_strip
    status_at, latency_at = delegate.paint_status_at, delegate.paint_latency_at
    palette = step_option.palette
    dark = delegate.dark(palette)  # and the latency track's colour made
    bar = palette.color(QPalette.ColorRole.Highlight)  # latency_bar_colour, not selected
    read, is_step = model.paint_row, model.step_at
    painter = QPainter(viewport)
    pictures: CellPictures | None = getattr(table, "pictures", None)
    transform = _transform(painter)
    background = viewport.palette().brush(viewport.backgroundRole())
    if (
        pictures is None
        or transform is None
        or not viewport.autoFillBackground()
        or background.style() != Qt.BrushStyle.SolidPattern
    ):
        pictures = None
        scale, dx, dy = 1.0, 0.0, 0.0
    else:
        scale, dx, dy = transform
        state = (
            colour.rgba(),
            bar.rgba(),
            delegate.track_colour().rgba(),
            dark,
            font.key(),
            margin,
            delegate.status_words,
            int(painter.renderHints().value),
        )
        pictures.begin(state, background.color(), scale, width)
    got = pictures.get if pictures is not None else None
    # Each column, and whether it starts and ends on whole device pixels (pictures need it).
    placed = [(c, x, w, _whole(x * scale + dx) and _whole(w * scale)) for c, x, w in columns]
    hints = painter.renderHints()

    def text_picture(p: QPainter, cell_width: int, height: int, right: bool, shown: str) -> None:
        p.setRenderHints(hints)
        p.setPen(colour)
        p.setFont(font)
        p.drawText(margin, 0, cell_width - 2 * margin, height, _ALIGN_BITS[right], shown)

    painted = 0
    try:
        pen_set = False
        for row in range(top, bottom + 1):
            y, height = table.rowViewportPosition(row), table.rowHeight(row)
            if row in skip:
                left_for_qt += QRect(0, y, width, height)
                continue
            option = step_option if is_step(row) else other_option
            painted += len(columns)
            row_whole = got is not None and _whole(y * scale + dy) and _whole(height * scale)
            cells = read(row)
            for column, x, cell_width, x_whole in placed:
                cell = cells[column]
                if cell is None:
                    continue
                if column in _EMPTY_UNLESS and not (
                    cell.verdicts
                    or cell.markers
                    or cell.flips
                    or cell.cleared
                    or cell.header
                    or cell.note
                ):
                    continue  # no chip: the delegate would draw nothing
                whole = row_whole and x_whole
                if column in _DRAWN and not (
                    cell.header or cell.note or cell.flips or cell.cleared
                ):
                    if whole:
                        if column == _STATUS:
                            key: tuple[object, ...] = (
                                column,
                                cell.status,
                                cell.text,
                                cell_width,
                                height,
                            )
                        else:
                            filled = latency_bar_width(cell_width, cell.fraction)
                            key = (column, cell.text, filled, cell_width, height)
                        picture = got(key, UNKNOWN)  # type: ignore[misc]
                        if picture is UNKNOWN and pictures.wanted(key):  # type: ignore[union-attr]
                            rect0 = (0, 0, cell_width, height)

                            def rich(p: QPainter, c=cell, r=rect0, s=column == _STATUS) -> None:
                                p.setRenderHints(hints)
                                p.setRenderHint(_ANTIALIASING, True)
                                if s:
                                    status_at(p, r, c, dark, colour, font, metrics)
                                else:
                                    latency_at(p, r, c, bar, colour, font)

                            pictures.add(  # type: ignore[union-attr]
                                key, cell_width, height, rich, clip=True
                            )
                        elif picture is not None and picture is not UNKNOWN:
                            painter.drawPixmap(x, y, picture)
                            continue
                    # The delegate's rich path without its save/restore: clipped to the cell,
                    # antialiased, then both undone for the plain cells.
                    painter.setClipRect(x, y, cell_width, height)
                    painter.setRenderHint(_ANTIALIASING, True)
                    rect = (x, y, cell_width, height)
                    if column == _STATUS:
                        status_at(painter, rect, cell, dark, colour, font, metrics)
                    else:
                        latency_at(painter, rect, cell, bar, colour, font)
                    painter.setRenderHint(_ANTIALIASING, False)
                    painter.setClipping(False)
                    pen_set = False
                    continue
                if cell.header or cell.note or cell.flips or cell.cleared or column in _RICH:
                    option.rect = QRect(x, y, cell_width, height)
                    paint_cell(painter, option, cell, column)
                    pen_set = False  # what it set is restored, or its own
                    continue
                text = cell.text
                if text:  # TimelineDelegate._paint_plain, with what it read made once
                    inner = cell_width - 2 * margin
                    picture = UNKNOWN
                    if whole:
                        key = (text, cell_width, height, cell.right)
                        picture = got(key, UNKNOWN)  # type: ignore[misc]
                        if picture is UNKNOWN and pictures.wanted(key):  # type: ignore[union-attr]
                            shown = cached.get((text, inner)) or elided(metrics, text, inner)
                            pictures.add(  # type: ignore[union-attr]
                                key,
                                cell_width,
                                height,
                                lambda p, w=cell_width, h=height, r=cell.right, t=shown: (
                                    text_picture(p, w, h, r, t)
                                ),
                            )
                    if picture is not None and picture is not UNKNOWN:
                        painter.drawPixmap(x, y, picture)
                    else:
                        if not pen_set:
                            painter.setPen(colour)
                            painter.setFont(font)
                            pen_set = True
                        shown = cached.get((text, inner)) or elided(metrics, text, inner)
                        painter.drawText(
                            x + margin, y, inner, height, _ALIGN_BITS[cell.right], shown
                        )
                if column == _STEP:
                    strip(painter, option, cell.status, x, y, height)
    finally:
        painter.end()
        if pictures is not None:
            pictures.finish()
        table.cells_painted += painted  # type: ignore[attr-defined]
    return left_for_qt
