"""A line of text as ``QFontMetrics.elidedText(text, Qt.ElideRight, width)`` shows it, with as
little text layout as the decision needs.

``elidedText`` lays the whole text out and returns it unchanged when its width (in 1/64 px)
is at most the width given; laying it out to measure it (``QFontMetricsF.horizontalAdvance``,
the same width, unrounded) is ~8 µs against ~13 µs for ``elidedText`` (``fits``). A text
holding U+009C (Qt's separator of a text's length variants) is left to ``elidedText``.

A step number is a string of ASCII digits, a new one on every row scrolled to, and is elided
in the timeline's narrow ``#`` column from 1,000 on at the default font. In a font whose ten
digits have one advance and no kerning between any two (measured once per font: 110 widths;
DejaVu's, Liberation's), a string of n digits is n advances wide, so what ``elidedText`` keeps
of it depends on n and the width alone: Qt is asked once per (n, width), with the first such
text (its width checked to be n advances), and its answer applied to the others
(``Elision.digits``): ~1 µs instead of ~20 µs of layout a row.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QFontMetricsF

_ELIDE = Qt.TextElideMode.ElideRight
DIGITS = "0123456789"


def fits(metrics: QFontMetrics, text: str, width: int) -> bool:
    """Whether ``elidedText(text, Qt.ElideRight, width)`` in ``metrics`` gives ``text``
    itself (False: it may not; ask it)."""
    return "\x9c" not in text and QFontMetricsF(metrics).horizontalAdvance(text) <= width


def even_digits(metrics: QFontMetrics) -> float | None:
    """The advance of every digit in ``metrics``' font when the ten digits have one advance
    and no pair of them is kerned; else None."""
    measure = QFontMetricsF(metrics).horizontalAdvance
    advance = measure("0")
    if advance <= 0 or any(measure(d) != advance for d in DIGITS):
        return None
    if any(measure(a + b) != 2 * advance for a in DIGITS for b in DIGITS):
        return None
    return advance


class Elision:
    """``elidedText(text, Qt.ElideRight, width)`` of the texts of one font (``clear`` when the
    font changes): measured rather than elided when it may fit, digit strings by their length
    (``digits``)."""

    def __init__(self) -> None:
        self._advance: float | None = None  # of a digit in an even font (``even_digits``)
        self._measured = False  # whether the font's digits were measured
        # (digits, width) -> (digits kept, what follows them: the ellipsis); None: all of it
        self._kept: dict[tuple[int, int], tuple[int, str] | None] = {}

    def clear(self) -> None:
        self._advance, self._measured = None, False
        self._kept.clear()

    def shown(self, metrics: QFontMetrics, text: str, width: int) -> str:
        """``text`` as ``elidedText`` shows it in ``width``."""
        if len(text) * (metrics.maxWidth() + 1) <= width:  # fits whatever its letters (rounded)
            return text
        if text.isascii() and text.isdigit():
            shown = self.digits(metrics, text, width)
            if shown is not None:
                return shown
        if fits(metrics, text, width):
            return text
        return metrics.elidedText(text, _ELIDE, width)

    def digits(self, metrics: QFontMetrics, text: str, width: int) -> str | None:
        """``text`` (ASCII digits) as ``elidedText`` shows it in ``width``; None when the
        font's digits are not even (then ask Qt)."""
        if not self._measured:
            self._advance, self._measured = even_digits(metrics), True
        advance = self._advance
        if advance is None:
            return None
        key = (len(text), width)
        if key in self._kept:
            kept = self._kept[key]
            return text if kept is None else text[: kept[0]] + kept[1]
        if QFontMetricsF(metrics).horizontalAdvance(text) != len(text) * advance:
            self._advance = None  # digits shaped otherwise in a row: never again
            return None
        shown = metrics.elidedText(text, _ELIDE, width)
        if shown == text:
            self._kept[key] = None
        else:  # the digits it kept, then the ellipsis
            count = 0
            while count < len(shown) and shown[count] == text[count : count + 1]:
                count += 1
            self._kept[key] = (count, shown[count:])
        return shown
