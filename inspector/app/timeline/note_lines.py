"""A note row's text as the timeline paints it: one line, or two when the row was made tall.

A note (a failed verdict's reason, a forced marker, a provider error…) that does not fit on one
line at the width the timeline gives it is elided there once, and its row asks the table to
make it two lines tall (``TimelineTable.wrap_note``, once per row: heights are not measured per
paint). A two-line row shows the note wrapped at a space, its second line elided when even two
lines are not enough (the tooltip and the Step dock have all of it).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView

from inspector.app.timeline.text_fit import fits

_ELIDE = Qt.TextElideMode.ElideRight
_VCENTRE = Qt.AlignmentFlag.AlignVCenter
NOTE_INDENT = 10  # a note's text starts this far right of its column's edge
ELLIPSIS = "…"
KEPT = 1024  # lines of the notes painted last kept (a page or two of notes, many times over)
_shown: dict[tuple[str, int, bool, str], tuple[str, ...]] = {}


def note_lines(metrics: QFontMetrics, text: str, width: int, two: bool) -> tuple[str, ...]:
    """``text`` as painted in ``width``: itself when it fits, else elided on one line (``two``
    False) or wrapped on two, the second elided."""
    if len(text) * metrics.averageCharWidth() <= width * 0.8 or fits(metrics, text, width):
        return (text,)
    elided = metrics.elidedText(text, _ELIDE, width)
    if not two:
        return (elided,)
    kept = len(elided) - 1 if elided.endswith(ELLIPSIS) else len(elided)
    space = text.rfind(" ", 0, kept + 1)
    if space > kept // 2:  # a word break not too far back
        first, rest = text[:space], text[space + 1 :]
    else:  # one long word: cut it where it stops fitting
        first, rest = text[:kept], text[kept:]
    return first, metrics.elidedText(rest, _ELIDE, width)


def two_line_height(one_line: int, metrics: QFontMetrics) -> int:
    """The height of a two-line note row, a one-line row being ``one_line`` high."""
    return one_line + metrics.lineSpacing()


def note_area(view: object, rect: QRect, column: int) -> QRect:
    """Where a note row's text goes in a cell at ``rect``: from ``column`` (the delegate's
    ``note_column``) to the viewport's right edge."""
    if isinstance(view, QTableView):
        left = view.columnViewportPosition(column)
        right = view.viewport().width()
    else:
        left, right = rect.left(), rect.right()
    left += NOTE_INDENT
    return QRect(left, rect.top(), max(0, right - left - 4), rect.height())


def shown_lines(option: QStyleOptionViewItem, column: int, text: str) -> tuple[str, ...]:
    """The lines a note row's cell at ``option.rect`` shows of ``text`` (kept for the next
    cells of its row and the next paints: a note is laid out once per width and font)."""
    metrics = option.fontMetrics
    two = option.rect.height() >= 2 * metrics.lineSpacing()  # a row made tall (``wrap_note``)
    width = note_area(option.widget, option.rect, column).width()
    key = (text, width, two, option.font.key())  # each cell of the row paints the same lines
    lines = _shown.get(key)
    if lines is None:
        if len(_shown) >= KEPT:
            _shown.clear()
        lines = _shown[key] = note_lines(metrics, text, width, two)
    return lines


def draw_note(painter: QPainter, option: QStyleOptionViewItem, column: int, text: str) -> None:
    """Draws a note row's ``text`` into its cell at ``option.rect`` (pen and font set); a note
    elided on a one-line row asks the table to make the row two lines tall."""
    view, rect, metrics = option.widget, option.rect, option.fontMetrics
    area = note_area(view, rect, column)
    lines = shown_lines(option, column, text)
    if len(lines) == 1:
        if (
            lines[0] != text
            and isinstance(view, QTableView)
            and rect.height() < 2 * (metrics.lineSpacing())
        ):
            wrap = getattr(view, "wrap_note", None)
            if wrap is not None:
                wrap(view.rowAt(rect.center().y()))
        painter.drawText(area, _VCENTRE, lines[0])
        return
    step = metrics.lineSpacing()
    top = area.top() + (area.height() - 2 * step) // 2
    for number, line in enumerate(lines):
        painter.drawText(area.left(), top + number * step, area.width(), step, _VCENTRE, line)
