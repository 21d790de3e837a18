"""Recorded runs, newest first, one row per ``RunSummary`` from the store."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer

from inspector.app.runtime.releaser import release_soon
from inspector.app.widgets.icons import status_icon
from inspector.reports.labels import words
from inspector.reports.run_differences import differences
from inspector.store import RunSummary

_Index = QModelIndex | QPersistentModelIndex
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Status", "Scenario", "Differs", "Started", "Steps", "Tokens", "Duration", "Run")
STATUS, SCENARIO, DIFFERS, STARTED, STEPS, TOKENS, DURATION, RUN = range(len(COLUMNS))
REPLAY_MARK = "↻"
VIA_BADGE = {"proxy": "via proxy"}  # a run's ``via`` → the badge after its scenario


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
    scenario = f"{REPLAY_MARK} {run.scenario}" if run.replay_of else run.scenario
    if run.via:
        scenario += f" · {VIA_BADGE.get(run.via, f'via {run.via}')}"
    return (
        status_text(run),
        scenario,
        differences(run.overrides, run.replay_of),  # beside the scenario: runs of one differ here
        started_text(run.started_at),
        str(run.steps),
        f"{run.input_tokens} → {run.output_tokens}",
        duration_text(run.duration_ms),
        run.run_id,
    )


class RunsItemModel(QAbstractTableModel):
    """Newest first. Kept oldest first inside, so a new run is an append and a run's position
    never moves: ``merge_newest`` adds or updates the few runs that just started or ended
    without re-reading or re-laying out the whole list (100,000 runs took seconds).

    ``set_runs`` shows the newest ``CHUNK`` runs at once and the older ones ``CHUNK`` rows
    more per event-loop turn (rows inserted at the bottom): listing 100,000 runs in one
    reset held the UI thread ~54 ms (the view and the filter proxy go over every row)."""

    CHUNK = 1_000

    def __init__(self) -> None:
        super().__init__()
        self._runs: list[RunSummary] = []  # oldest first
        self._cells: dict[int, tuple[str, ...]] = {}  # position -> cells, made when first shown
        self._position: dict[str, int] = {}  # run_id -> position, positions >= _indexed only
        self._indexed = 0  # positions below are not in _position yet (the oldest runs)
        self._shown = 0  # rows shown: the newest runs, _runs[len - shown:]
        self._more = QTimer(self)
        self._more.setSingleShot(True)
        self._more.setInterval(0)  # the next event-loop turn
        self._more.timeout.connect(self.show_more)

    @property
    def listing(self) -> bool:
        """Older runs are still to be shown (a chunk per event-loop turn)."""
        return self._shown < len(self._runs)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._shown

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
        if not index.isValid() or not 0 <= index.row() < self._shown:
            return None
        position = len(self._runs) - 1 - index.row()
        run, column = self._runs[position], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            cells = self._cells.get(position)
            if cells is None:
                cells = self._cells[position] = run_cells(run)
            return cells[column]
        if role == Qt.ItemDataRole.DecorationRole and column == STATUS:
            return status_icon(run.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"{run.scenario} · run {run.run_id}\n{run.status}"
                + (f", ended by {words(run.termination)}" if run.termination else "")
                + f"\n{run.steps} step{'s' * (run.steps != 1)}, {duration_text(run.duration_ms)}"
                + f"\n{run.provider} / {run.model}"
                + (f"\n{REPLAY_MARK} replay of {run.replay_of}" if run.replay_of else "")
                + (f"\nrecorded {VIA_BADGE.get(run.via, run.via)}" if run.via else "")
                + "".join(f"\n--set {o}" for o in run.overrides)
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (STEPS, TOKENS, DURATION):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == RUN_ID_ROLE:
            return run.run_id
        return None

    def set_runs(self, runs: list[RunSummary]) -> None:
        """Replaces the list (the store gives it newest first): its newest ``CHUNK`` runs now,
        the others in the next event-loop turns."""
        self.beginResetModel()
        old = (self._runs, self._cells, self._position)
        self._runs = runs[::-1]
        self._cells, self._position, self._indexed = {}, {}, len(self._runs)
        self._shown = min(self.CHUNK, len(self._runs))
        self._index_down_to(len(self._runs) - self._shown)  # 100,000 at once: ~0.1 s here
        self.endResetModel()
        for items in old:  # 100,000 summaries freed here held the UI thread ~40 ms
            release_soon(items)
        if self.listing:
            self._more.start()

    def show_more(self) -> None:
        """Shows the next ``CHUNK`` older runs (rows at the bottom); again next turn if more."""
        first = self._shown
        count = min(self.CHUNK, len(self._runs) - first)
        if count <= 0:
            return
        self._index_down_to(len(self._runs) - first - count)
        self.beginInsertRows(QModelIndex(), first, first + count - 1)
        self._shown += count
        self.endInsertRows()
        if self.listing:
            self._more.start()

    def merge_newest(self, newest: list[RunSummary]) -> bool:
        """Takes in the store's newest runs (newest first): rows of known runs are updated,
        new runs are added on top. False, changing nothing, when a new run is not newer than
        every run listed (an import of an old run): then the list must be read again."""
        for run in newest:  # an old run not indexed yet (a short list, while listing)?
            if (
                run.run_id not in self._position
                and self._indexed
                and (run.started_at <= self._runs[self._indexed].started_at)
            ):
                self._index_down_to(0)
                break
        known = [r for r in newest if r.run_id in self._position]
        new = [r for r in newest if r.run_id not in self._position][::-1]  # oldest first
        top = self._runs[-1].started_at if self._runs else ""
        if new and new[0].started_at < top:
            return False
        for run in known:
            position = self._position[run.run_id]
            if self._runs[position] != run:
                self._runs[position] = run
                self._cells.pop(position, None)
                row = len(self._runs) - 1 - position
                if row < self._shown:
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        if new:
            self.beginInsertRows(QModelIndex(), 0, len(new) - 1)
            for run in new:
                self._position[run.run_id] = len(self._runs)
                self._runs.append(run)
            self._shown += len(new)
            self.endInsertRows()
        return True

    def _index_down_to(self, position: int) -> None:
        """Puts the runs from ``position`` up in ``_position`` (newest first, as shown)."""
        runs, index = self._runs, self._position
        for at in range(self._indexed - 1, max(position, 0) - 1, -1):
            index[runs[at].run_id] = at
        self._indexed = min(self._indexed, max(position, 0))

    def run(self, row: int) -> RunSummary:
        return self._runs[len(self._runs) - 1 - row]

    def runs(self) -> list[RunSummary]:
        return self._runs[::-1]

    def row_of(self, run_id: str) -> int:
        """The run's row, or -1 (not listed, or not shown yet)."""
        position = self._position.get(run_id)
        row = -1 if position is None else len(self._runs) - 1 - position
        return row if row < self._shown else -1
