"""The window's layout kept across sessions and kept sane while it runs.

- Saved to ``window.ini`` (``locations.window_state_file``) on close and restored at start: the
  window's geometry, its docks (``saveState``/``restoreState``), the splitters it is given and
  its view choices (checkable actions). The saved state carries a version derived from the dock
  table (``docks.DOCKS``): a file written for another set of docks, an unreadable file or one a
  Qt call refuses gives the default layout, never a broken one.
- ``reset()`` (View › Reset layout) puts the default layout back.
- The docks' tab groups scroll their tabs instead of eliding the titles to "S…".
- The side docks open at ``DEFAULT_WIDTHS`` and never go below ``MIN_WIDTHS``; a dock squeezed by
  a narrowing window grows back to the width it had (or was dragged to by its separator) when
  the window grows again — Qt's own layout leaves it squeezed.

Without a file (tests, ``--screenshot``, ``--self-test``) nothing is read or written.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QSplitter, QTabBar

from inspector.app.shell.docks import DOCKS, FRONT, LEFT, RIGHT

Side = Qt.DockWidgetArea
DEFAULT_WIDTHS: dict[Side, int] = {LEFT: 252, RIGHT: 350}
MIN_WIDTHS: dict[Side, int] = {LEFT: 190, RIGHT: 260}
# The centre keeps at least this share of the window when the default widths are applied.
CENTRE_SHARE = 0.45
GROUP = "layout"


def layout_version() -> int:
    """A number that changes whenever the dock table does (names, sides, tab groups) or the
    default widths do: a state saved for other docks is not restored."""
    table = [(name, side.name, joins) for name, _title, side, joins in DOCKS]
    text = repr((table, sorted((s.name, w) for s, w in DEFAULT_WIDTHS.items())))
    return zlib.crc32(text.encode()) & 0x7FFF_FFFF


def open_settings(path: Path) -> QSettings:
    path.parent.mkdir(parents=True, exist_ok=True)
    return QSettings(str(path), QSettings.Format.IniFormat)


def _as_bytes(value: object) -> QByteArray | None:
    if isinstance(value, QByteArray) and not value.isEmpty():
        return value
    if isinstance(value, bytes | bytearray) and value:
        return QByteArray(bytes(value))
    return None


def _as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


class WindowLayout(QObject):
    def __init__(
        self,
        window: QMainWindow,
        docks: Mapping[str, QDockWidget],
        splitters: Mapping[str, QSplitter],
        checks: Mapping[str, QAction],
    ) -> None:
        super().__init__(window)
        self.window, self.docks = window, dict(docks)
        self.splitters, self.checks = dict(splitters), dict(checks)
        self.path: Path | None = None
        self.version = layout_version()
        self._default_state = window.saveState(self.version)
        self._default_checks = {name: a.isChecked() for name, a in self.checks.items()}
        self._default_splits: dict[str, QByteArray] = {}
        self._restored = False
        self._shown = False
        self._window_width = -1  # the width docks last had room in (-1: not shown yet)
        self.preferred: dict[Side, int] = dict(DEFAULT_WIDTHS)  # what each side grows back to
        self._pressed: dict[Side, int] = {}  # the widths when a mouse button went down
        for dock in self.docks.values():
            side = self._side(dock)
            if side is not None:
                dock.setMinimumWidth(MIN_WIDTHS[side])
            dock.dockLocationChanged.connect(self._unelide_tabs)  # its group's tab bar may be new
        window.installEventFilter(self)

    # ---- the file ------------------------------------------------------------------------

    def use_file(self, path: Path) -> bool:
        """Reads the layout saved in ``path`` (before the window is shown) and saves there on
        ``save()``. False, and the default layout, when there is nothing usable in it."""
        self.path = path
        if not path.is_file():
            return False
        settings = QSettings(str(path), QSettings.Format.IniFormat)
        settings.beginGroup(GROUP)
        version = settings.value("version")
        geometry = _as_bytes(settings.value("geometry"))
        state = _as_bytes(settings.value("state"))
        if (
            settings.status() != QSettings.Status.NoError
            or str(version) != str(self.version)
            or geometry is None
            or state is None
            or not self.window.restoreGeometry(geometry)
        ):
            return False
        if not self.window.restoreState(state, self.version):
            self.window.restoreState(self._default_state, self.version)
            return False
        for name, splitter in self.splitters.items():
            split = _as_bytes(settings.value(f"split/{name}"))
            if split is not None:
                splitter.restoreState(split)
        for name, action in self.checks.items():
            checked = _as_bool(settings.value(f"view/{name}"))
            if checked is not None and action.isChecked() != checked:
                action.trigger()  # its handler follows, as for a click
        self._restored = True
        return True

    def save(self) -> None:
        """Writes the layout to the file given to ``use_file`` (nothing without one)."""
        if self.path is None:
            return
        settings = open_settings(self.path)
        settings.remove(GROUP)  # keys of an older layout go with it
        settings.beginGroup(GROUP)
        settings.setValue("version", self.version)
        settings.setValue("geometry", self.window.saveGeometry())
        settings.setValue("state", self.window.saveState(self.version))
        for name, splitter in self.splitters.items():
            settings.setValue(f"split/{name}", splitter.saveState())
        for name, action in self.checks.items():
            settings.setValue(f"view/{name}", action.isChecked())
        settings.endGroup()
        settings.sync()

    # ---- the default layout ----------------------------------------------------------------

    def reset(self) -> None:
        """View › Reset layout: every dock back where it starts, at its default width, the
        splitters and view choices as they start."""
        window = self.window
        window.restoreState(self._default_state, self.version)
        for dock in self.docks.values():
            if dock.isFloating():
                dock.setFloating(False)
            dock.show()
        if FRONT in self.docks:
            self.docks[FRONT].raise_()
        for name, split in self._default_splits.items():
            self.splitters[name].restoreState(split)
        for name, checked in self._default_checks.items():
            if self.checks[name].isChecked() != checked:
                self.checks[name].trigger()
        self.preferred = dict(DEFAULT_WIDTHS)
        self._unelide_tabs()
        # Once the restored docks are laid out (before, a tab group shows no dock yet).
        QTimer.singleShot(0, self, lambda: self._apply_widths(self.fitted(DEFAULT_WIDTHS)))

    def fitted(self, widths: Mapping[Side, int]) -> dict[Side, int]:
        """``widths``, narrowed in proportion on a small window so that the centre keeps its
        share (never below ``MIN_WIDTHS``)."""
        room = int(self.window.width() * (1 - CENTRE_SHARE))
        total = sum(widths.values())
        if total <= room:
            return dict(widths)
        return {
            side: max(MIN_WIDTHS[side], width * room // total) for side, width in widths.items()
        }

    # ---- sizes while the window runs ---------------------------------------------------------

    def _side(self, dock: QDockWidget) -> Side | None:
        side = self.window.dockWidgetArea(dock)
        return side if side in DEFAULT_WIDTHS else None

    def _front_dock(self, side: Side) -> QDockWidget | None:
        """The dock showing on ``side`` (the raised tab of its group)."""
        for dock in self.docks.values():
            if (
                self.window.dockWidgetArea(dock) == side
                and dock.isVisible()
                and not dock.isFloating()
                and not dock.visibleRegion().isEmpty()
            ):
                return dock
        return None

    def _apply_widths(self, widths: Mapping[Side, int]) -> None:
        docks, sizes = [], []
        for side, width in widths.items():
            dock = self._front_dock(side)
            if dock is not None and dock.width() != width:
                docks.append(dock)
                sizes.append(width)
        if docks:
            self.window.resizeDocks(docks, sizes, Qt.Orientation.Horizontal)

    def _unelide_tabs(self) -> None:
        """The docks' tab groups scroll their tabs: titles elided to "S…", "Val…" say nothing."""
        for bar in self.window.findChildren(QTabBar):
            if bar.parent() is self.window:
                bar.setElideMode(Qt.TextElideMode.ElideNone)
                bar.setUsesScrollButtons(True)

    def _first_shown(self) -> None:
        self._unelide_tabs()
        if not self._restored:
            self._apply_widths(self.fitted(DEFAULT_WIDTHS))
        else:
            for side in DEFAULT_WIDTHS:
                dock = self._front_dock(side)
                if dock is not None:
                    self.preferred[side] = dock.width()
        self._default_splits = {n: s.saveState() for n, s in self.splitters.items()}
        self._window_width = self.window.width()

    def _grow_back(self) -> None:
        """Docks squeezed below the width they had get it back, as far as the window allows."""
        self._apply_widths(
            {
                side: width
                for side, width in self.fitted(self.preferred).items()
                if (dock := self._front_dock(side)) is not None and dock.width() < width
            }
        )

    def _widths(self) -> dict[Side, int]:
        return {
            side: dock.width()
            for side in DEFAULT_WIDTHS
            if (dock := self._front_dock(side)) is not None
        }

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Show and not self._shown:
            self._shown = True
            QTimer.singleShot(0, self, self._first_shown)  # once the window has its size
        elif kind == QEvent.Type.Resize and self._window_width >= 0:
            grew = self.window.width() > self._window_width
            self._window_width = self.window.width()
            if grew:
                QTimer.singleShot(0, self, self._grow_back)
        elif kind == QEvent.Type.MouseButtonPress:
            self._pressed = self._widths()
        elif kind == QEvent.Type.MouseButtonRelease:
            # A separator dragged (the window's own mouse events): the user's width now.
            for side, width in self._widths().items():
                if self._pressed.get(side, width) != width:
                    self.preferred[side] = width
            self._pressed = {}
        return False
