"""The window's colours: whether the palette is dark, and the colour of each step, verdict and
marker status in a light or a dark palette. Any feature may use these; none defines its own."""

from __future__ import annotations

import functools

from PySide6.QtGui import QColor, QPalette

# (light, dark) per step status or verdict status.
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "success": ("#2f855a", "#68d391"),
    "pass": ("#2f855a", "#68d391"),
    "failed_validation": ("#c53030", "#fc8181"),
    "fail": ("#c53030", "#fc8181"),
    "error": ("#c05621", "#f6ad55"),
    "validator_error": ("#c05621", "#f6ad55"),  # a broken validator: the error colour
    "empty": ("#b7791f", "#ecc94b"),
    "pending": ("#2b6cb0", "#63b3ed"),
    "cancelled": ("#718096", "#a0aec0"),
    "interrupted": ("#718096", "#a0aec0"),
    "marker": ("#6b46c1", "#b794f4"),
    "cleared": ("#718096", "#a0aec0"),
    "flip": ("#d53f8c", "#f687b3"),
}


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


@functools.lru_cache(maxsize=128)
def status_colour(status: str, dark: bool) -> QColor:
    """The colour of a step status, verdict status or tag, for a light or dark palette (one
    shared QColor per pair, asked for by every painted cell: do not change it)."""
    light, dark_colour = STATUS_COLOURS.get(status, STATUS_COLOURS["cancelled"])
    return QColor(dark_colour if dark else light)


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved a fraction ``t`` of the way towards ``b``."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )
