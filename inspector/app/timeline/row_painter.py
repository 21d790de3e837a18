"""Paints the timeline's rows in one Python call per repaint instead of one per cell.

``QTableView.paintEvent`` paints a cell by building its style option (selection, hover, focus,
the model's ``flags()``: a call into Python), asking the style for the row panel and calling the
delegate's ``paint`` with three new Python wrappers (painter, option, index); the delegate then
reads the option's rect, state, palette, font and metrics, each a copy made for Python. For the
~200–300 cells of a full repaint (a live run followed past a screen of new rows, a scroll by a
page) that was 10–15 ms of the repaint's ~20 ms. Here a row whose cells have no state of their
own (not selected, not current, not under the mouse) is painted from the table's geometry and
two style options made once per repaint (one for step rows, one for header and note rows, which
Qt paints disabled), its cells read in one call (``TimelineItemModel.paint_row``). A plain step
row's (not flipped or cleared) text, status and latency cells are drawn from their pictures
(``CellPictures``: one ``drawPixmap``) once pictured, else straight (``drawText``; the delegate's
``paint_status_at`` / ``paint_latency_at``), its chips through ``TimelineDelegate.paint_cell``;
header, note, flipped and cleared rows through ``paint_cell`` with the shared option moved to
the cell; the status strips last (over their cells, as the delegate paints them). The rows with
state are left to ``QTableView.paintEvent`` itself (a paint event over their rows alone), so
selection, hover and focus look exactly as Qt draws them.

Only in the case it was written for (``can_paint``): the Fusion style (its row panel is empty
for a cell neither selected nor alternate), no grid, no alternating colours, no hidden rows,
left to right, the view enabled, the ``TimelineItemModel`` and ``TimelineDelegate``. Anything
else takes Qt's path. tests/app/timeline/test_row_painter.py compares the two pixel for pixel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QRegion
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QTableView

from inspector.app.theme import status_colour
from inspector.app.timeline.cell_pictures import (
    NOT_PICTURED,
    PENDING,
    UNKNOWN,
    CellPictures,
    Paint,
)
from inspector.app.timeline.timeline_delegate import (
    _ALIGN_BITS,
    _STEP,
    TimelineDelegate,
    latency_bar_width,
)
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel
from inspector.reports.timeline_cells import PaintCell

if TYPE_CHECKING:
    from collections.abc import Iterable

_TEXT_ROLE = QPalette.ColorRole.Text
_ENABLED = QStyle.StateFlag.State_Enabled
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


def _ratio(painter: QPainter) -> tuple[int, float, float] | None:
    """(scale, dx, dy) of the painter's logical-to-device transform when it is a whole-number
    scale and a translation by whole device pixels; else None (no pictures then)."""
    m = painter.deviceTransform()
    scale = m.m11()
    if m.m12() or m.m21() or scale != m.m22() or scale < 1 or scale != int(scale):
        return None
    if m.dx() != int(m.dx()) or m.dy() != int(m.dy()):
        return None
    return int(scale), m.dx(), m.dy()


# What a step row's cell is, by column (a row with none of its own state, not flipped or
# cleared): a line of text, the status dot and words, the latency bar and text, or chips.
_TEXT, _DOT, _BAR, _CHIPS = range(4)
# The columns whose texts recur down a run (CellPictures.wanted's ``lasting``); a step's number
# and output preview are its own.
_LASTING = frozenset(
    int(c) for c in (Column.ATTEMPT, Column.KIND, Column.STATUS, Column.TOKENS, Column.LATENCY)
)
_KINDS = tuple(
    _DOT
    if c == Column.STATUS
    else _BAR
    if c == Column.LATENCY
    else _CHIPS
    if c in (Column.VERDICTS, Column.MARKERS)
    else _TEXT
    for c in Column
)


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
    colour = step_option.palette.color(_TEXT_ROLE)
    margin = delegate.text_margin(step_option)
    elided, cached = delegate.elided, delegate.cached_elisions
    paint_cell = delegate.paint_cell
    status_at, latency_at = delegate.paint_status_at, delegate.paint_latency_at
    palette = step_option.palette
    dark = delegate.dark(palette)  # and the latency track's colour made
    bar = palette.color(QPalette.ColorRole.Highlight)  # latency_bar_colour, not selected
    read, is_step = model.paint_row, model.step_at
    painter = QPainter(viewport)
    hints = painter.renderHints()
    pictures: CellPictures | None = getattr(table, "pictures", None)
    ratio = _ratio(painter)
    background = viewport.palette().brush(viewport.backgroundRole())
    if (
        pictures is None
        or ratio is None
        or not viewport.autoFillBackground()
        or background.style() != Qt.BrushStyle.SolidPattern
    ):
        pictures, scale, dx = None, 1, 0.0
        got = wanted = add = also = None
    else:
        scale, dx, _ = ratio
        state = (
            colour.rgba(),
            bar.rgba(),
            delegate.track_colour().rgba(),
            dark,
            font.key(),
            margin,
            delegate.status_words,
            hints.value,
        )
        pictures.begin(state, background.color(), scale, width)
        got, wanted, add, also = pictures.get, pictures.wanted, pictures.add, pictures.also
    # Each column, and whether it starts and ends on whole device pixels (pictures need it).
    placed = [
        (c, x, w, _KINDS[c], _whole(x * scale + dx) and _whole(w * scale)) for c, x, w in columns
    ]
    painted_columns = {c for c, _, _ in columns}
    texts_made = tuple(c in painted_columns for c in range(len(_KINDS)))  # those paint_row makes

    def text_paint(shown: str, inner: int, height: int, right: bool) -> Paint:
        def paint(p: QPainter) -> None:  # the plain cell's drawText, the cell at 0, 0
            p.setRenderHints(hints)
            p.setPen(colour)
            p.setFont(font)
            p.drawText(margin, 0, inner, height, _ALIGN_BITS[right], shown)

        return paint

    def rich_paint(cell: PaintCell, cell_width: int, height: int, status: bool) -> Paint:
        def paint(p: QPainter) -> None:  # the delegate's, antialiased, the cell at 0, 0
            p.setRenderHints(hints)
            p.setRenderHint(_ANTIALIASING, True)
            if status:
                status_at(p, (0, 0, cell_width, height), cell, dark, colour, font, metrics)
            else:
                latency_at(p, (0, 0, cell_width, height), cell, bar, colour, font)

        return paint

    painted = 0
    strips: list[tuple[str, int, int, int]] = []  # drawn last: over their step cells' text
    try:
        pen_set = False
        for row in range(top, bottom + 1):
            y, height = table.rowViewportPosition(row), table.rowHeight(row)
            if row in skip:
                left_for_qt += QRect(0, y, width, height)
                continue
            painted += len(placed)
            cells = read(row, texts_made)
            first = cells[0]
            if first is None:
                continue
            if first.header or first.note or first.flips or first.cleared:  # the delegate's
                option = step_option if is_step(row) else other_option
                for column, x, cell_width, _, _ in placed:
                    option.rect = QRect(x, y, cell_width, height)
                    paint_cell(painter, option, cells[column], column)  # type: ignore[arg-type]
                pen_set = False  # what it set is restored, or its own
                continue
            # y and the height are whole logical px: whole device px at a whole scale and
            # translation (_ratio), so a row's pictures go where its cells are
            row_whole = got is not None
            for column, x, cell_width, kind, x_whole in placed:
                cell = cells[column]
                if kind == _CHIPS:
                    if cell.verdicts or cell.markers:  # type: ignore[union-attr]
                        step_option.rect = QRect(x, y, cell_width, height)
                        paint_cell(painter, step_option, cell, column)  # type: ignore[arg-type]
                        pen_set = False
                    continue  # no chip: the delegate would draw nothing
                text = cell.text  # type: ignore[union-attr]
                if kind == _TEXT:
                    if column == _STEP:
                        strips.append((cell.status, x, y, height))  # type: ignore[union-attr]
                    if not text:
                        continue
                    right = cell.right  # type: ignore[union-attr]
                    inner = cell_width - 2 * margin
                    shown = cached.get((text, inner)) or elided(metrics, text, inner)
                    key: tuple[object, ...] = (shown, cell_width, height, right)  # as shown
                else:
                    status = cell.status  # type: ignore[union-attr]
                    if kind == _DOT:
                        key = (column, status, text, cell_width, height)
                    else:
                        filled = latency_bar_width(cell_width, cell.fraction)  # type: ignore[union-attr]
                        key = (column, text, filled, cell_width, height)
                if row_whole and x_whole:
                    entry = got(key, UNKNOWN)  # type: ignore[misc]
                    if entry is PENDING:
                        also(key, x, y)  # type: ignore[misc]
                        continue
                    if entry is UNKNOWN and wanted(key, column in _LASTING):  # type: ignore[misc]
                        if kind == _TEXT:
                            paint = text_paint(shown, inner, height, right)
                        else:
                            paint = rich_paint(cell, cell_width, height, kind == _DOT)  # type: ignore[arg-type]
                        if add(key, x, y, cell_width, height, paint, kind != _TEXT):  # type: ignore[misc]
                            continue
                    elif entry is None:
                        continue  # it inks nothing
                    elif entry is not UNKNOWN and entry is not NOT_PICTURED:
                        px, py, page, sx, sy, sw, sh = entry  # type: ignore[misc]
                        painter.drawPixmap(x + px, y + py, page, sx, sy, sw, sh)
                        continue
                if kind == _TEXT:  # TimelineDelegate._paint_plain, with what it read made once
                    if not pen_set:
                        painter.setPen(colour)
                        painter.setFont(font)
                        pen_set = True
                    painter.drawText(x + margin, y, inner, height, _ALIGN_BITS[right], shown)
                    continue
                # The delegate's rich path without its save/restore: clipped to the cell,
                # antialiased, then both undone for the plain cells.
                painter.setClipRect(x, y, cell_width, height)
                painter.setRenderHint(_ANTIALIASING, True)
                rect = (x, y, cell_width, height)
                if kind == _DOT:
                    status_at(painter, rect, cell, dark, colour, font, metrics)  # type: ignore[arg-type]
                else:
                    latency_at(painter, rect, cell, bar, colour, font)  # type: ignore[arg-type]
                painter.setRenderHint(_ANTIALIASING, False)
                painter.setClipping(False)
                pen_set = False
        if pictures is not None:
            pictures.finish(painter)
        strip_colours: dict[str, QColor] = {}  # TimelineDelegate.paint_strip's, made once
        for status, x, y, height in strips:
            strip_colour = strip_colours.get(status)
            if strip_colour is None:
                strip_colour = strip_colours[status] = status_colour(status, dark)
            painter.fillRect(x, y + 1, 3, height - 2, strip_colour)
    finally:
        painter.end()
        table.cells_painted += painted  # type: ignore[attr-defined]
    return left_for_qt


def _whole(value: float) -> bool:
    return value == int(value)
