"""The window's layout stays put: saved to window.ini on close and restored by the next window,
defaults on a damaged or outdated file, View › Reset layout, usable at 1024×700 with a squeezed
dock growing back, and File › Open recent across restarts."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDockWidget, QFileDialog
from pytestqt.qtbot import QtBot

from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.main_window import MainWindow
from inspector.app.shell.window_layout import DEFAULT_WIDTHS, LEFT, MIN_WIDTHS, RIGHT
from inspector.editing.recent_files import RECENT_LIMIT
from inspector.resources import demo_path
from inspector.store import Store

Opener = Callable[..., MainWindow]
HORIZONTAL = Qt.Orientation.Horizontal  # dock widths are resized horizontally


@pytest.fixture
def open_window(
    qloop: InspectorEventLoop, store: Store, qtbot: QtBot, tmp_path: Path
) -> Iterator[Opener]:
    """Opens a window as the app does: the layout file read before it shows."""
    opened: list[MainWindow] = []

    def open_one(size: tuple[int, int] = (1400, 900), ini: Path | None = None) -> MainWindow:
        window = MainWindow(store)
        qtbot.addWidget(window)
        if ini is not None:
            window.window_layout.use_file(ini)
            window.recent.use_file(ini)
        # After the restore: the offscreen screen is 800×600, and a restored geometry is kept
        # on its screen (``--size`` does the same in the app).
        window.resize(*size)
        window.show()
        qtbot.waitExposed(window)
        layout = window.window_layout
        qtbot.waitUntil(lambda: layout._window_width == window.width())  # first-show sizes in
        qtbot.wait(20)  # and laid out
        opened.append(window)
        return window

    yield open_one
    for window in opened:
        window.close()


def _width(window: MainWindow, name: str) -> int:
    dock = window.findChild(QDockWidget, name)
    assert dock is not None
    return dock.width()


def _defaults_shown(window: MainWindow) -> bool:
    docks = window.findChildren(QDockWidget)
    return (
        all(not d.isHidden() and not d.isFloating() for d in docks)
        and abs(_width(window, "libraryDock") - DEFAULT_WIDTHS[LEFT]) <= 2
        and abs(_width(window, "stepDock") - DEFAULT_WIDTHS[RIGHT]) <= 2
    )


def test_the_default_layout_gives_the_centre_the_width(open_window: Opener, qtbot: QtBot) -> None:
    window = open_window()
    qtbot.waitUntil(lambda: _defaults_shown(window), timeout=2000)
    assert window.centralWidget().width() > window.width() // 2


def test_the_layout_is_saved_on_close_and_restored(
    open_window: Opener, qtbot: QtBot, tmp_path: Path
) -> None:
    ini = tmp_path / "window.ini"
    first = open_window(ini=ini)
    first.resizeDocks([first.library_dock], [300], HORIZONTAL)
    first.policy_dock.close()
    first.show_cleared_action.trigger()
    qtbot.waitUntil(lambda: _width(first, "libraryDock") == 300)
    assert not ini.exists()  # written on close, not before
    first.close()
    assert ini.is_file()

    second = open_window(ini=ini)
    assert second.window_layout.path == ini
    qtbot.waitUntil(lambda: abs(_width(second, "libraryDock") - 300) <= 2)
    assert second.policy_dock.isHidden()
    assert not second.show_cleared_action.isChecked()
    assert not second.timeline.show_cleared_box.isChecked()  # its handler followed


def test_a_damaged_file_gives_the_default_layout(
    open_window: Opener, qtbot: QtBot, tmp_path: Path
) -> None:
    ini = tmp_path / "window.ini"
    ini.write_bytes(b"[layout]\nversion=nonsense\x00\xff\nstate=@ByteArray(garbage\n[[[")
    window = open_window(ini=ini)
    qtbot.waitUntil(lambda: _defaults_shown(window))
    ini.write_text(f"[layout]\nversion={window.window_layout.version}\ngeometry=x\nstate=y\n")
    assert not open_window(ini=ini).window_layout.use_file(ini)


def test_a_layout_saved_for_other_docks_is_not_restored(
    open_window: Opener, qtbot: QtBot, tmp_path: Path
) -> None:
    ini = tmp_path / "window.ini"
    first = open_window(ini=ini)
    first.policy_dock.close()
    first.close()
    text = ini.read_text()
    version = str(first.window_layout.version)
    assert version in text
    ini.write_text(text.replace(f"version={version}", "version=12345"))
    second = open_window(ini=ini)
    assert not second.policy_dock.isHidden()
    qtbot.waitUntil(lambda: _defaults_shown(second))


def test_reset_layout_brings_every_dock_back_at_its_width(
    open_window: Opener, qtbot: QtBot
) -> None:
    window = open_window()
    window.policy_dock.close()
    window.addDockWidget(LEFT, window.scenario_dock)  # moved to the other side
    window.resizeDocks([window.library_dock], [400], HORIZONTAL)
    qtbot.waitUntil(lambda: _width(window, "libraryDock") == 400)
    action = window.actions_by_id["reset_layout"]
    assert action.shortcut().toString() == "Ctrl+Shift+L"
    action.trigger()
    qtbot.waitUntil(lambda: _defaults_shown(window))


def test_at_1024_by_700_every_dock_keeps_its_minimum(open_window: Opener, qtbot: QtBot) -> None:
    window = open_window(size=(1024, 700))
    assert (window.width(), window.height()) == (1024, 700)  # nothing holds it wider
    for dock in window.findChildren(QDockWidget):
        if dock.isVisible() and not dock.visibleRegion().isEmpty():
            side = window.dockWidgetArea(dock)
            assert dock.width() >= max(MIN_WIDTHS[side], dock.minimumSizeHint().width())
    assert window.centralWidget().width() >= 400  # the timeline keeps room


def test_a_squeezed_dock_grows_back_with_the_window(open_window: Opener, qtbot: QtBot) -> None:
    window = open_window(size=(1400, 900))
    assert abs(_width(window, "libraryDock") - DEFAULT_WIDTHS[LEFT]) <= 2
    window.resize(800, 600)
    qtbot.waitUntil(lambda: window.width() == 800)
    qtbot.wait(10)
    assert _width(window, "libraryDock") < DEFAULT_WIDTHS[LEFT]  # squeezed
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: abs(_width(window, "libraryDock") - DEFAULT_WIDTHS[LEFT]) <= 2)
    qtbot.waitUntil(lambda: abs(_width(window, "stepDock") - DEFAULT_WIDTHS[RIGHT]) <= 2)


def _scenario_files(tmp_path: Path, count: int) -> list[str]:
    text = demo_path("step-cap").read_text()
    files = []
    for n in range(count):
        path = tmp_path / f"scenario-{n}.toml"
        path.write_text(text)
        files.append(str(path))
    return files


def test_recent_scenarios_are_remembered_across_restarts(
    open_window: Opener, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini = tmp_path / "window.ini"
    files = _scenario_files(tmp_path, RECENT_LIMIT + 1)
    first = open_window(ini=ini)
    for path in files:
        assert first.library.select_scenario(path)
    assert first.library.select_scenario("demo:retry-feedback")  # demos are not listed
    first.close()

    second = open_window(ini=ini)
    newest_first = list(reversed(files))[:RECENT_LIMIT]
    assert second.recent.items == newest_first
    menu = second.recent.menu.actions()
    assert [a.toolTip() for a in menu[:RECENT_LIMIT]] == newest_first
    assert second.library.scenarios.row_of(newest_first[0]) == 0  # listed again
    menu[1].trigger()
    assert second.library.current_scenario() == newest_first[1]
    assert second.recent.items[0] == newest_first[1]
    asked: list[str] = []  # File › Open starts where the newest recent file is
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", lambda _p, _t, folder, _f: asked.append(folder) or ("", "")
    )
    second.actions_by_id["open"].trigger()
    assert asked == [str(tmp_path)]
    second.close()

    Path(newest_first[2]).unlink()
    third = open_window(ini=ini)
    assert newest_first[2] not in third.recent.items
    assert len(third.recent.items) == RECENT_LIMIT - 1
    assert newest_first[2] in third.message_bar.text.text()  # said, not silently dropped


@pytest.mark.slow
def test_a_screenshot_neither_reads_nor_writes_the_layout(tmp_path: Path) -> None:
    ini = tmp_path / "window.ini"
    ini.write_text("[layout]\nversion=1\n")
    env = {**os.environ, "AGENT_INSPECTOR_WINDOW_STATE": str(ini), "QT_QPA_PLATFORM": "offscreen"}
    shot = tmp_path / "shot.png"
    command = [sys.executable, "-m", "inspector", "gui", "--size", "1024x700"]
    command += ["--db", str(tmp_path / "runs.sqlite3"), "--screenshot", str(shot)]
    subprocess.run(command, env=env, check=True, timeout=120, capture_output=True)
    assert QImage(str(shot)).size().toTuple() == (1024, 700)  # rendered at --size
    assert ini.read_text() == "[layout]\nversion=1\n"  # neither read nor written
