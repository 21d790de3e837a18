"""The backgrounds of diff lines (added green, removed red, changed yellow, filler a faint
grey) for a light or dark palette: the compare view's and the step detail's diffs alike."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QColor, QPalette, QTextBlockFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from inspector.app.theme import is_dark, mix

# kind: (light, dark) background
DIFF_COLOURS: dict[str, tuple[str, str]] = {
    "added": ("#d4f4dc", "#1f4d2b"),
    "removed": ("#fbd8d6", "#5c2626"),
    "changed": ("#fbf0c0", "#504520"),
}


def diff_colour(kind: str, palette: QPalette) -> QColor | None:
    """The background of a line of ``kind`` (None: the pane's own)."""
    if kind == "filler":
        return mix(
            palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.06
        )
    colours = DIFF_COLOURS.get(kind)
    return QColor(colours[1 if is_dark(palette) else 0]) if colours else None


TINTED_KINDS = ("added", "removed", "changed", "filler")


def fill_tinted(
    pane: QPlainTextEdit, lines: Sequence[tuple[str, str]], palette: QPalette | None = None
) -> None:
    """``lines`` (text, kind) in ``pane``, one block each, each block's background its kind's
    ``diff_colour`` in ``palette`` (the pane's when None; a ``same`` line keeps the pane's own
    background)."""
    pane.setPlainText("\n".join(text for text, _ in lines))
    palette = palette or pane.palette()
    formats: dict[str, QTextBlockFormat] = {}
    for kind in TINTED_KINDS:
        colour = diff_colour(kind, palette)
        if colour is not None:
            formats[kind] = QTextBlockFormat()
            formats[kind].setBackground(colour)
    cursor = QTextCursor(pane.document())
    cursor.beginEditBlock()
    block = pane.document().begin()
    for _, kind in lines:
        block_format = formats.get(kind)
        if block_format is not None:
            cursor.setPosition(block.position())
            cursor.setBlockFormat(block_format)
        block = block.next()
    cursor.endEditBlock()
