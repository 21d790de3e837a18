"""The scenarios a user can run: files opened this session (first), then the built-in demos."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from inspector.app.widgets.icons import scenario_icon
from inspector.resources import DEMO_PREFIX

_Index = QModelIndex | QPersistentModelIndex
REF_ROLE = Qt.ItemDataRole.UserRole + 1  # the scenario reference: a path or demo:NAME


@dataclass(frozen=True)
class ScenarioEntry:
    ref: str  # what resolve_scenario takes

    @property
    def is_demo(self) -> bool:
        return self.ref.startswith(DEMO_PREFIX)

    @property
    def label(self) -> str:
        return self.ref if self.is_demo else Path(self.ref).name


class ScenariosItemModel(QAbstractListModel):
    def __init__(self, demos: list[str]) -> None:
        super().__init__()
        self._files: list[ScenarioEntry] = []
        self._demos = [ScenarioEntry(f"{DEMO_PREFIX}{name}") for name in demos]

    @property
    def _entries(self) -> list[ScenarioEntry]:
        return self._files + self._demos

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._files) + len(self._demos)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return entry.label
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Built-in demo {entry.ref}" if entry.is_demo else entry.ref
        if role == Qt.ItemDataRole.DecorationRole:
            return scenario_icon(entry.is_demo)
        if role == REF_ROLE:
            return entry.ref
        return None

    def entry(self, row: int) -> ScenarioEntry:
        return self._entries[row]

    def row_of(self, ref: str) -> int:
        """The row of ``ref``; -1 when it is not listed."""
        refs = [e.ref for e in self._entries]
        return refs.index(ref) if ref in refs else -1

    def add_file(self, path: str | Path) -> int:
        """Lists an opened scenario file (once, newest first); returns its row."""
        ref = str(Path(path).resolve())
        row = self.row_of(ref)
        if row >= 0:
            return row
        self.beginInsertRows(QModelIndex(), 0, 0)
        self._files.insert(0, ScenarioEntry(ref))
        self.endInsertRows()
        return 0

    def ensure(self, ref: str) -> int:
        """The row of a scenario given on the command line: a demo or a file, added if new."""
        row = self.row_of(ref)
        if row >= 0 or ref.startswith(DEMO_PREFIX):
            return row
        return self.add_file(ref)
