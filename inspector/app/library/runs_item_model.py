"""Recorded runs, newest first, one row per ``RunSummary`` from the store."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.app.widgets.icons import status_icon
from inspector.reports.labels import words
from inspector.store import RunSummary

_Index = QModelIndex | QPersistentModelIndex
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Status", "Scenario", "Started", "Steps", "Tokens", "Duration", "Run")
STATUS, SCENARIO, STARTED, STEPS, TOKENS, DURATION, RUN = range(len(COLUMNS))
REPLAY_MARK = "↻"


def started_text(started_at: str, now: datetime | None = None) -> str:
    """Local time: "14:03:27" today, "2026-01-04 14:03" on another day."""
    try:
        when = datetime.fromisoformat(started_at).astimezone()
    except ValueError:
        return started_at
    today = (now or datetime.now().astimezone()).date()
    return when.strftime("%H:%M:%S" if when.date() == today else "%Y-%m-%d %H:%M")


def duration_text(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def status_text(run: RunSummary) -> str:
    """The status and, unless it simply succeeded, what ended it: "failed · step cap" (one
    column, so that a narrow runs list still says why a run ended; "fallback", not
    "fallback · fallback")."""
    if run.termination and run.status != "succeeded" and run.termination != run.status:
        return f"{run.status} · {words(run.termination)}"
    return run.status


def run_cells(run: RunSummary) -> tuple[str, ...]:
    """The text of each column for one run (what the filter box matches, too). A replay's
    scenario starts with ↻; the tooltip names the run it replays."""
    return (
        status_text(run),
        f"{REPLAY_MARK} {run.scenario}" if run.replay_of else run.scenario,
        started_text(run.started_at),
        str(run.steps),
        f"{run.input_tokens} → {run.output_tokens}",
        duration_text(run.duration_ms),
        run.run_id,
    )


class RunsItemModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self._runs: list[RunSummary] = []
        self._cells: list[tuple[str, ...]] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._runs)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(COLUMNS)
        ):
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self._runs):
            return None
        run, column = self._runs[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][column]
        if role == Qt.ItemDataRole.DecorationRole and column == STATUS:
            return status_icon(run.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{run.scenario} · run {run.run_id}\n{run.status}"
                + (f", ended by {words(run.termination)}" if run.termination else "")
                + f"\n{run.steps} step{'s' * (run.steps != 1)}, {duration_text(run.duration_ms)}"
                + f"\n{run.provider} / {run.model}"
                + (f"\n{REPLAY_MARK} replay of {run.replay_of}" if run.replay_of else "")
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (STEPS, TOKENS, DURATION):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == RUN_ID_ROLE:
            return run.run_id
        return None

    def set_runs(self, runs: list[RunSummary]) -> None:
        """Replaces the list (the store gives it newest first)."""
        self.beginResetModel()
        self._runs = list(runs)
        self._cells = [run_cells(r) for r in self._runs]
        self.endResetModel()

    def run(self, row: int) -> RunSummary:
        return self._runs[row]

    def runs(self) -> list[RunSummary]:
        return list(self._runs)

    def row_of(self, run_id: str) -> int:
        for row, run in enumerate(self._runs):
            if run.run_id == run_id:
                return row
        return -1
