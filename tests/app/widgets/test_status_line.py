"""StatusLine: a new text repaints the line without asking its parent's layout again (a font
change does); cut text ends in "…" with the whole text as tooltip and accessible name."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QAccessible, QColor, QFont, QHelpEvent, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QToolTip, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from inspector.app.widgets.status_line import StatusLine
from tests.helpers.qt_events import LayoutRequests


def in_window(qtbot: QtBot, line: StatusLine, width: int = 400) -> QWidget:
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    layout.addWidget(line)
    layout.addStretch(1)
    window.resize(width, 120)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    return window


def test_a_new_text_repaints_without_a_relayout_a_new_font_relays_out(qtbot: QtBot) -> None:
    line = StatusLine("4 steps · 3 attempts")
    window = in_window(qtbot, line)
    requests = LayoutRequests(window)
    height = line.height()
    for steps in range(5, 40):
        line.setText(f"{steps} steps · 3 attempts")
        QApplication.processEvents()
    assert requests.count == 0 and line.height() == height
    assert line.text() == line.accessibleName() == "39 steps · 3 attempts"
    font = QFont(line.font())
    font.setPointSize(font.pointSize() * 2)
    line.setFont(font)
    QApplication.processEvents()
    assert requests.count >= 1 and line.height() > height


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # the offscreen tooltip
def test_a_cut_text_shows_whole_as_its_tooltip(qtbot: QtBot) -> None:
    text = "Step 12 · attempt 3 · failed validation · forced: tool_choice none, " * 3
    line = StatusLine(text)
    _window = in_window(qtbot, line, width=200)
    line.repaint()
    assert line.is_elided()
    help_event = QHelpEvent(QEvent.Type.ToolTip, QPoint(5, 5), line.mapToGlobal(QPoint(5, 5)))
    QApplication.sendEvent(line, help_event)
    assert QToolTip.text() == text
    line.setText("short")
    line.repaint()
    assert not line.is_elided()


def test_rich_text_is_drawn_and_named_in_plain_words(qtbot: QtBot) -> None:
    line = StatusLine('<b>Step 4</b> · <span style="color:#1a7f37">success</span>')
    _window = in_window(qtbot, line)
    line.repaint()
    assert line.plain_text() == line.accessibleName() == "Step 4 · success"
    assert not line.is_elided()
    for step in range(5, 50):  # a streaming run's titles: none is kept once replaced
        line.setText(f"<b>Step {step}</b>")
        line.repaint()
    assert line.findChildren(QTextDocument) == [] and line.plain_text() == "Step 49"


def test_a_wrapped_line_relays_out_only_for_another_number_of_lines(qtbot: QtBot) -> None:
    line = StatusLine("Running: step 1 of attempt 1.", wrap=True, plain=True)
    window = in_window(qtbot, line, width=300)
    requests = LayoutRequests(window)
    one_line = line.height()
    line.setText("Running: step 2 of attempt 1.")
    QApplication.processEvents()
    assert requests.count == 0
    line.setText("The model's answer was accepted on attempt 3, after 2 rejected attempts. " * 2)
    QApplication.processEvents()
    assert requests.count >= 1 and line.height() > one_line


def test_a_growing_field_widens_only_past_its_widest_text(qtbot: QtBot) -> None:
    line = StatusLine("9.8 s", grow=True)
    window = in_window(qtbot, line)
    requests = LayoutRequests(window)
    line.setText("9.9 s")
    line.setText("1.0 s")
    QApplication.processEvents()
    assert requests.count == 0
    line.setText("12 min 34 s")
    QApplication.processEvents()
    assert requests.count >= 1
    assert line.width() >= line.fontMetrics().horizontalAdvance("12 min 34 s")


def test_its_text_is_drawn_in_the_palettes_text_colour(qtbot: QtBot) -> None:
    """A dark palette (light text) reaches plain and rich lines as it reaches a QLabel."""
    line = StatusLine("4 steps · 3 attempts")
    rich = StatusLine("<b>Step 4</b> · attempt 1", wrap=True)
    window = in_window(qtbot, line)
    window.layout().insertWidget(1, rich)
    dark = QPalette(window.palette())
    dark.setColor(QPalette.ColorRole.Window, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#f0f0f0"))
    window.setPalette(dark)
    QApplication.processEvents()
    for widget in (line, rich):
        image = widget.grab().toImage()
        colours = {
            image.pixelColor(x, y).name()
            for x in range(image.width())
            for y in range(image.height())
        }
        assert "#f0f0f0" in colours, widget.text()


def test_announced_as_static_text_named_by_its_plain_words(qtbot: QtBot) -> None:
    line = StatusLine("<b>Step 4</b> · attempt 3")
    window = in_window(qtbot, line)  # kept: the line is its child
    interface = QAccessible.queryAccessibleInterface(line)
    assert interface is not None
    assert interface.role() == QAccessible.Role.StaticText  # a bare QWidget: Role.Client
    line.setText("Step 5 · attempt 3")
    assert interface.text(QAccessible.Text.Name) == "Step 5 · attempt 3"
    assert window.isVisible()


@pytest.mark.parametrize("size", [9.0, 10.0, 11.5, 13.0])
def test_a_growing_field_shows_its_text_whole(qtbot: QtBot, size: float) -> None:
    """Sized from whole-pixel advances, the status bar's tokens read "0 in · 0 out toke…" at
    1400 px wide: the text's real advance is a fraction of a pixel wider."""
    line = StatusLine("", grow=True)
    font = QFont(line.font())
    font.setPointSizeF(size)
    line.setFont(font)
    cut = []
    for text in ("0 in · 0 out tokens", "1,234 in · 567 out tokens", "12 min 34 s", "0.0 s"):
        line.setText(text)
        line.resize(line.sizeHint())
        line.grab()  # painted at the width its layout would give it
        if line.is_elided():
            cut.append(text)
    assert cut == []
