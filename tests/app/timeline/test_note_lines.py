"""``note_lines``: a note row's text on one line, or wrapped on two when its row was made tall."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.timeline.note_lines import ELLIPSIS, note_lines

REASON = "✗ output: answered in plain text instead of calling the final_answer_1 tool"


def _metrics() -> QFontMetrics:
    return QFontMetrics(QApplication.font())


def test_a_note_that_fits_is_itself(qtbot: QtBot) -> None:
    metrics = _metrics()
    width = metrics.horizontalAdvance(REASON) + 2
    assert note_lines(metrics, REASON, width, two=False) == (REASON,)
    assert note_lines(metrics, REASON, width, two=True) == (REASON,)


def test_a_long_note_is_elided_on_one_line_and_whole_on_two(qtbot: QtBot) -> None:
    metrics = _metrics()
    width = metrics.horizontalAdvance(REASON) * 2 // 3
    (one,) = note_lines(metrics, REASON, width, two=False)
    assert one.endswith(ELLIPSIS)
    first, second = note_lines(metrics, REASON, width, two=True)
    assert f"{first} {second}" == REASON  # wrapped at a space, nothing lost
    assert all(metrics.horizontalAdvance(line) <= width for line in (first, second))


def test_past_two_lines_the_second_is_elided(qtbot: QtBot) -> None:
    metrics = _metrics()
    text = REASON * 4
    width = metrics.horizontalAdvance(REASON) // 2
    first, second = note_lines(metrics, text, width, two=True)
    assert text.startswith(first) and second.endswith(ELLIPSIS)
    assert metrics.horizontalAdvance(second) <= width


def test_one_long_word_is_cut_where_it_stops_fitting(qtbot: QtBot) -> None:
    metrics = _metrics()
    word = "x" * 80
    width = metrics.horizontalAdvance(word) * 2 // 3
    first, second = note_lines(metrics, word, width, two=True)
    assert first + second == word and metrics.horizontalAdvance(first) <= width
