"""``TimelineTable``: the timeline's ``QTableView``, which repaints only what rows inserted move.

``QTableView`` answers any change of its row count with a layout that repaints the whole
viewport (``rowCountChanged`` → ``doItemsLayout``), even for rows added below what it shows: a
streaming run appends rows every event-loop turn, so every turn repainted every visible cell
(~200 cells, 15–70 ms with a Python delegate). Here, when the only changes since the last
layout are inserted rows, the layout updates the scroll bars and repaints from the first
inserted row down, and nothing when that row is below the viewport. Following the newest row
then scrolls the viewport, which Qt does by moving its pixels and painting the rows uncovered.
Anything else (rows removed or moved, a reset, a layout change, columns) takes Qt's full layout.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QTimer,
    SignalInstance,
)
from PySide6.QtGui import QHoverEvent, QPaintEvent
from PySide6.QtWidgets import QTableView, QWidget

from inspector.app.timeline import row_painter
from inspector.app.timeline.cell_pictures import CellPictures
from inspector.app.timeline.note_lines import two_line_height

Index = QModelIndex | QPersistentModelIndex


class TimelineTable(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._first_inserted: int | None = None  # the lowest row inserted since the last layout
        self._whole = True  # something else changed: Qt's own layout, all of it repainted
        self.full_layouts = 0  # layouts that repainted the whole viewport (tests count them)
        self.row_painting = True  # rows without state painted by row_painter (tests: False)
        self.cells_painted = 0  # cells row_painter painted (tests count them)
        self._hover = QPersistentModelIndex()  # the cell Qt's view takes as hovered
        self.pictures = CellPictures()  # cells row_painter draws as pixmaps (None: none)
        self._to_wrap: set[int] = set()  # note rows elided when painted, made tall next turn

    def setModel(self, model: QAbstractItemModel | None) -> None:
        old = self.model()
        if old is not None:
            old.rowsInserted.disconnect(self._rows_inserted)
            for signal in self._whole_changes(old):
                signal.disconnect(self._changed_whole)
        super().setModel(model)
        self._whole = True
        if model is not None:
            model.rowsInserted.connect(self._rows_inserted)
            for signal in self._whole_changes(model):
                signal.connect(self._changed_whole)

    @staticmethod
    def _whole_changes(model: QAbstractItemModel) -> tuple[SignalInstance, ...]:
        return (
            model.rowsRemoved,
            model.rowsMoved,
            model.modelReset,
            model.layoutChanged,
            model.columnsInserted,
            model.columnsRemoved,
            model.columnsMoved,
        )

    def _rows_inserted(self, parent: Index, first: int, _last: int) -> None:
        if parent.isValid():
            self._whole = True
        elif self._first_inserted is None or first < self._first_inserted:
            self._first_inserted = first

    def _changed_whole(self, *_args: object) -> None:
        self._whole = True

    def doItemsLayout(self) -> None:
        """Qt's delayed layout after a row count change (and at other times)."""
        first, whole = self._first_inserted, self._whole
        self._first_inserted, self._whole = None, False
        if whole or first is None:  # not rows inserted alone: as Qt does it
            self.full_layouts += 1
            super().doItemsLayout()
            return
        self.updateGeometries()  # the scroll bars' ranges
        viewport = self.viewport()
        top = self.rowViewportPosition(first)
        if top < 0:  # above the rows shown: they all moved down
            viewport.update()
        elif top < viewport.height():  # the rows from there down moved or are new
            viewport.update(QRect(0, top, viewport.width(), viewport.height() - top))

    def wrap_note(self, row: int) -> None:
        """A note row whose text was elided on one line: made two lines tall once the paint is
        over (``note_lines``). Rows keep the height (a model reset gives them back Qt's)."""
        if row < 0:
            return
        if not self._to_wrap:
            QTimer.singleShot(0, self, self._wrap_notes)
        self._to_wrap.add(row)

    def _wrap_notes(self) -> None:
        rows, self._to_wrap = self._to_wrap, set()
        model = self.model()
        header = self.verticalHeader()
        tall = two_line_height(header.defaultSectionSize(), self.fontMetrics())
        note_at = getattr(model, "note_at", None)
        for row in sorted(rows):
            if (
                note_at is not None
                and 0 <= row < model.rowCount()
                and note_at(row) is not None
                and self.rowHeight(row) < tall
            ):
                self.setRowHeight(row, tall)

    def viewportEvent(self, event: QEvent) -> bool:
        """Follows the hovered cell as ``QAbstractItemView.viewportEvent`` does: its row is
        painted by Qt (with the style's hover)."""
        kind = event.type()
        if kind in _HOVER_MOVES and isinstance(event, QHoverEvent):
            self._hover = QPersistentModelIndex(self.indexAt(event.position().toPoint()))
        elif kind in _HOVER_ENDS:
            self._hover = QPersistentModelIndex()
        return super().viewportEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        """The rows without state of their own in one pass (``row_painter``); Qt paints the
        others."""
        if not (self.row_painting and row_painter.can_paint(self)):
            super().paintEvent(event)
            return
        stateful = row_painter.stateful_rows(self, self._hover)
        left = row_painter.paint_rows(self, event, stateful)
        if not left.isEmpty():
            super().paintEvent(QPaintEvent(left & event.region()))


_HOVER_MOVES = frozenset((QEvent.Type.HoverEnter, QEvent.Type.HoverMove))
_HOVER_ENDS = frozenset((QEvent.Type.HoverLeave, QEvent.Type.Leave))
