"""The left panel: scenarios (opened files and the built-in demos) above the recorded runs
(newest first, status icons, termination reason, a filter box), in a splitter."""

from __future__ import annotations

from PySide6.QtCore import (
    QItemSelectionModel,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.library.runs_filter import RunsFilter
from inspector.app.library.runs_item_model import (
    RUN_ID_ROLE,
    SCENARIO,
    STARTED,
    STATUS,
    RunsItemModel,
)
from inspector.app.library.scenarios_item_model import REF_ROLE, ScenariosItemModel
from inspector.app.runtime.notifier import Notifier
from inspector.core.errors import InspectorError
from inspector.resources import DEMO_PREFIX
from inspector.store import RunSummary
from inspector.workflows.demo_copy import copy_demo


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
        self.runs_filter = RunsFilter(self.runs, self)
        self.runs_filter.setFilterKeyColumn(-1)  # any column: status, scenario, reason, id
        self.runs_filter.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_box = QLineEdit()
        self.filter_box.setObjectName("runsFilter")
        self.filter_box.setPlaceholderText("Filter runs: status, scenario, reason, id")
        self.filter_box.setClearButtonEnabled(True)
        self.filter_box.textChanged.connect(self.runs_filter.setFilterFixedString)
        # A table, not a QTreeView: a tree view lays out by asking every row for children,
        # through the filter proxy (1 s for 100,000 runs on each refresh); a table asks
        # nothing per row. Styled as the list it is: no grid, no row numbers, whole rows.
        self.run_list = QTableView()
        self.run_list.setObjectName("runList")
        self.run_list.setModel(self.runs_filter)
        self.run_list.setShowGrid(False)
        self.run_list.setWordWrap(False)
        self.run_list.setAlternatingRowColors(True)
        self.run_list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.run_list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Ctrl/Shift+click picks several runs to compare; a plain click still shows one run.
        self.run_list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.run_list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        rows = self.run_list.verticalHeader()
        rows.setVisible(False)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.run_list.fontMetrics().height() + 6)
        header = self.run_list.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # Status and Scenario fit the left dock at 220 px (1024×700): the icon and "interrupted"
        # take ~100 px; a longer scenario name is elided, the row's tooltip names it.
        for column, width in ((STATUS, 108), (SCENARIO, 104), (STARTED, 70)):
            self.run_list.setColumnWidth(column, width)
        self.run_list.selectionModel().currentChanged.connect(self._run_changed)
        # Down in the filter box enters the (filtered) list, as in a search field's results.
        down = QShortcut(QKeySequence(Qt.Key.Key_Down), self.filter_box)
        down.setContext(Qt.ShortcutContext.WidgetShortcut)
        down.activated.connect(self._enter_runs)

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

    def _enter_runs(self) -> None:
        self.run_list.setFocus()
        if not self.run_list.currentIndex().isValid() and self.runs_filter.rowCount() > 0:
            self.run_list.setCurrentIndex(self.runs_filter.index(0, 0))

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
        """Replaces the runs list and re-selects ``keep`` (a run_id) quietly; when ``keep`` was
        one of several selected runs, they all stay selected (a run finishing elsewhere does not
        undo a selection being made for a comparison)."""
        selected = self.selected_runs()
        self.runs.set_runs(runs)
        self._keep(keep, selected)

    def merge_runs(self, newest: list[RunSummary], keep: str | None = None) -> bool:
        """``set_runs`` for the store's newest runs only (a run started or ended): their rows
        are added or updated in place. False: the list must be read again (see the model)."""
        selected = self.selected_runs()
        if not self.runs.merge_newest(newest):
            return False
        self._keep(keep, selected)
        return True

    def _keep(self, keep: str | None, selected: list[str]) -> None:
        if keep is None:
            return
        self.select_run(keep, notify=False)
        if keep in selected:
            for run_id in selected:
                if run_id != keep:
                    self.select_run(run_id, notify=False, add=True)

    def select_run(self, run_id: str, *, notify: bool = True, add: bool = False) -> None:
        """Makes ``run_id`` the current run: the only one selected, or (``add``) one more
        selected run, leaving the current run as it is."""
        row = self.runs.row_of(run_id)
        if row < 0:
            return
        index = self.runs_filter.mapFromSource(self.runs.index(row, 0))
        if not index.isValid():
            return  # filtered out
        selection = self.run_list.selectionModel()
        rows = QItemSelectionModel.SelectionFlag.Rows
        blocked = selection.blockSignals(not notify)
        try:
            if add:
                selection.select(index, QItemSelectionModel.SelectionFlag.Select | rows)
            else:
                selection.setCurrentIndex(
                    index, QItemSelectionModel.SelectionFlag.ClearAndSelect | rows
                )
        finally:
            selection.blockSignals(blocked)
        if not add:
            self.run_list.scrollTo(index)

    def selected_runs(self) -> list[str]:
        """The run ids selected in the runs list, top to bottom (newest first)."""
        rows = self.run_list.selectionModel().selectedRows()
        return [str(i.data(RUN_ID_ROLE)) for i in sorted(rows, key=lambda i: i.row())]

    def selected_runs_oldest_first(self) -> list[str]:
        """The selected run ids in the order they started (what Compare takes)."""
        started = {r.run_id: r.started_at for r in self.runs.runs()}
        return sorted(self.selected_runs(), key=lambda run_id: started.get(run_id, ""))

    def edit_demo_copy(self, notify: Notifier) -> None:
        """Copies the chosen demo and its files to the user's scenarios folder and selects the
        copy: the editing loop in one action (``workflows/demo_copy.py``)."""
        ref = self.current_scenario() or ""
        if not ref.startswith(DEMO_PREFIX):
            text = "Choose a built-in demo first: a scenario file can be edited in place."
            notify.show_message("info", text)
            return
        try:
            path = copy_demo(ref.removeprefix(DEMO_PREFIX))
        except InspectorError as exc:
            notify.show_message("error", str(exc))
            return
        self.select_scenario(str(path))
        notify.show_message("info", f"Editing a copy of {ref}: {path}")

    def show_only(self, run_ids: list[str] | None) -> None:
        """The runs list shows only these runs (a sweep arm's); None shows every run again."""
        self.runs_filter.set_only(run_ids)
        self.filter_box.setPlaceholderText(
            "Filter runs: status, scenario, reason, id"
            if run_ids is None
            else f"Showing {len(run_ids)} run(s) of a sweep arm; the Sweep tab shows all again"
        )

    def add_run_action(self, action: QAction) -> None:
        """Adds ``action`` to the runs list's context menu (it acts on the selected runs)."""
        self.run_list.addAction(action)
