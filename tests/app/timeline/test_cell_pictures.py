"""CellPictures: a cell's picture draws the pixels painting the cell draws (at device pixel
ratios 1 and 2), a cell that inks outside itself is painted instead, a cell that inks nothing
has an empty picture, and a new state drops the pictures."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPixmap
from pytestqt.qtbot import QtBot

from inspector.app.timeline.cell_pictures import NOT_PICTURED, PENDING, UNKNOWN, CellPictures

BACKGROUND = QColor("#fafafa")
SIZE = (300, 80)
Paint = Callable[[QPainter], None]


def text(words: str) -> Paint:
    def paint(painter: QPainter) -> None:
        painter.setFont(QFont())
        painter.setPen(QColor("#202020"))
        painter.drawText(3, 0, 90, 24, int(Qt.AlignmentFlag.AlignVCenter), words)

    return paint


def canvas(ratio: int) -> QPixmap:
    pixmap = QPixmap(SIZE[0] * ratio, SIZE[1] * ratio)
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(BACKGROUND)
    return pixmap


def painted(ratio: int, paint: Paint, places: list[tuple[int, int]]) -> QImage:
    """``paint`` at each place, straight on the canvas."""
    target = canvas(ratio)
    painter = QPainter(target)
    for x, y in places:
        painter.save()
        painter.translate(x, y)
        paint(painter)
        painter.restore()
    painter.end()
    return target.toImage()


def one_pass(pictures: CellPictures, ratio: int, key: str, paint: Paint) -> QImage:
    """A pass that paints ``key``'s cell at (10, 5) and at (150, 40), as the row painter does:
    its picture if there is one, else the cell, pictured when wanted."""
    target = canvas(ratio)
    painter = QPainter(target)
    pictures.begin("state", BACKGROUND, ratio, SIZE[0])
    for x, y in ((10, 5), (150, 40)):
        entry = pictures.get(key, UNKNOWN)
        if entry is PENDING:
            pictures.also(key, x, y)
        elif entry is UNKNOWN and pictures.wanted(key):
            assert pictures.add(key, x, y, 100, 24, paint, False)
        elif entry is UNKNOWN or entry is NOT_PICTURED:
            painter.save()
            painter.translate(x, y)
            paint(painter)
            painter.restore()
        elif entry is not None:
            dx, dy, page, *source = entry  # type: ignore[misc]
            painter.drawPixmap(x + dx, y + dy, page, *source)
    pictures.finish(painter)
    painter.end()
    return target.toImage()


@pytest.mark.parametrize("ratio", [1, 2])
def test_a_picture_draws_what_painting_draws(qtbot: QtBot, ratio: int) -> None:
    pictures = CellPictures()
    paint = text("tool call · 1,234 ms")
    expected = painted(ratio, paint, [(10, 5), (150, 40)])
    assert one_pass(pictures, ratio, "k", paint) == expected  # seen, painted
    assert one_pass(pictures, ratio, "k", paint) == expected  # pictured, drawn at the end
    entry = pictures.get("k")
    assert isinstance(entry, tuple) and pictures.made == 1
    assert entry[5] < 100 * ratio  # the columns with ink, not the whole cell
    assert one_pass(pictures, ratio, "k", paint) == expected  # drawn from the picture
    pictures.begin("another state", BACKGROUND, ratio, SIZE[0])
    assert pictures.get("k", UNKNOWN) is UNKNOWN


def test_a_cell_inking_outside_itself_is_painted(qtbot: QtBot) -> None:
    def spills(painter: QPainter) -> None:
        painter.fillRect(QRect(-2, 4, 30, 10), QColor("#336699"))

    pictures = CellPictures()
    expected = painted(1, spills, [(10, 5), (150, 40)])
    for _ in range(3):
        assert one_pass(pictures, 1, "k", spills) == expected
    assert pictures.get("k") is NOT_PICTURED and pictures.made == 0


def test_a_cell_inking_nothing_has_an_empty_picture(qtbot: QtBot) -> None:
    pictures = CellPictures()
    for _ in range(3):
        assert one_pass(pictures, 1, "k", text("")) == painted(1, text(""), [])
    assert pictures.get("k", UNKNOWN) is None


def test_a_pass_that_did_not_finish_leaves_nothing_pending(qtbot: QtBot) -> None:
    pictures = CellPictures()
    one_pass(pictures, 1, "k", text("pending"))
    pictures.begin("state", BACKGROUND, 1, SIZE[0])
    assert pictures.wanted("k")
    assert pictures.add("k", 0, 0, 100, 24, text("pending"), False)  # no finish: it raised
    assert pictures.get("k") is PENDING
    expected = painted(1, text("pending"), [(10, 5), (150, 40)])
    assert one_pass(pictures, 1, "k", text("pending")) == expected  # begun afresh
    assert isinstance(pictures.get("k"), tuple)
