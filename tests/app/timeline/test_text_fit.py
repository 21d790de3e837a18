"""``Elision`` shows a text as ``QFontMetrics.elidedText(text, Qt.ElideRight, width)`` does,
digit strings from Qt's answer for their length (asked once per length and width)."""

from __future__ import annotations

import random

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.timeline import text_fit
from inspector.app.timeline.text_fit import Elision, even_digits

_ELIDE = Qt.TextElideMode.ElideRight


def fonts() -> list[QFont]:
    base = QApplication.font()
    made = [base]
    for family, size in (("DejaVu Serif", 11.0), ("DejaVu Sans Mono", 9.0), ("Sans", 17.5)):
        font = QFont(base)
        font.setFamily(family)
        font.setPointSizeF(size)
        made.append(font)
    bold = QFont(base)
    bold.setBold(True)
    return [*made, bold]


TEXTS = [
    "tool call",
    'lookup({"q": "x19962"})',
    "AV Te Wo r. fi fl",
    "12 / 4",
    "1,204 ms",
    "١٢٣",  # Arabic-Indic digits: not ASCII, asked of Qt
    "",
]


@pytest.mark.parametrize("font", range(5))
def test_shown_is_what_elided_text_gives(qtbot: QtBot, font: int) -> None:
    metrics = QFontMetrics(fonts()[font])
    elision = Elision()
    numbers = random.Random(font)
    digit_texts = [
        "".join(numbers.choice("0123456789") for _ in range(length))
        for length in range(1, 9)
        for _ in range(6)
    ]
    for width in range(0, 130, 3):
        for text in [*digit_texts, *TEXTS, "0", "0000", "99999"]:
            expected = metrics.elidedText(text, _ELIDE, width)
            assert elision.shown(metrics, text, width) == expected, (text, width)


def test_digit_strings_are_laid_out_once_per_length_and_width(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = QFontMetrics(QApplication.font())
    assert even_digits(metrics) is not None  # DejaVu Sans: tabular digits, no kerning
    asked: list[str] = []
    real = QFontMetrics.elidedText

    def counted(self: QFontMetrics, text: str, mode: Qt.TextElideMode, width: int) -> str:
        asked.append(text)
        return real(self, text, mode, width)

    monkeypatch.setattr(QFontMetrics, "elidedText", counted)
    monkeypatch.setattr(text_fit, "fits", lambda *_: pytest.fail("digits measured"))
    elision = Elision()
    width = metrics.horizontalAdvance("0000")  # 5 digits elided, 4 fit, 2 fit at once
    shown = [elision.shown(metrics, str(n), width) for n in range(10_000, 11_000)]
    assert len(asked) == 1  # 10000 laid out; the 999 others as it
    assert shown == [real(metrics, str(n), _ELIDE, width) for n in range(10_000, 11_000)]
    for text in ("1234", "12", "5678", "34"):  # another length: asked once more
        assert elision.shown(metrics, text, width) == text
    assert asked == ["10000", "1234", "12"]
    assert elision.shown(metrics, "0", 100) == "0"  # fits by the widest glyph: not asked
    assert len(asked) == 3


def test_a_new_font_is_measured_again(qtbot: QtBot) -> None:
    elision = Elision()
    small = QFontMetrics(QApplication.font())
    font = QFont(QApplication.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    large = QFontMetrics(font)
    width = small.horizontalAdvance("00000") + 1
    assert elision.shown(small, "12345", width) == "12345"
    elision.clear()  # the delegate clears it when the view's font changes
    assert elision.shown(large, "12345", width) == large.elidedText("12345", _ELIDE, width)
    assert elision.shown(large, "12345", width) != "12345"
