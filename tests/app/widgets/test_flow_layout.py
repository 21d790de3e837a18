"""A wrapping row of buttons: one line when there is room, more lines when its dock is narrow,
and a minimum width of its widest button (not of all of them)."""

from __future__ import annotations

from PySide6.QtWidgets import QPushButton, QWidget
from pytestqt.qtbot import QtBot

from inspector.app.widgets.flow_layout import flow_row


def test_buttons_wrap_instead_of_widening_their_parent(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    buttons = [QPushButton(text) for text in ("Add", "Remove", "Move up", "Move down", "Save")]
    row = flow_row(parent, *buttons)
    widest = max(b.sizeHint().width() for b in buttons)
    assert row.minimumSizeHint().width() <= widest + 1
    layout = row.layout()
    assert layout is not None
    one_line = layout.heightForWidth(2_000)
    assert one_line == max(b.sizeHint().height() for b in buttons)
    assert layout.heightForWidth(widest + 10) > 2 * one_line  # several lines, each one tall
    row.resize(widest + 10, layout.heightForWidth(widest + 10))
    row.show()
    qtbot.waitExposed(row)
    tops = sorted({b.geometry().top() for b in buttons})
    assert len(tops) > 2 and all(b.geometry().right() < row.width() for b in buttons)
