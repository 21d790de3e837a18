"""The runs list's filter: the filter box's text over every column, and optionally only a given
set of runs (a sweep arm's, asked by the shell for the Sweep view)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel

from inspector.app.library.runs_item_model import RunsItemModel


class RunsFilter(QSortFilterProxyModel):
    def __init__(self, runs: RunsItemModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSourceModel(runs)
        self._runs = runs
        self.only: frozenset[str] | None = None

    def set_only(self, run_ids: Iterable[str] | None) -> None:
        """Only these runs (None: every run the text lets through)."""
        self.beginFilterChange()
        self.only = None if run_ids is None else frozenset(run_ids)
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self.only is not None and self._runs.run(row).run_id not in self.only:
            return False
        return super().filterAcceptsRow(row, parent)
