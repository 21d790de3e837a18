"""The left panel: scenarios (opened files and the built-in demos) above the recorded runs
(newest first, status icons, termination reason, a filter box), in a splitter."""

from __future__ import annotations

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QSplitter,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.runs_item_model import (
    RUN_ID_ROLE,
    SCENARIO,
    STARTED,
    STATUS,
    RunsItemModel,
)
from inspector.app.scenarios_item_model import REF_ROLE, ScenariosItemModel
from inspector.store import RunSummary


def _section(title: str, *widgets: QWidget) -> QWidget:
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.setSpacing(4)
    heading = QLabel(f"<b>{title}</b>")
    layout.addWidget(heading)
    for w in widgets:
        layout.addWidget(w)
    return box


class LibraryPanel(QSplitter):
    scenarioChosen = Signal(str)  # a scenario reference (path or demo:NAME)
    runChosen = Signal(str)  # a run_id

    def __init__(self, demos: list[str], parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.scenarios = ScenariosItemModel(demos)
        self.scenario_list = QListView()
        self.scenario_list.setObjectName("scenarioList")
        self.scenario_list.setModel(self.scenarios)
        self.scenario_list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.scenario_list.selectionModel().currentChanged.connect(self._scenario_changed)

        self.runs = RunsItemModel()
        self.runs_filter = QSortFilterProxyModel(self)
        self.runs_filter.setSourceModel(self.runs)
        self.runs_filter.setFilterKeyColumn(-1)  # any column: status, scenario, reason, id
        self.runs_filter.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_box = QLineEdit()
        self.filter_box.setObjectName("runsFilter")
        self.filter_box.setPlaceholderText("Filter runs: status, scenario, reason, id")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(self.runs_filter.setFilterFixedString)
        self.run_list = QTreeView()
        self.run_list.setObjectName("runList")
        self.run_list.setModel(self.runs_filter)
        self.run_list.setRootIsDecorated(False)
        self.run_list.setUniformRowHeights(True)
        self.run_list.setAlternatingRowColors(True)
        self.run_list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.run_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in ((STATUS, 128), (SCENARIO, 104), (STARTED, 70)):
            self.run_list.setColumnWidth(column, width)
        self.run_list.selectionModel().currentChanged.connect(self._run_changed)

        self.addWidget(_section("Scenarios", self.scenario_list))
        self.addWidget(_section("Runs", self.filter_box, self.run_list))
        self.setStretchFactor(0, 2)
        self.setStretchFactor(1, 3)
        self.setChildrenCollapsible(False)

    def _scenario_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.scenarioChosen.emit(str(current.data(REF_ROLE)))

    def _run_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.runChosen.emit(str(current.data(RUN_ID_ROLE)))

    def select_scenario(self, ref: str) -> bool:
        """Selects ``ref`` (an opened file is listed first); False when it is unknown."""
        row = self.scenarios.ensure(ref)
        if row < 0:
            return False
        self.scenario_list.setCurrentIndex(self.scenarios.index(row))
        return True

    def current_scenario(self) -> str | None:
        index = self.scenario_list.currentIndex()
        return str(index.data(REF_ROLE)) if index.isValid() else None

    def set_runs(self, runs: list[RunSummary], keep: str | None = None) -> None:
        """Replaces the runs list and re-selects ``keep`` (a run_id) quietly."""
        self.runs.set_runs(runs)
        if keep is not None:
            self.select_run(keep, notify=False)

    def select_run(self, run_id: str, *, notify: bool = True) -> None:
        row = self.runs.row_of(run_id)
        if row < 0:
            return
        index = self.runs_filter.mapFromSource(self.runs.index(row, 0))
        if not index.isValid():
            return  # filtered out
        blocked = self.run_list.selectionModel().blockSignals(not notify)
        try:
            self.run_list.selectionModel().setCurrentIndex(
                index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
        finally:
            self.run_list.selectionModel().blockSignals(blocked)
        self.run_list.scrollTo(index)
