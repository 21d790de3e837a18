"""One offscreen screenshot per offline demo: the window renders real content, not a blank."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from inspector.app.app import save_screenshot
from inspector.app.main_window import MainWindow

OFFLINE_DEMOS = [
    "retry-feedback",
    "step-cap",
    "final-answer-tool",
    "empty-final",
    "invalid-output-fallback",
]


def colour_histogram(image: QImage, step: int = 4) -> Counter[int]:
    """Colours of a grid of pixels (every ``step``-th in each direction)."""
    return Counter(
        image.pixel(x, y)
        for y in range(0, image.height(), step)
        for x in range(0, image.width(), step)
    )


@pytest.mark.parametrize("demo", OFFLINE_DEMOS)
def test_the_window_renders_each_demo(
    demo: str, window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    assert window.library.select_scenario(f"demo:{demo}")
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.run_turn()
    qtbot.waitUntil(lambda: not window.runner.busy)
    window.timeline.select_last()
    assert window.detail.current_step == len(finished.args[0].steps)

    path = tmp_path / f"{demo}.png"
    save_screenshot(window, path)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1400, 900)
    colours = colour_histogram(image)
    assert len(colours) > 40  # text, icons, chips, status colours
    most_common_share = colours.most_common(1)[0][1] / sum(colours.values())
    assert most_common_share < 0.8  # not one flat background
    assert not window.message_bar.isVisible() or window.message_bar.level != "error"


def test_a_blank_window_fails_the_check(qtbot: QtBot, tmp_path: Path) -> None:
    blank = QImage(1400, 900, QImage.Format.Format_RGB32)
    blank.fill(0xFFEEEEEE)
    colours = colour_histogram(blank)
    assert len(colours) == 1  # what the demo test above would reject
