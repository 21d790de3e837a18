"""Scenario files opened: File › Open scenario… and File › Open recent, the last files opened
(``editing/recent_files.py`` keeps the list), remembered in the window's settings file and
listed again in the Scenarios list at start. Demos are not remembered: the Scenarios list always
has them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from inspector.app.library.library_panel import LibraryPanel
from inspector.app.runtime.notifier import Notifier
from inspector.app.shell.window_layout import open_settings
from inspector.editing.recent_files import still_there, with_opened

KEY = "recent/scenarios"
SCENARIO_FILTER = "Scenarios (*.toml);;All files (*)"


class RecentScenarios(QObject):
    def __init__(self, library: LibraryPanel, notify: Notifier, parent: QWidget) -> None:
        super().__init__(parent)
        self.library, self.notify, self._parent = library, notify, parent
        self.items: list[str] = []  # newest first
        self.path: Path | None = None
        self.menu = QMenu("Open &recent", parent)
        self.menu.setObjectName("recentScenarios")
        library.scenarioChosen.connect(self.opened)
        self._fill()

    def use_file(self, path: Path) -> None:
        """Reads the list saved in ``path`` (files gone since are dropped, and said so), lists
        those files in the Scenarios list, and saves every change there from now on."""
        self.path = path
        saved: object = open_settings(path).value(KEY) if path.is_file() else None
        values = [saved] if isinstance(saved, str) else saved if isinstance(saved, list) else []
        checked = still_there(values)
        self.items = checked.kept
        for ref in reversed(self.items):  # the newest ends on top
            self.library.scenarios.add_file(ref)
        if checked.missing:
            self._save()
            self._dropped(checked.missing)
        self._fill()

    def ask_open(self) -> None:
        """File › Open scenario…: the dialog starts in the folder of the newest recent file."""
        folder = str(Path(self.items[0]).parent) if self.items else ""
        path, _ = QFileDialog.getOpenFileName(
            self._parent, "Open scenario", folder, SCENARIO_FILTER
        )
        if path:
            self.library.select_scenario(path)

    def opened(self, ref: str) -> None:
        """A scenario was chosen: a file (not a demo, not gone) comes first in the list."""
        if not Path(ref).is_file():
            return
        items = with_opened(self.items, ref)
        if items != self.items:
            self.items = items
            self._save()
            self._fill()

    def open(self, ref: str) -> None:
        if Path(ref).is_file():
            self.library.select_scenario(ref)
            return
        self.items = [r for r in self.items if r != ref]
        self._save()
        self._fill()
        self._dropped([ref])

    def clear(self) -> None:
        self.items = []
        self._save()
        self._fill()

    def _dropped(self, missing: list[str]) -> None:
        gone = ", ".join(missing)
        self.notify.show_message(
            "info", f"Dropped from File › Open recent (no longer there): {gone}"
        )

    def _save(self) -> None:
        if self.path is not None:
            settings = open_settings(self.path)
            settings.setValue(KEY, list(self.items))
            settings.sync()

    def _fill(self) -> None:
        self.menu.clear()
        for n, ref in enumerate(self.items, start=1):
            action = self.menu.addAction(f"&{n} {Path(ref).name}")
            action.setToolTip(ref)
            action.setStatusTip(ref)
            action.triggered.connect(lambda _=False, r=ref: self.open(r))
        if not self.items:
            self.menu.addAction("No recent scenario files").setEnabled(False)
            return
        self.menu.addSeparator()
        self.menu.addAction("Clear the list").triggered.connect(self.clear)
