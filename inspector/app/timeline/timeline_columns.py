"""The timeline's columns and item roles, what a step's cell says in each column (display text
and tooltip) and what a note row answers, read by ``TimelineItemModel`` when a visible cell is
painted or hovered."""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt

from inspector.core.live import LiveStep
from inspector.core.records import step_kind
from inspector.core.revalidate import Flip
from inspector.reports.labels import words
from inspector.reports.step_notes import Note
from inspector.reports.timeline_cells import (
    CLEARED_TIP,
    FLIP_LABEL,
    PaintCell,
    Previews,
    flip_line,
    forced_markers,
    output_preview,
    verdict_line,
)


class Column(IntEnum):
    STEP = 0
    ATTEMPT = 1
    KIND = 2
    STATUS = 3
    OUTPUT = 4
    VERDICTS = 5
    MARKERS = 6
    TOKENS = 7
    LATENCY = 8


# Plain ints for the per-cell paths (reading an enum member, len(Column), costs there).
_STEP, _ATTEMPT, _KIND, _STATUS, _OUTPUT, _VERDICTS, _MARKERS, _TOKENS, _LATENCY = map(int, Column)
_RIGHT_ALIGNED = frozenset((_STEP, _ATTEMPT, _TOKENS))

HEADERS = {
    Column.STEP: "#",
    Column.ATTEMPT: "Att.",
    Column.KIND: "Kind",
    Column.STATUS: "Status",
    Column.OUTPUT: "Output",
    Column.VERDICTS: "Verdicts",
    Column.MARKERS: "Markers",
    Column.TOKENS: "In / out",
    Column.LATENCY: "Latency",
}


class TimelineRole(IntEnum):
    IS_HEADER = Qt.ItemDataRole.UserRole + 1  # bool: an attempt header row
    STEP_INDEX = Qt.ItemDataRole.UserRole + 2  # int (0 on a header row)
    ATTEMPT = Qt.ItemDataRole.UserRole + 3  # int
    STATUS = Qt.ItemDataRole.UserRole + 4  # StepStatus, or the attempt's last step status
    VERDICTS = Qt.ItemDataRole.UserRole + 5  # list[Verdict]
    MARKERS = Qt.ItemDataRole.UserRole + 6  # list[tuple[label, tooltip]]
    LATENCY_FRACTION = Qt.ItemDataRole.UserRole + 7  # float in [0, 1], or None
    CLEARED = Qt.ItemDataRole.UserRole + 8  # bool
    FLIPS = Qt.ItemDataRole.UserRole + 9  # list[Flip]: the step's re-validation flips, or None
    PAINT = Qt.ItemDataRole.UserRole + 10  # PaintCell (timeline_cells): all a cell shows
    NOTE = Qt.ItemDataRole.UserRole + 11  # Note (reports/step_notes) of a note row, else None


def note_data(note: Note, live: LiveStep, text_column: bool, role: int) -> Any:
    """A note row's cell: its text (display role in the note column only; tooltip in all),
    the ``Note``, and its step's attempt, status and cleared flag; never a step index."""
    if role == TimelineRole.NOTE:
        return note
    if role == Qt.ItemDataRole.DisplayRole:
        return note.text if text_column else None
    if role == Qt.ItemDataRole.ToolTipRole:
        return note.text
    if role == TimelineRole.IS_HEADER:
        return False
    if role == TimelineRole.STEP_INDEX:
        return 0
    if role == TimelineRole.ATTEMPT:
        return live.attempt
    if role == TimelineRole.STATUS:
        return live.status
    if role == TimelineRole.CLEARED:
        return live.cleared
    return None


def display(live: LiveStep, column: int, previews: Previews, flipped: bool) -> str | None:
    """A step's cell text in ``column``."""
    step = live.step
    if column == _STEP:
        return str(live.index)
    if column == _ATTEMPT:
        return str(live.attempt)
    if column == _KIND:
        return step_kind(step) if step is not None else "pending"
    if column == _STATUS:
        return words(live.status)
    if column == _OUTPUT:
        return previews.of(live)
    if column == _VERDICTS:
        return " ".join(f"{v.validator}: {v.status}" for v in live.verdicts)
    if column == _MARKERS:
        labels = [label for label, _ in forced_markers(live.forced)]
        if live.cleared:
            labels.append("cleared")
        if flipped:
            labels.append(FLIP_LABEL)
        return " ".join(labels)
    if column == _TOKENS:
        if step is None or step.response is None:
            return ""
        usage = step.response.usage
        return f"{usage.input_tokens:,} / {usage.output_tokens:,}"
    if column == _LATENCY:
        latency = step.latency_ms if step is not None else None
        return "" if latency is None else f"{latency:,.0f} ms"
    return None


# The columns whose cell is a text, in order (step_cells); the others are chips.
_TEXT_COLUMNS = (_STEP, _ATTEMPT, _KIND, _STATUS, _OUTPUT, _TOKENS, _LATENCY)


def step_cells(
    live: LiveStep,
    previews: Previews,
    flips: Sequence[Flip],
    flipped: bool,
    fraction: float | None,
    shown: Sequence[bool] = (),
) -> tuple[PaintCell, ...]:
    """The ``PaintCell`` of each column of a step's row, in column order (the item model's
    ``paint_row``; its ``paint_cell`` gives the same one by one). ``shown``: whether each
    column is painted (the row painter's); a column that is not has no text (its text
    is not made: ~2–5 µs each)."""
    status, cleared = live.status, live.cleared
    if shown:
        texts = [
            display(live, column, previews, flipped) or "" if shown[column] else ""
            for column in _TEXT_COLUMNS
        ]
    else:
        texts = [display(live, column, previews, flipped) or "" for column in _TEXT_COLUMNS]
    step, attempt, kind, words, output, tokens, latency = texts
    return (
        PaintCell(step, status, cleared, False, True, flips),
        PaintCell(attempt, status, cleared, False, True, flips),
        PaintCell(kind, status, cleared, False, False, flips),
        PaintCell(words, status, cleared, False, False, flips),
        PaintCell(output, status, cleared, False, False, flips),
        PaintCell("", status, cleared, False, False, flips, live.verdicts),
        PaintCell("", status, cleared, False, False, flips, (), forced_markers(live.forced)),
        PaintCell(tokens, status, cleared, False, True, flips),
        PaintCell(latency, status, cleared, False, False, flips, (), (), fraction),
    )


def tooltip(live: LiveStep, column: int, flips: Sequence[Flip]) -> str | None:
    """A step's cell tooltip in ``column`` (None: none)."""
    if flips and column == _STEP:
        return "\n".join(flip_line(f) for f in flips)
    if column == _VERDICTS and live.verdicts:
        return "\n".join(verdict_line(v) for v in live.verdicts)
    if column == _MARKERS and (live.forced is not None or live.cleared or flips):
        tips = [tip for _, tip in forced_markers(live.forced)]
        if live.cleared:
            tips.append(CLEARED_TIP)
        return "\n".join([*tips, *(flip_line(f) for f in flips)])
    if column == _OUTPUT:
        return output_preview(live) or None
    if column == _STATUS:  # its words too: a narrow page shows the dot alone
        error = live.step.error if live.step is not None else None
        return f"{words(live.status)}\n{error}" if error else words(live.status)
    if column == _LATENCY and live.step is not None and live.step.ttft_ms is not None:
        return f"time to first token {live.step.ttft_ms:,.0f} ms"
    return None
