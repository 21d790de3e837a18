"""The Compare tab: 2–4 runs of one turn side by side. A heading names the runs; the grid has a
column per run and rows for the policy and scenario fields that differ, the summary and each
step (the first divergence marked ▶ and tinted); below it, what the model saw at the selected
step in each run, diffed line by line against the first run."""

from __future__ import annotations

import asyncio
import functools
import html
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import shiboken6
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.compare.compare_delegate import CompareDelegate
from inspector.app.compare.compare_item_model import (
    STEP_ROLE,
    CompareItemModel,
    divergence_reason,
)
from inspector.app.compare.compare_line_diff import LineDiffView
from inspector.app.library.runs_item_model import started_text
from inspector.core.records import RunRecord, StepRequest
from inspector.reports.compare import Comparison, compare_runs, step_at
from inspector.reports.compare_lines import LineDiff, diff_requests, rewrapped

EMPTY_TEXT = (
    "Select 2–4 runs of one turn in the runs list (Ctrl+click, Shift+click) and choose "
    "Run › Compare selected runs (Ctrl+D)."
)


def runs_heading(comparison: Comparison) -> str:
    """Rich text: one line per run (number, id, scenario, start, the run it replays)."""
    lines = []
    for number, run in enumerate(comparison.runs, start=1):
        parts = [
            f"<b>{number}</b>",
            html.escape(run.run_id),
            html.escape(run.scenario),
            f"started {html.escape(started_text(run.started_at))}",
            html.escape(f"{run.provider}/{run.model}"),
        ]
        if run.replay_of:
            parts.append(f"↻ replay of {html.escape(run.replay_of)}")
        lines.append(" · ".join(parts))
    return "<br>".join(lines)


class CompareView(QWidget):
    lineDiffShown = Signal(int)  # a step's line diff is on screen

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self.comparison: Comparison | None = None
        self._diff_asked = 0  # counts the line diffs asked for: only the last one is shown
        self._shown_diff: tuple[int, LineDiff] | None = None  # (step, its diff) on screen
        self._fit_pending = False
        self.heading = QLabel(EMPTY_TEXT)
        self.heading.setObjectName("compareHeading")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.divergence = QLabel()
        self.divergence.setObjectName("compareDivergence")
        self.divergence.setWordWrap(True)

        self.model = CompareItemModel()
        self.table = QTableView()
        self.table.setObjectName("compareGrid")
        self.table.setModel(self.model)
        self.table.setItemDelegate(CompareDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform: 1,000 rows stay cheap
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        rows.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)

        self.line_diff = LineDiffView()
        self.line_diff.shown.connect(self.lineDiffShown)
        self.line_diff.rewrap.connect(self._rewrap)
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.line_diff)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.divergence)
        layout.addWidget(split, 1)

    def show_comparison(
        self, records: Sequence[RunRecord], comparison: Comparison | None = None
    ) -> None:
        """Shows ``records`` side by side (the first is the baseline of the line diff);
        ``comparison`` is ``compare_runs(records)`` when the caller built it already (off the UI
        thread, for long runs)."""
        self.records = list(records)
        self._shown_diff = None
        self.comparison = comparison or compare_runs(self.records)
        self.model.set_comparison(self.comparison)
        self.heading.setText(runs_heading(self.comparison))
        self.divergence.setText(
            ("▶ " if self.comparison.divergence else "") + divergence_reason(self.comparison)
        )
        self.line_diff.clear("Select a step to see what the model saw in each run.")
        self._fit_pending = True
        if self.isVisible():
            self._fit_grid()
        row = self.model.divergence_row()
        if row < 0:
            row = self.model.row_of_step(1)
        if row >= 0:
            self.select_row(row)

    def _fit_grid(self) -> None:
        """A short comparison's grid takes only the height it needs, the line diff the rest; a
        long one shares the height half and half."""
        total = sum(self.split.sizes())
        if total <= 0:
            return
        self._fit_pending = False
        rows = self.table.verticalHeader().defaultSectionSize() * self.model.rowCount()
        wanted = rows + self.table.horizontalHeader().sizeHint().height() + 4
        grid = min(wanted, total // 2)
        self.split.setSizes([grid, total - grid])

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._fit_pending:  # sizes apply once the splitter has its height
            self._fit_grid()

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        step = current.data(STEP_ROLE) if current.isValid() else None
        if step is not None:
            self.show_step(int(step))

    def show_step(self, index: int, *, keep_place: bool = False) -> None:
        """Builds step ``index``'s line diff off the UI thread (a long history is thousands of
        lines), wrapped to the panes' width, and shows it unless another diff was asked for
        meanwhile. ``keep_place``: the shown diff rewrapped, staying where the user scrolled."""
        steps = [step_at(r, index) for r in self.records]
        requests: list[StepRequest | None] = [s.request if s else None for s in steps]
        titles = [
            f"{number}: {record.run_id[:8]}" + ("" if step else f" — no step {index}")
            for number, (record, step) in enumerate(zip(self.records, steps, strict=True), 1)
        ]
        self._diff_asked += 1
        asked = self._diff_asked
        if not keep_place:
            self.line_diff.title.setText(f"Comparing what the model saw at step {index}…")
        wrap = self.line_diff.wrap_width(len(requests))

        def ready(diff: LineDiff) -> None:
            self._shown_diff = (index, diff)
            self.line_diff.show_diff(index, titles, diff, keep_place=keep_place)

        shown = self._shown_diff
        job: Callable[[], LineDiff]
        if keep_place and shown is not None and shown[0] == index:
            job = functools.partial(rewrapped, shown[1], wrap)  # a new width: no diffing again
        else:
            job = functools.partial(diff_requests, requests, wrap)

        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = None
        if loop is None or not loop.is_running():
            ready(job())
            return
        future = loop.run_in_executor(None, job)
        future.add_done_callback(lambda done: self._diff_ready(asked, index, ready, done))

    def _rewrap(self, _wrap: int) -> None:
        """The panes changed width: the shown step again, wrapped to fit."""
        if self.line_diff.step is not None:
            self.show_step(self.line_diff.step, keep_place=True)

    def _diff_ready(
        self,
        asked: int,
        index: int,
        ready: Callable[[LineDiff], None],
        done: asyncio.Future[LineDiff] | Future[LineDiff],
    ) -> None:
        if done.cancelled() or asked != self._diff_asked or not shiboken6.isValid(self):
            return  # another step or comparison was asked for meanwhile, or the view is gone
        error = done.exception()
        if error is not None:
            self.line_diff.clear(f"Cannot compare step {index}: {error}")
            return
        ready(done.result())
