"""The scenario's ``[[validators]]`` as editable rows, each checked as it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from inspector.editing.validator_rows import (
    COLUMNS,
    RowProblem,
    ValidatorRow,
    row_problem,
)

_Index = QModelIndex | QPersistentModelIndex
# A translucent red: the cell text (the palette's) stays readable on light and dark bases.
INVALID_BACKGROUND = QColor(209, 36, 47, 56)


class ValidatorsItemModel(QAbstractTableModel):
    edited = Signal()  # a row was changed, added, removed or moved by the user

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ValidatorRow] = []
        self._problems: list[RowProblem | None] = []
        self.tool_names: list[str] | None = None  # calls_tool checks against these when known
        self.base_dir = Path(".")

    # ---- contents --------------------------------------------------------------------------

    def set_tables(self, tables: list[dict[str, Any]]) -> None:
        """The validators as read from the file (row i came from table i)."""
        self.beginResetModel()
        self._rows = [ValidatorRow.from_table(t, i) for i, t in enumerate(tables)]
        self._problems = [self._check(r) for r in self._rows]
        self.endResetModel()

    def rows(self) -> list[ValidatorRow]:
        return list(self._rows)

    def set_rows(self, rows: list[ValidatorRow]) -> None:
        """Rows as ``rows()`` gave them (an edited table shown again, origins kept)."""
        self.beginResetModel()
        self._rows = list(rows)
        self._problems = [self._check(r) for r in self._rows]
        self.endResetModel()

    def tables(self) -> tuple[list[dict[str, Any]], list[int | None]]:
        """What to write back: the tables and the table each came from. ``ValueError`` when a
        row's parameters are not TOML (``problems()`` says which)."""
        return [r.to_table() for r in self._rows], [r.origin for r in self._rows]

    def problems(self) -> list[str]:
        """One line per invalid row: ``validators[1].max: Input should be ...``."""
        return [
            f"validators[{i}].{p.message}" if not p.message.startswith("not TOML")
            else f"validators[{i}] parameters: {p.message}"
            for i, p in enumerate(self._problems) if p is not None
        ]  # fmt: skip

    def check_candidate(self, row: int, column: int, text: str) -> RowProblem | None:
        """The problem row ``row`` would have with ``text`` in ``column`` (as the user types)."""
        return self._check(self._rows[row].with_cell(column, text))

    def _check(self, row: ValidatorRow) -> RowProblem | None:
        return row_problem(row, self.tool_names, self.base_dir)

    # ---- editing ---------------------------------------------------------------------------

    def insert_row(self, at: int, row: ValidatorRow | None = None) -> int:
        at = max(0, min(at, len(self._rows)))
        row = row or ValidatorRow.new()
        self.beginInsertRows(QModelIndex(), at, at)
        self._rows.insert(at, row)
        self._problems.insert(at, self._check(row))
        self.endInsertRows()
        self.edited.emit()
        return at

    def remove_row(self, at: int) -> None:
        if not 0 <= at < len(self._rows):
            return
        self.beginRemoveRows(QModelIndex(), at, at)
        del self._rows[at]
        del self._problems[at]
        self.endRemoveRows()
        self.edited.emit()

    def move_row(self, at: int, delta: int) -> int:
        """Moves row ``at`` by ``delta`` (-1 up, +1 down); returns where it is now."""
        to = at + delta
        if not (0 <= at < len(self._rows) and 0 <= to < len(self._rows)) or delta == 0:
            return at
        # Qt's destination is the row the moved one goes before, in the old numbering.
        if not self.beginMoveRows(QModelIndex(), at, at, QModelIndex(), to + (delta > 0)):
            return at
        self._rows.insert(to, self._rows.pop(at))
        self._problems.insert(to, self._problems.pop(at))
        self.endMoveRows()
        self.edited.emit()
        return to

    # ---- QAbstractTableModel ---------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        if orientation == Qt.Orientation.Vertical and 0 <= section < len(self._rows):
            return str(section + 1)  # numbered like steps and attempts: from 1
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row, column = self._rows[index.row()], index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return row.cell(column)
        problem = self._problems[index.row()]
        marked = problem is not None and problem.column == column
        if role == Qt.ItemDataRole.BackgroundRole and marked:
            return QBrush(INVALID_BACKGROUND)
        if role == Qt.ItemDataRole.ToolTipRole and marked and problem is not None:
            return problem.message
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        r = index.row()
        if not 0 <= r < len(self._rows):
            return False
        text = "" if value is None else str(value)
        if self._rows[r].cell(index.column()) == text:
            return False
        self._rows[r] = self._rows[r].with_cell(index.column(), text)
        self._problems[r] = self._check(self._rows[r])
        # A kind change may rewrite the parameters, and the marked cell may move: the whole row.
        self.dataChanged.emit(self.index(r, 0), self.index(r, len(COLUMNS) - 1))
        self.edited.emit()
        return True
