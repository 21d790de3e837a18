"""The "Flips" tab: the verdicts a re-validation changed (run, step, validator, before → after,
the new reason), a summary line in the CLI's wording, and — when every run of the scenario was
re-validated — the pass/fail matrix of ``agent-inspector revalidate --scenario``.

Activating a flip (click, Enter) emits ``flipActivated(run_id, step)``; the dock selects that
step in the timeline when the run is the one shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.validators.revalidation import RevalidationResult
from inspector.core.revalidate import Revalidation
from inspector.reports.revalidate_text import accepted_text, format_matrix

Index = QModelIndex | QPersistentModelIndex


class FlipColumn(IntEnum):
    RUN = 0
    STEP = 1
    VALIDATOR = 2
    CHANGE = 3
    REASON = 4


_HEADERS = ("Run", "Step", "Validator", "Before → after", "Reason now")
RUN_STEP_ROLE = Qt.ItemDataRole.UserRole + 1  # (run_id, step)


@dataclass(frozen=True)
class FlipRow:
    run_id: str
    step: int
    validator: str
    before: str | None
    after: str | None
    reason: str  # the new verdict's reason ("" when the validator no longer judges the step)


def flip_rows(result: Revalidation) -> list[FlipRow]:
    reasons = {(v.step, v.validator): v.reason for v in result.verdicts}
    return [
        FlipRow(
            result.run_id,
            f.step,
            f.validator,
            f.before,
            f.after,
            reasons.get((f.step, f.validator), ""),
        )
        # New and dropped verdicts are listed after the flips, and spelled as such (change_text).
        for f in [*result.flips, *result.new_verdicts, *result.dropped_verdicts]
    ]


def change_text(before: str | None, after: str | None) -> str:
    """``fail → pass``; ``new: pass`` for a validator that judges the step only now;
    ``dropped (was fail)`` for one that no longer does."""
    if before is None:
        return f"new: {after or '-'}"
    if after is None:
        return f"dropped (was {before})"
    return f"{before} → {after}"


def _flips(count: int) -> str:
    return f"{count} flip{'s' * (count != 1)}" if count else "no verdict flips"


def summary_line(result: RevalidationResult) -> str:
    """One run: ``3 flips in run abc · accepted output: step 4 as recorded, step 2 now``;
    several: ``5 flips in 2 of 3 runs of sms · 1 passes now (2 as recorded)``."""
    if len(result.runs) == 1 and result.matrix is None:
        run = result.runs[0]
        return (
            f"{_flips(len(run.flips))} in run {run.run_id} · {run.outputs} output(s) re-judged, "
            f"no model call · accepted output: {accepted_text(run.accepted_before)} as recorded, "
            f"{accepted_text(run.accepted_after)} now"
        )
    runs = len(result.runs)
    flipped = sum(1 for r in result.runs if r.flips)
    before = sum(1 for r in result.runs if r.accepted_before is not None)
    now = sum(1 for r in result.runs if r.accepted_after is not None)
    text = f"{_flips(result.flips)}"
    if result.flips:
        text += f" in {flipped} of {runs} run{'s' * (runs != 1)}"
    else:
        text += f" in {runs} run{'s' * (runs != 1)}"
    text += f" of {result.scenario} · {now} pass{'es' * (now == 1)} now ({before} as recorded)"
    if result.errors:
        text += f" · {len(result.errors)} could not be re-validated"
    return text


class FlipsItemModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[FlipRow] = []

    def set_rows(self, rows: list[FlipRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row(self, row: int) -> FlipRow:
        return self._rows[row]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(FlipColumn)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[section] if 0 <= section < len(_HEADERS) else None
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        column = index.column()
        if role == RUN_STEP_ROLE:
            return (row.run_id, row.step)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == FlipColumn.RUN:
                return row.run_id
            if column == FlipColumn.STEP:
                return str(row.step)
            if column == FlipColumn.VALIDATOR:
                return row.validator
            if column == FlipColumn.CHANGE:
                return change_text(row.before, row.after)
            if column == FlipColumn.REASON:
                return row.reason
        if role == Qt.ItemDataRole.ToolTipRole and column == FlipColumn.REASON and row.reason:
            return row.reason
        if role == Qt.ItemDataRole.TextAlignmentRole and column == FlipColumn.STEP:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


RESIZE_PRECISION = 50  # rows looked at when a column is sized to its contents


class FlipsView(QWidget):
    flipActivated = Signal(str, int)  # run_id, step

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("Save a validator to re-validate the recorded outputs.", self)
        self.summary.setObjectName("flipsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = FlipsItemModel(self)
        self.table = QTableView(self)
        self.table.setObjectName("flipsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # Sizing a column to its contents asks every row's data (1,000 flips: 180 ms on the UI
        # thread, bench/editor.py); the first rows tell the widths well enough.
        header.setResizeContentsPrecision(RESIZE_PRECISION)
        self._sized = False  # the columns were sized to the flips once
        self.table.clicked.connect(self._activated)
        self.table.activated.connect(self._activated)
        self.matrix = QPlainTextEdit(self)
        self.matrix.setObjectName("flipsMatrix")
        self.matrix.setReadOnly(True)
        self.matrix.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.matrix.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.matrix.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.matrix, 1)

    def show_result(self, result: RevalidationResult) -> None:
        rows = [row for run in result.runs for row in flip_rows(run)]
        self.model.set_rows(rows)
        if rows and not self._sized:
            # Once, from the first rows (see __init__): every save re-validates, and sizing
            # again each time was most of the UI thread's work per save (bench/editor.py);
            # the columns hold run ids, step numbers and validator names: alike from save to
            # save, and the user may have resized them.
            self._sized = True
            for column in (
                FlipColumn.RUN,
                FlipColumn.STEP,
                FlipColumn.VALIDATOR,
                FlipColumn.CHANGE,
            ):
                self.table.resizeColumnToContents(column)
        lines = [summary_line(result), *result.errors]
        self.summary.setText("\n".join(lines))
        if result.matrix is not None:
            self.matrix.setPlainText(format_matrix(result.matrix))
            self.matrix.show()
        else:
            self.matrix.clear()
            self.matrix.hide()

    def show_message(self, text: str) -> None:
        """Nothing re-validated (yet): why, instead of the flips."""
        self.model.set_rows([])
        self.summary.setText(text)
        self.matrix.clear()
        self.matrix.hide()

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            run_id, step = index.data(RUN_STEP_ROLE)
            self.flipActivated.emit(run_id, step)
