"""The step timeline as a flat, virtualised table: one row per step, under one header row per
attempt, and under a step one note row per line the terminal timeline prints under it (its
forced request, each failed verdict's reason, a validator error, a flip, the feedback injected:
``reports/step_notes.py``).

Scale (100,000 steps): the only per-row state is two ``array('q')`` of ints — ``_rows`` (row →
step index; ``-attempt`` for a header row; ``index + k << 32`` for the step's k-th note row) and
``_row_of`` (step index → row, -1 when hidden) — and a small dict per attempt. A note row's
text is built only when it is painted. Cell data is read straight from the ``LiveRun``'s own
steps when the view asks for a visible cell. Live events append rows with ``beginInsertRows``
and update only the rows they touch (a step's note rows come and go as its verdicts, feedback
and record arrive).

Cleared steps (failed candidates a streaming UI showed and then removed) are shown dimmed by
default; ``set_show_cleared(False)`` hides them, and an attempt header whose steps are all
hidden goes with them.

Re-validation marks the steps whose verdicts flipped: ``set_flips({step: [Flip, ...]})`` (a dict
of the flipped steps only), read back through ``TimelineRole.FLIPS`` and shown as note rows;
showing another run clears it.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)

from inspector.app.timeline.timeline_columns import (  # Column, HEADERS, roles: importable here
    _RIGHT_ALIGNED,
    HEADERS,
    Column,
    TimelineRole,
    display,
    note_data,
    step_cells,
    tooltip,
)
from inspector.app.timeline.timeline_rows import NOTE as _NOTE
from inspector.app.timeline.timeline_rows import Attempt as _Attempt
from inspector.app.timeline.timeline_rows import LightLayout, take, take_light
from inspector.core.events import (
    AttemptCleared,
    Event,
    FallbackUsed,
    FeedbackInjected,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    VerdictsReady,
)
from inspector.core.lazy_steps import light_rows
from inspector.core.live import LiveRun, LiveStep
from inspector.core.revalidate import Flip
from inspector.reports.step_notes import Note, StepNotes, note_count
from inspector.reports.timeline_cells import CLEARED_TIP, PaintCell, Previews, forced_markers

Index = QModelIndex | QPersistentModelIndex
__all__ = ["HEADERS", "NOTE_COLUMN", "Column", "TimelineItemModel", "TimelineRole"]


# Plain ints for the per-cell paths (reading an enum member, len(Column), costs there).
_COLUMNS = len(Column)
_STEP, _ATTEMPT, _KIND, _STATUS, _OUTPUT, _VERDICTS, _MARKERS, _TOKENS, _LATENCY = map(int, Column)

# A note row's entry in ``_rows``: its step's index plus k * _NOTE for the step's k-th note.
_MASK = _NOTE - 1
NOTE_COLUMN = Column.OUTPUT  # the column whose display role is a note row's text
REBUILD_FLIPS = 64  # more steps than this gaining or losing flip notes: one reset instead


_PAINT = int(TimelineRole.PAINT)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_NO_FLAGS = Qt.ItemFlag.NoItemFlags
_STEP_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class TimelineItemModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._run = LiveRun()
        self._show_cleared = True
        self._rows = array("q")
        self._row_of = array("q", [-1])  # index 0 unused: steps are 1-based
        self._attempts: dict[int, _Attempt] = {}
        self._known = 0  # steps of the run this model has taken in
        self._max_latency = 0.0
        self._flips: dict[int, list[Flip]] = {}  # step index -> its flips (flipped steps only)
        self._previews = Previews()
        self._notes = StepNotes()
        self._headers = dict(HEADERS)  # what the column headers say now (``set_header``)
        self._prepared: LightLayout | None = None  # ``prepare``: the next light run's rows

    # -- public API -------------------------------------------------------------------------

    @property
    def run(self) -> LiveRun:
        return self._run

    @property
    def show_cleared(self) -> bool:
        return self._show_cleared

    def show_run(self, run: LiveRun) -> None:
        self.beginResetModel()
        self._run = run
        self._flips = {}  # they were the other run's
        self._rebuild()
        self.endResetModel()

    def prepare(self, layout: LightLayout) -> None:
        """The rows of the light run about to be shown, laid out on a worker thread
        (``lay_out_light``): its ``show_run`` adopts them if nothing they depend on changed."""
        self._prepared = layout

    def set_flips(self, flips: dict[int, list[Flip]]) -> None:
        """Marks the steps whose verdicts flipped on re-validation ({} clears the marks); each
        flip is a note row under its step, inserted or removed in place (past
        ``REBUILD_FLIPS`` steps whose notes changed, the rows are rebuilt once instead)."""
        changed = set(self._flips) | set(flips)
        self._flips = {step: list(f) for step, f in flips.items() if f}
        moves = []  # (row, step index, notes shown, notes now) of the steps whose count changed
        for step in changed:
            row = self.row_of_step(step)
            if row >= 0:
                have = self._notes_shown(row)
                want = note_count(self._run.steps[step - 1], self._flips.get(step, ()))
                if want != have:
                    moves.append((row, step, have, want))
        if len(moves) > REBUILD_FLIPS:
            self.beginResetModel()
            self._rebuild()
            self.endResetModel()
            return
        self._move_notes(sorted(moves))
        rows = [r for r in map(self.row_of_step, changed) if r >= 0]
        if len(rows) > 64:  # thousands of flipped steps: one signal over their span
            last = max(rows)
            last += self._notes_shown(last)
            self.dataChanged.emit(self.index(min(rows), 0), self.index(last, _COLUMNS - 1), [])
            return
        for row in sorted(rows):
            self._row_changed(row)
            self._notes_changed(row)

    def _move_notes(self, moves: list[tuple[int, int, int, int]]) -> None:
        """Inserts or removes note rows after each (row, step, have, want), in row order; the
        steps' rows are renumbered once at the end (views read rows, not ``_row_of``)."""
        if not moves:
            return
        shift = 0
        for row, step, have, want in moves:
            first = row + shift + have + 1
            if want > have:
                added = array("q", (step + n * _NOTE for n in range(have + 1, want + 1)))
                self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
                self._rows[first:first] = added
                self.endInsertRows()
            else:
                first = row + shift + want + 1
                self.beginRemoveRows(QModelIndex(), first, row + shift + have)
                del self._rows[first : row + shift + have + 1]
                self.endRemoveRows()
            shift += want - have
        self._renumber(moves[0][0])

    def set_show_cleared(self, show: bool) -> None:
        if show == self._show_cleared:
            return
        self.beginResetModel()
        self._show_cleared = show
        self._rebuild()
        self.endResetModel()

    def row_of_step(self, index: int) -> int:
        """The row showing step ``index`` (1-based), or -1 (unknown, or hidden as cleared)."""
        return self._row_of[index] if 0 < index < len(self._row_of) else -1

    def step_at(self, row: int) -> int:
        """The step index shown on ``row``; 0 for an attempt header or a note row."""
        entry = self._rows[row]
        return entry if 0 < entry <= _MASK else 0

    def note_at(self, row: int) -> tuple[int, Note] | None:
        """(its step's index, the note) of a note row, else None."""
        entry = self._rows[row] if 0 <= row < len(self._rows) else 0
        if entry <= _MASK:
            return None
        note = self._note(entry)
        return None if note is None else (entry & _MASK, note)

    def note_rows(self, index: int) -> range:
        """The rows of step ``index``'s notes (empty when it has none or is hidden)."""
        row = self.row_of_step(index)
        if row < 0:
            return range(0)
        return range(row + 1, row + 1 + self._notes_shown(row))

    def header_rows(self, first: int = 0, last: int | None = None) -> list[int]:
        """Rows in ``first..last`` that are attempt headers (few: one per attempt)."""
        stop = len(self._rows) if last is None else last + 1
        rows = map(self._row_of_header, self._attempts)
        return [row for row in rows if row >= 0 and first <= row < stop]

    def attempt_counts(self) -> tuple[int, int]:
        """(attempts, attempts with a cleared step) of the run so far."""
        return len(self._attempts), sum(1 for a in self._attempts.values() if a.cleared)

    def on_event(self, event: Event) -> None:
        """Call after ``run.apply(event)``: updates only the rows the event touched."""
        if isinstance(event, RunFinished):
            self._resync()
        elif isinstance(event, StepStarted):
            self._take_new_steps()
        elif isinstance(event, RunStarted | FallbackUsed):
            return
        else:
            index = event.step.index if isinstance(event, StepFinished) else event.index
            if index > self._known:
                self._take_new_steps()
            self._step_changed(index, event)

    # -- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else _COLUMNS

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < _COLUMNS:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._headers[Column(section)]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADERS[Column(section)]
        return None

    def set_header(self, column: Column, text: str | None) -> None:
        """What ``column``'s header says (None: its name, as in ``HEADERS``)."""
        text = HEADERS[column] if text is None else text
        if self._headers[column] != text:
            self._headers[column] = text
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, column, column)

    def flags(self, index: Index) -> Qt.ItemFlag:
        # Asked twice per painted cell: module constants, no enum arithmetic here.
        if not index.isValid() or not 0 < self._rows[index.row()] <= _MASK:
            return _NO_FLAGS  # headers and notes are not selectable: Up/Down skip them
        return _STEP_FLAGS

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry = self._rows[index.row()]
        if role == _PAINT:
            return self.paint_cell(index.row(), index.column())
        if entry < 0:
            return self._header_data(-entry, index.column(), role)
        if entry > _MASK:
            return self._note_data(entry, index.column(), role)
        return self._step_data(self._run.steps[entry - 1], index.column(), role)

    def paint_cell(self, row: int, column: int) -> PaintCell | None:
        """``TimelineRole.PAINT`` of a cell, for the delegate to call directly: through
        ``index.data()`` the call goes into Qt and back into Python, ~5 us of each cell."""
        entry = self._rows[row]
        if entry < 0:
            return self._paint_header(-entry)
        if entry > _MASK:
            note = self._note(entry)
            if note is None:
                return None
            live = self._run.steps[(entry & _MASK) - 1]
            return PaintCell(note.text, live.status, live.cleared, note=note.kind)
        return self._paint_cell(self._run.steps[entry - 1], column)

    def paint_row(self, row: int, shown: Sequence[bool] = ()) -> tuple[PaintCell | None, ...]:
        """``paint_cell`` of each column of ``row`` in one call (``step_cells``' ``shown``)."""
        entry = self._rows[row]
        if entry < 0 or entry > _MASK:
            return (self.paint_cell(row, 0),) * _COLUMNS
        live = self._run.steps[entry - 1]
        flips, fraction = self._flips.get(live.index, ()), self._latency_fraction(live)
        return step_cells(live, self._previews, flips, live.index in self._flips, fraction, shown)

    # -- cell data --------------------------------------------------------------------------

    def _header_data(self, attempt: int, column: int, role: int) -> Any:
        info = self._attempts.get(attempt)
        if info is None:
            return None
        if role == TimelineRole.IS_HEADER:
            return True
        if role == TimelineRole.ATTEMPT:
            return attempt
        if role == TimelineRole.STEP_INDEX:
            return 0
        if role == TimelineRole.CLEARED:
            return info.cleared
        if role == TimelineRole.STATUS:
            return self._run.steps[info.last - 1].status
        if role == Qt.ItemDataRole.DisplayRole and column == Column.STEP:
            count = info.last - info.first + 1
            steps = f"{count} step" + ("" if count == 1 else "s")
            return f"Attempt {attempt} · {steps}" + (" · cleared" if info.cleared else "")
        if role == Qt.ItemDataRole.ToolTipRole and info.cleared:
            return CLEARED_TIP
        return None

    def _note_data(self, entry: int, column: int, role: int) -> Any:
        note = self._note(entry)
        live = self._run.steps[(entry & _MASK) - 1]
        return None if note is None else note_data(note, live, column == NOTE_COLUMN, role)

    def _note(self, entry: int) -> Note | None:
        index = entry & _MASK
        flips = self._flips.get(index, ())
        return self._notes.of(self._run.steps[index - 1], flips, entry >> 32)

    def _step_data(self, live: LiveStep, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return display(live, column, self._previews, live.index in self._flips)
        if role == TimelineRole.IS_HEADER:
            return False
        if role == TimelineRole.STEP_INDEX:
            return live.index
        if role == TimelineRole.ATTEMPT:
            return live.attempt
        if role == TimelineRole.STATUS:
            return live.status
        if role == TimelineRole.CLEARED:
            return live.cleared
        if role == TimelineRole.FLIPS:
            return self._flips.get(live.index)
        if role == TimelineRole.VERDICTS:
            return list(live.verdicts)
        if role == TimelineRole.MARKERS:
            return forced_markers(live.forced)
        if role == TimelineRole.LATENCY_FRACTION:
            return self._latency_fraction(live)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(live, column, self._flips.get(live.index, ()))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _RIGHT_ALIGNED:
            return _RIGHT
        return None

    def _paint_header(self, attempt: int) -> PaintCell | None:
        info = self._attempts.get(attempt)
        if info is None:
            return None
        text = self._header_data(attempt, _STEP, Qt.ItemDataRole.DisplayRole) or ""
        return PaintCell(text, self._run.steps[info.last - 1].status, info.cleared, header=True)

    def _paint_cell(self, live: LiveStep, column: int) -> PaintCell:
        flips = self._flips.get(live.index, ())
        status, cleared = live.status, live.cleared
        if column == _VERDICTS:
            return PaintCell("", status, cleared, False, False, flips, live.verdicts)
        if column == _MARKERS:
            markers = forced_markers(live.forced)
            return PaintCell("", status, cleared, False, False, flips, (), markers)
        text = display(live, column, self._previews, live.index in self._flips) or ""
        if column == _LATENCY:
            fraction = self._latency_fraction(live)
            return PaintCell(text, status, cleared, False, False, flips, (), (), fraction)
        return PaintCell(text, status, cleared, False, column in _RIGHT_ALIGNED, flips)

    def _latency_fraction(self, live: LiveStep) -> float | None:
        latency = live.step.latency_ms if live.step is not None else None
        if latency is None or self._max_latency <= 0:
            return None
        return min(1.0, latency / self._max_latency)

    # -- row bookkeeping --------------------------------------------------------------------

    def _visible(self, live: LiveStep) -> bool:
        return self._show_cleared or not live.cleared

    def _rebuild(self) -> None:
        steps = self._run.steps
        self._notes = StepNotes()
        self._rows = array("q")
        self._row_of = array("q", [-1]) * (len(steps) + 1)
        self._attempts = {}
        self._max_latency = 0.0
        light = light_rows(self._run)
        prepared, self._prepared = self._prepared, None
        if (
            light is not None
            and prepared is not None
            and prepared.light is light
            and prepared.show_cleared == self._show_cleared
            and not self._flips
        ):  # laid out on a worker thread: the same rows take_light gives
            self._rows, self._attempts = prepared.rows, prepared.attempts
            self._row_of, self._max_latency = prepared.row_of, prepared.slowest
        elif light is not None:  # a long stored run's first paint: its steps built when read
            state = (self._attempts, self._row_of, self._show_cleared, self._flips)
            self._max_latency = take_light(light, steps, self._rows, *state)
        else:
            self._take(steps, self._rows, last_attempt=0, base=0)
        self._known = len(steps)

    def _take(
        self, new_steps: Sequence[LiveStep], rows: array[int], last_attempt: int, base: int
    ) -> None:
        """Appends rows for ``new_steps`` (the run's next steps) to ``rows`` (``take``)."""
        state = (self._attempts, self._row_of, self._show_cleared, self._max_latency)
        self._max_latency = take(new_steps, rows, last_attempt, base, *state, self._flips)

    def steps_filled(self) -> None:
        """The shown light run's full steps replaced its built-when-read ones
        (``LiveRun.fill``): the same rows, repainted (nothing is laid out again)."""
        self._known = len(self._run.steps)
        if self._rows:
            last = self.index(len(self._rows) - 1, _COLUMNS - 1)
            self.dataChanged.emit(self.index(0, 0), last, [])

    def _last_attempt(self) -> int:
        if not self._rows:
            return 0
        entry = self._rows[-1]
        return -entry if entry < 0 else self._run.steps[(entry & _MASK) - 1].attempt

    def _take_new_steps(self) -> None:
        steps = self._run.steps
        if len(steps) <= self._known:
            return
        new_steps = steps[self._known :]
        self._row_of.extend([-1] * len(new_steps))
        first = len(self._rows)
        max_before = self._max_latency
        added: array[int] = array("q")
        self._take(new_steps, added, self._last_attempt(), base=first)
        self._known = len(steps)
        if added:
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            self._rows.extend(added)
            self.endInsertRows()
        if self._max_latency != max_before:
            self._latency_column_changed()

    def _note_latency(self, live: LiveStep) -> bool:
        latency = live.step.latency_ms if live.step is not None else None
        if latency is not None and latency > self._max_latency:
            self._max_latency = latency
            return True
        return False

    def _latency_column_changed(self) -> None:
        if self._rows:
            last = len(self._rows) - 1
            self.dataChanged.emit(
                self.index(0, Column.LATENCY), self.index(last, Column.LATENCY), []
            )

    def _step_changed(self, index: int, event: Event) -> None:
        live = self._run.step(index)
        if live is None:
            return
        info = self._attempts.get(live.attempt)
        if info is not None and live.cleared and not info.cleared:
            info.cleared = True
            self._row_changed(self._row_of_header(live.attempt))
        if isinstance(event, AttemptCleared) and not self._show_cleared:
            self._hide_step(index)
            return
        row = self._row_of[index]
        if row < 0:
            return
        if isinstance(event, TextDelta):
            cell = self.index(row, Column.OUTPUT)
            self.dataChanged.emit(cell, cell, [Qt.ItemDataRole.DisplayRole])
            return
        self._row_changed(row)
        if isinstance(event, VerdictsReady | FeedbackInjected | StepFinished):
            self._sync_notes(live, row)
        if isinstance(event, StepFinished):
            if self._note_latency(live):
                self._latency_column_changed()
            header = self._row_of_header(live.attempt)
            if header >= 0:
                self._row_changed(header)

    def _row_changed(self, row: int) -> None:
        if 0 <= row < len(self._rows):
            self.dataChanged.emit(self.index(row, 0), self.index(row, _COLUMNS - 1), [])

    def _row_of_header(self, attempt: int) -> int:
        info = self._attempts.get(attempt)
        if info is None:
            return -1
        for index in range(info.first, info.last + 1):
            row = self._row_of[index]
            if row >= 0:
                return row - 1 if row > 0 and self._rows[row - 1] == -attempt else -1
        return -1

    def _hide_step(self, index: int) -> None:
        row = self._row_of[index]
        if row < 0:
            return
        first, last = row, row + self._notes_shown(row)
        attempt = -self._rows[row - 1] if row > 0 and self._rows[row - 1] < 0 else 0
        after = self._rows[last + 1] if last + 1 < len(self._rows) else 0
        after_is_step_of_same = 0 < after <= _MASK and self._run.steps[after - 1].attempt == attempt
        if attempt and not after_is_step_of_same:
            first = row - 1  # the header goes too: nothing of the attempt is left to show
        self.beginRemoveRows(QModelIndex(), first, last)
        del self._rows[first : last + 1]
        self._row_of[index] = -1
        self._renumber(first)
        self.endRemoveRows()

    def _renumber(self, first: int) -> None:
        """``_row_of`` of the steps from row ``first`` on, after rows were added or removed
        before them (a live run's changes are at its end: a few rows)."""
        rows, row_of = self._rows, self._row_of
        for pos in range(first, len(rows)):
            entry = rows[pos]
            if 0 < entry <= _MASK:
                row_of[entry] = pos

    def _notes_shown(self, row: int) -> int:
        """How many note rows follow the step row ``row``."""
        rows, step = self._rows, self._rows[row]
        count, end = 0, len(rows)
        while row + count + 1 < end and rows[row + count + 1] == step + (count + 1) * _NOTE:
            count += 1
        return count

    def _sync_notes(self, live: LiveStep, row: int) -> None:
        """Adds or removes the note rows of the step on ``row`` after its verdicts, feedback
        or final record arrived; the notes kept are repainted (their text may have changed)."""
        index = live.index
        have = self._notes_shown(row)
        want = note_count(live, self._flips.get(index, ()))
        if want > have:
            first = row + have + 1
            added = array("q", (index + n * _NOTE for n in range(have + 1, want + 1)))
            self.beginInsertRows(QModelIndex(), first, first + len(added) - 1)
            self._rows[first:first] = added
            self._renumber(first + len(added))
            self.endInsertRows()
        elif want < have:
            first = row + want + 1
            self.beginRemoveRows(QModelIndex(), first, row + have)
            del self._rows[first : row + have + 1]
            self._renumber(first)
            self.endRemoveRows()
        self._notes_changed(row)

    def _notes_changed(self, row: int) -> None:
        count = self._notes_shown(row)
        if count:
            last = _COLUMNS - 1
            self.dataChanged.emit(self.index(row + 1, 0), self.index(row + count, last), [])

    def _resync(self) -> None:
        """After ``RunFinished`` the run's steps are the record's: refresh every row, and
        rebuild when the visible set changed (late ``cleared`` flags, steps never streamed)."""
        steps = self._run.steps
        if self._run.resynced == [] and self._known == len(steps):  # every step as streamed
            if self._rows:  # the record's status may show: repaint, rows unchanged (O(1))
                last = self.index(len(self._rows) - 1, _COLUMNS - 1)
                self.dataChanged.emit(self.index(0, 0), last, [])
            return
        expected = array("q")
        saved = (self._row_of, self._attempts, self._max_latency)
        self._row_of = array("q", [-1]) * (len(steps) + 1)
        self._attempts, self._max_latency = {}, 0.0
        self._take(steps, expected, last_attempt=0, base=0)
        if expected != self._rows:
            self._row_of, self._attempts, self._max_latency = saved
            self.beginResetModel()
            self._rebuild()
            self.endResetModel()
            return
        self._known = len(steps)
        if self._rows:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._rows) - 1, _COLUMNS - 1), []
            )
