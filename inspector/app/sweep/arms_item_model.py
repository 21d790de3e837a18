"""The per-arm table of a sweep: one row per arm, the numbers of ``build_report`` (the same as
``agent-inspector sweep`` prints), formatted as the terminal report does."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.sweeps.model import ArmStats, SweepReport

_Index = QModelIndex | QPersistentModelIndex

HEADERS = (
    "Arm",
    "Runs",
    "Pass rate",
    "95% interval",
    "vs baseline",
    "p",
    "Attempts",
    "Cost/run",
    "Cost/accepted",
    "Pareto",
)
NAME_ROLE = Qt.ItemDataRole.UserRole + 1


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _dollars(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.5f}"


def arm_cells(arm: ArmStats) -> tuple[str, ...]:
    """The text of each column for one arm."""
    versus = arm.versus_baseline
    runs = f"{arm.runs}" + (f" (+{arm.missing} missing)" if arm.missing else "")
    return (
        arm.name,
        runs,
        _pct(arm.pass_rate),
        f"{_pct(arm.pass_interval.low)}–{_pct(arm.pass_interval.high)}" if arm.runs else "-",
        "-" if versus is None else f"{versus.difference * 100:+.0f} pts",
        "-" if versus is None else f"{versus.p_value:.3f}",
        "-" if arm.attempts.mean is None else f"{arm.attempts.mean:.2f}",
        _dollars(arm.cost.per_run),
        _dollars(arm.cost.per_accepted),
        "yes" if arm.pareto else "",
    )


class ArmsItemModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._rows: list[tuple[str, ...]] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(HEADERS)
        ):
            return HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row[index.column()]
        if role == NAME_ROLE:
            return row[0]
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def set_report(self, report: SweepReport | None) -> None:
        """Rows updated in place when the arms are the same (live updates keep the selection),
        the table reset otherwise."""
        rows = [] if report is None else [arm_cells(a) for a in report.arms]
        if [r[0] for r in rows] == [r[0] for r in self._rows] and rows:
            self._rows = rows
            last = self.index(len(rows) - 1, len(HEADERS) - 1)
            self.dataChanged.emit(self.index(0, 0), last)
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def arm_name(self, row: int) -> str:
        return self._rows[row][0]
