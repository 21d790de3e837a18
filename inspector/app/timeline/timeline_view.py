"""The centre pane: the step timeline of one run (a ``QTableView`` over ``TimelineItemModel``)
with a "Show cleared attempts" toggle.

The shell calls ``show_run`` with a ``LiveRun`` and, while it streams, ``on_event`` after the run
applied each event. Selecting a row (mouse, Up/Down, ``select_step``) emits ``stepSelected``
with the 1-based step index. Built for 100,000 rows: fixed row heights, no per-row widgets, no
column sizing from contents.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QModelIndex, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.timeline.timeline_delegate import TimelineDelegate
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel
from inspector.core.events import Event, RunFinished, StepStarted
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip

# Initial column widths in average character widths; Output takes the remaining space.
_WIDTHS = {
    Column.STEP: 4,
    Column.ATTEMPT: 4,
    Column.KIND: 8,
    Column.STATUS: 16,
    Column.VERDICTS: 22,
    Column.MARKERS: 12,
    Column.TOKENS: 10,
    Column.LATENCY: 10,
}


class TimelineView(QWidget):
    stepSelected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TimelineItemModel(self)
        self.table = QTableView(self)
        self.table.setObjectName("timelineTable")
        self.table.setModel(self.model)
        self.table.setItemDelegate(TimelineDelegate(self.table))
        self._configure_table()

        self.show_cleared_box = QCheckBox("Show cleared attempts", self)
        self.show_cleared_box.setChecked(True)
        self.show_cleared_box.setToolTip(
            "Cleared attempts were shown to the end user while streaming, then removed. "
            "Hide them to see what the end user was left with."
        )
        self.show_cleared_box.toggled.connect(self.set_show_cleared)
        self.summary = QLabel(self)

        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        title = QLabel("<b>Steps</b>", self)
        bar.addWidget(title)
        bar.addSpacing(8)
        bar.addWidget(self.summary)
        bar.addStretch(1)
        bar.addWidget(self.show_cleared_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.table)

        self.model.modelReset.connect(self._after_reset)
        self.model.rowsInserted.connect(self._after_insert)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)

    def _configure_table(self) -> None:
        table = self.table
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setShowGrid(False)
        table.setWordWrap(False)
        table.setAlternatingRowColors(False)
        table.setMouseTracking(True)  # tooltips per verdict chip
        table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vertical = table.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vertical.setDefaultSectionSize(table.fontMetrics().height() + 10)
        horizontal = table.horizontalHeader()
        horizontal.setHighlightSections(False)
        horizontal.setStretchLastSection(False)
        horizontal.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        horizontal.setSectionResizeMode(Column.OUTPUT, QHeaderView.ResizeMode.Stretch)
        horizontal.setMinimumSectionSize(32)
        char = table.fontMetrics().averageCharWidth()
        for column, width in _WIDTHS.items():
            table.setColumnWidth(column, width * char + 12)

    # -- interface the shell uses ---------------------------------------------------------

    def show_run(self, run: LiveRun) -> None:
        self.model.show_run(run)

    def on_event(self, event: Event) -> None:
        bar = self.table.verticalScrollBar()
        following = bar.value() >= bar.maximum()
        self.model.on_event(event)
        if isinstance(event, StepStarted | RunFinished):
            self._update_summary()
            if following:
                self.table.scrollToBottom()

    def set_flips(self, flips: dict[int, list[Flip]]) -> None:
        """Highlights the steps whose verdicts flipped on re-validation ({} clears them)."""
        self.model.set_flips(flips)

    def select_step(self, index: int) -> None:
        row = self.model.row_of_step(index)
        if row < 0:
            return
        cell = self.model.index(row, Column.STEP)
        self.table.setCurrentIndex(cell)
        self.table.scrollTo(cell)

    def select_last(self) -> None:
        for live in reversed(self.model.run.steps):
            if self.model.row_of_step(live.index) >= 0:
                self.select_step(live.index)
                return

    def set_show_cleared(self, show: bool) -> None:
        if self.show_cleared_box.isChecked() != show:
            self.show_cleared_box.setChecked(show)  # comes back here through toggled
            return
        selected = self.selected_step()
        self.model.set_show_cleared(show)
        if selected:
            self.select_step(selected)

    def selected_step(self) -> int:
        """The selected step's index, or 0."""
        current = self.table.currentIndex()
        return self.model.step_at(current.row()) if current.isValid() else 0

    # -- internals --------------------------------------------------------------------------

    def _after_reset(self) -> None:
        self.table.clearSpans()
        self._span_headers(0, self.model.rowCount() - 1)
        self._update_summary()

    def _after_insert(self, parent: QModelIndex, first: int, last: int) -> None:
        self._span_headers(first, last)

    def _span_headers(self, first: int, last: int) -> None:
        columns, set_span = len(Column), self.table.setSpan
        for row in self.model.header_rows(first, last):
            set_span(row, 0, 1, columns)

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        if indexes:
            step = self.model.step_at(indexes[0].row())
            if step:
                self.stepSelected.emit(step)

    def _update_summary(self) -> None:
        steps = len(self.model.run.steps)
        attempts, cleared = self.model.attempt_counts()
        parts = [f"{steps:,} step" + ("" if steps == 1 else "s")]
        if attempts:
            parts.append(f"{attempts} attempt" + ("" if attempts == 1 else "s"))
        if cleared:
            parts.append(f"{cleared} cleared")
        self.summary.setText(" · ".join(parts))
