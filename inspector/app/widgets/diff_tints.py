"""The backgrounds of diff lines (added green, removed red, changed yellow, filler a faint
grey) for a light or dark palette: the compare view's and the step detail's diffs alike."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

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
