"""The centre pane: the outcome of one run (``OutcomeHeader``) above its step timeline (a
``QTableView`` over ``TimelineItemModel``) with a "Show cleared attempts" toggle, and a line
saying what the toggle hides (with a link to show it) whenever it hides something.

The shell calls ``show_run`` with a ``LiveRun`` and, while it streams, ``on_event`` after the run
applied each event. Selecting a row (mouse, Up/Down, ``select_step``) emits ``stepSelected``
with the 1-based step index. Built for 100,000 rows: fixed row heights, no per-row widgets, no
column sizing from contents. On a narrow page the In/out, Latency, Kind, Markers and then Att.
columns are dropped (in that order), and then Status shows only its dot (its words in the
tooltip), before Output gets under ``MIN_OUTPUT`` pixels: the answer and the note rows (reasons,
feedback) keep the width.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QEvent, QItemSelection, QObject, QTimer, Signal
from PySide6.QtGui import QFontMetricsF, QMouseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.timeline.outcome_header import OutcomeHeader
from inspector.app.timeline.text_fit import DIGITS
from inspector.app.timeline.timeline_delegate import TimelineDelegate
from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel
from inspector.app.timeline.timeline_table import TimelineTable
from inspector.app.widgets.status_line import StatusLine
from inspector.core.events import AttemptCleared, Event, RunFinished, StepStarted
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip

# Initial column widths in average character widths; Output takes the remaining space.
_WIDTHS = {
    Column.STEP: 4,
    Column.ATTEMPT: 4,
    Column.KIND: 8,
    Column.STATUS: 20,
    Column.VERDICTS: 22,
    Column.MARKERS: 12,
    Column.TOKENS: 10,
    Column.LATENCY: 10,
}
MIN_OUTPUT = 220  # px: narrower, and a column of DROPPED goes first
# In this order; the Markers chips go late (their words are the note rows' and the headers'),
# Att. last (the attempt header above the step names its attempt).
DROPPED = (Column.TOKENS, Column.LATENCY, Column.KIND, Column.MARKERS, Column.ATTEMPT)
STATUS_DOT = 32  # px: the Status column with its dot alone, once every column of DROPPED went
FOLLOW_MS = 50  # a streaming run is followed (scroll, selection, summary) at most this often


class TimelineView(QWidget):
    stepSelected = Signal(int)
    # following a streaming run: see _init_follow
    following: bool
    _summary_wanted: bool
    _select_wanted: bool
    _stick: int | None
    _newest_followed: int
    _follow_timer: QTimer
    follow_turn: Callable[[Callable[[], None]], None] | None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TimelineItemModel(self)
        self.table = TimelineTable(self)  # appended rows repaint only where they show
        self.table.setObjectName("timelineTable")
        self.table.setModel(self.model)
        self.delegate = TimelineDelegate(self.table)
        self.table.setItemDelegate(self.delegate)
        self._widths: dict[Column, int] = {}  # of every column but Output, hidden ones too
        self._step_digits = 0  # of the largest step number ``#`` was fitted to
        self._fitting = False  # the widths set while fitting are not the user's
        self._reselecting = False
        self._configure_table()
        self.outcome = OutcomeHeader(self)

        self.show_cleared_box = QCheckBox("Show cleared attempts", self)
        self.show_cleared_box.setChecked(True)
        self.show_cleared_box.setToolTip(
            "Cleared attempts were shown to the end user while streaming, then removed. "
            "Hide them to see what the end user was left with."
        )
        self.show_cleared_box.toggled.connect(self.set_show_cleared)
        self.summary = StatusLine("", self)  # changes every follow: never relays the window out
        self.hidden_line = QLabel(self)
        self.hidden_line.setObjectName("timelineHiddenLine")
        self.hidden_line.setWordWrap(True)
        self.hidden_line.setContentsMargins(8, 2, 8, 4)
        self.hidden_line.linkActivated.connect(lambda _link: self.set_show_cleared(True))
        self.hidden_line.hide()

        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 4)
        title = QLabel("<b>Steps</b>", self)
        bar.addWidget(title)
        bar.addSpacing(8)
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.show_cleared_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.outcome)
        layout.addLayout(bar)
        layout.addWidget(self.hidden_line)
        layout.addWidget(self.table, 1)

        self.model.modelReset.connect(self._after_reset)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.horizontalHeader().sectionResized.connect(self._column_resized)
        self.table.installEventFilter(self)
        self.table.viewport().installEventFilter(self)  # a click on a note selects its step
        self._init_follow()

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
        vertical.setDefaultSectionSize(_row_height(table))
        horizontal = table.horizontalHeader()
        horizontal.setHighlightSections(False)
        horizontal.setStretchLastSection(False)
        horizontal.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        horizontal.setSectionResizeMode(Column.OUTPUT, QHeaderView.ResizeMode.Stretch)
        horizontal.setMinimumSectionSize(STATUS_DOT)
        char = table.fontMetrics().averageCharWidth()
        for column, width in _WIDTHS.items():
            self._widths[column] = width * char + 12
            table.setColumnWidth(column, self._widths[column])

    # -- interface the shell uses ---------------------------------------------------------

    def show_run(self, run: LiveRun) -> None:
        self.outcome.show_run(run)
        self.model.show_run(run)
        self._step_digits = 0
        self._fit_step_numbers(run.steps[-1].index if run.steps else 0)

    def steps_filled(self) -> None:
        """The shown run, opened from its light read, has its full steps now (same rows)."""
        self.model.steps_filled()
        self.outcome.refresh()

    def on_event(self, event: Event) -> None:
        """Applies ``event``; the summary and the scroll to the newest row follow at most every
        ``FOLLOW_MS`` (a repaint each), at once for ``RunFinished`` and ``AttemptCleared``."""
        if isinstance(event, StepStarted | RunFinished | AttemptCleared):
            self._want_follow()  # before the rows grow: whether the view is at the bottom
        self.model.on_event(event)
        self.outcome.on_event(event)
        if isinstance(event, StepStarted):
            self._fit_step_numbers(event.index)
        if isinstance(event, RunFinished | AttemptCleared):
            self.follow_now()

    def follow_newest(self) -> None:
        """A step started: select the newest step at the next follow, unless the user has
        selected another step than the newest one by then."""
        self._select_wanted = True
        self._want_follow()

    def follow_now(self) -> None:
        """Does the pending follow now: summary, scroll to the bottom if the view was there
        and the user did not scroll since, select the newest step if wanted."""
        self._follow_timer.stop()
        if self._summary_wanted:
            self._summary_wanted = False
            self._update_summary()
        bar, stick = self.table.verticalScrollBar(), self._stick
        self._stick = None
        if stick is not None and bar.value() == stick:
            self.table.scrollToBottom()
        if self._select_wanted:
            self._select_wanted = False
            if self.selected_step() in (0, self._newest_followed):
                self.following = True
                try:
                    self.select_last()
                finally:
                    self.following = False
        steps = self.model.run.steps
        self._newest_followed = steps[-1].index if steps else 0

    def set_flips(self, flips: dict[int, list[Flip]]) -> None:
        """Highlights the steps whose verdicts flipped on re-validation ({} clears them), a
        note row under each flipped step; the selected step stays selected."""
        selected = self.selected_step()
        self.model.set_flips(flips)
        if selected and self.selected_step() != selected:  # the rows were rebuilt
            self._reselecting = True  # the same step: nothing for the step detail to redo
            try:
                self.select_step(selected)
            finally:
                self._reselecting = False

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
                self._newest_followed = live.index
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

    def _init_follow(self) -> None:
        self.following = False  # True while the view selects the newest step by itself
        self._summary_wanted = self._select_wanted = False
        self._stick = None  # the scroll bar at the bottom when a follow was wanted
        self._newest_followed = 0  # the newest step at the last follow: selected, it follows
        self._follow_timer = QTimer(self)
        self._follow_timer.setSingleShot(True)
        self._follow_timer.setInterval(FOLLOW_MS)
        self._follow_timer.timeout.connect(self._follow_due)
        self.model.modelReset.connect(self._drop_follow)  # another run, or the rows rebuilt
        # Where a due follow runs: the shell's EventPacer.alone, a turn without events (the
        # follow repaints the timeline's rows); None: at once.
        self.follow_turn = None

    def _follow_due(self) -> None:
        if self.follow_turn is None:
            self.follow_now()
        else:
            self.follow_turn(self.follow_now)

    def _want_follow(self) -> None:
        self._summary_wanted = True
        if self._stick is None:
            bar = self.table.verticalScrollBar()
            if bar.value() >= bar.maximum():
                self._stick = bar.value()
        if not self._follow_timer.isActive():
            self._follow_timer.start()

    def _drop_follow(self) -> None:
        self._follow_timer.stop()
        self._stick, self._select_wanted, self._summary_wanted = None, False, False

    def _after_reset(self) -> None:
        # No setSpan per attempt header (10,000 attempts: tens of ms, and every span is looked
        # up again while scrolling): each header cell paints its slice of the row's header.
        self._update_summary()

    def _on_selection(self, selected: QItemSelection, deselected: QItemSelection) -> None:
        if self._reselecting:
            return
        indexes = selected.indexes()
        if indexes:
            step = self.model.step_at(indexes[0].row())
            if step:
                self.stepSelected.emit(step)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table and event.type() == QEvent.Type.Resize:
            assert isinstance(event, QResizeEvent)
            self._fit_columns(event.size().width())
        elif watched is self.table and event.type() == QEvent.Type.FontChange:
            # rows as tall, and the step numbers as wide, as the new font makes them
            self.table.verticalHeader().setDefaultSectionSize(_row_height(self.table))
            self._widen_step_column()
        elif (
            watched is self.table.viewport()
            and event.type() == QEvent.Type.MouseButtonRelease
            and isinstance(event, QMouseEvent)
        ):
            note = self.model.note_at(self.table.rowAt(event.position().toPoint().y()))
            if note is not None:  # notes are not selectable: the click means their step
                self.select_step(note[0])
        return super().eventFilter(watched, event)

    def _fit_columns(self, width: int) -> None:
        """Hides In/out, Latency, Kind, Markers, Att. in turn while Output would be under
        ``MIN_OUTPUT``, then narrows Status to its dot; undoes it when there is room. Note rows
        start at Kind, else at Status."""
        table = self.table
        width -= 2 * table.frameWidth()
        bar = table.verticalScrollBar()
        if bar.isVisible():
            width -= bar.width()
        fixed = sum(self._widths.values())
        hidden: set[Column] = set()
        for column in DROPPED:
            if width - fixed >= MIN_OUTPUT:
                break
            hidden.add(column)
            fixed -= self._widths[column]
        dot_only = width - fixed < MIN_OUTPUT and len(hidden) == len(DROPPED)
        self._fitting = True
        try:
            for column in DROPPED:
                if table.isColumnHidden(column) != (column in hidden):
                    table.setColumnHidden(column, column in hidden)
                    if column not in hidden:
                        table.setColumnWidth(column, self._widths[column])
            if self.delegate.status_words == dot_only:
                self.delegate.status_words = not dot_only
                status = self._widths[Column.STATUS]
                table.setColumnWidth(Column.STATUS, STATUS_DOT if dot_only else status)
                self.model.set_header(Column.STATUS, "" if dot_only else None)
        finally:
            self._fitting = False
        start = int(Column.STATUS if Column.KIND in hidden else Column.KIND)
        if self.delegate.note_column != start:
            self.delegate.note_column = start
            table.viewport().update()

    def _fit_step_numbers(self, newest: int) -> None:
        """Widens ``#`` as a run's step numbers gain a digit, so that they read whole ("1024",
        not "10…", from 1,000 on); a width the user set stays until the next digit."""
        digits = len(str(max(newest, 1)))
        if digits <= self._step_digits:
            return
        self._step_digits = digits
        self._widen_step_column()

    def _widen_step_column(self) -> None:
        """Widens ``#`` to show ``_step_digits`` digits whole in the table's font now (a larger
        font, the user's or the system's, needs more room); never narrows it."""
        digits, table = self._step_digits, self.table
        if not digits:
            return
        # TimelineDelegate.text_margin's rule (QCommonStyle's), without an item's option
        margin = table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table)
        # unrounded: QFontMetrics rounds a digit's 11.44 px to 11, short by 2 px in five
        metrics = QFontMetricsF(table.fontMetrics())
        widest = max(metrics.horizontalAdvance(digit) for digit in DIGITS)
        needed = math.ceil(widest * digits) + 2 * (margin + 1) + 2
        if needed > self._widths[Column.STEP]:
            self._widths[Column.STEP] = needed
            table.setColumnWidth(Column.STEP, needed)
            self._fit_columns(table.width())

    def _column_resized(self, column: int, old: int, new: int) -> None:
        """A width the user set is the one a column comes back with."""
        key = Column(column)
        if self._fitting or (key == Column.STATUS and not self.delegate.status_words):
            return
        if key in self._widths and new > 0 and not self.table.isColumnHidden(column):
            self._widths[key] = new

    def _update_hidden_line(self) -> None:
        """Says what "Show cleared attempts" hides, with a link to show it; with every attempt
        hidden, that the blank timeline is not an empty run."""
        attempts, cleared = self.model.attempt_counts()
        if self.model.show_cleared or not cleared:
            self.hidden_line.hide()
            return
        link = '<a href="show-cleared">Show cleared attempts</a>'
        if self.model.rowCount() == 0:
            if attempts == 1:
                what = "its only attempt was cleared (a streaming UI showed it, then removed it)"
            else:
                what = (
                    f"all {attempts} attempts were cleared (a streaming UI showed them, "
                    "then removed them)"
                )
            text = f"Nothing to show: {what}, and cleared attempts are hidden. {link}"
        else:
            text = f"{cleared} cleared attempt{'s' * (cleared != 1)} hidden. {link}"
        self.hidden_line.setText(text)
        self.hidden_line.show()

    def _update_summary(self) -> None:
        steps = len(self.model.run.steps)
        attempts, cleared = self.model.attempt_counts()
        parts = [f"{steps:,} step" + ("" if steps == 1 else "s")]
        if attempts:
            parts.append(f"{attempts} attempt" + ("" if attempts == 1 else "s"))
        if cleared:
            parts.append(f"{cleared} cleared")
        self.summary.setText(" · ".join(parts))
        self._update_hidden_line()


def _row_height(table: QTableView) -> int:
    """A timeline row's height in the table's font."""
    return table.fontMetrics().height() + 10
