"""Wires comparing into the window: the Compare tab in the centre, "Compare selected runs"
(Ctrl+D; Run menu and the runs list's context menu) and ``compare_runs(run_ids)``, which reads
the records and builds the comparison off the UI thread, then shows the Compare tab.

While the Compare tab is in front, the docks on the right are put away (they show one run's
step, not the comparison) so that 2–4 columns of request lines get the window's width; they
come back with the Timeline tab."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget

from inspector.app.compare.compare_view import CompareView
from inspector.app.runtime.latest_read import LatestRead
from inspector.core.records import RunRecord
from inspector.reports.compare import Comparison
from inspector.workflows.compare import different_scenarios, load_comparison

if TYPE_CHECKING:
    from inspector.app.shell.main_window import MainWindow

MIN_RUNS, MAX_RUNS = 2, 4
COMPARE_KEYS = "Ctrl+D"


def count_problem(run_ids: list[str]) -> str | None:
    if len(run_ids) < MIN_RUNS:
        return (
            f"Select {MIN_RUNS}–{MAX_RUNS} runs to compare (Ctrl+click or Shift+click in the "
            f"runs list); {len(run_ids) or 'none'} selected."
        )
    if len(run_ids) > MAX_RUNS:
        return f"Compare at most {MAX_RUNS} runs at a time; {len(run_ids)} selected."
    return None


class CompareController(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.view = CompareView()
        window.centre_tabs.addTab(self.view, "Compare")
        self._read: LatestRead[tuple[list[RunRecord], Comparison]] = LatestRead(window)
        # The right docks put away while the Compare tab is in front, and which of them were
        # the raised tab of their group (None: none put away).
        self._put_away: tuple[list[QDockWidget], list[QDockWidget]] | None = None

        self.action = QAction("Co&mpare selected runs", window)
        self.action.setShortcut(QKeySequence(COMPARE_KEYS))
        self.action.setToolTip(f"Compare 2–4 runs of one turn side by side ({COMPARE_KEYS})")
        self.action.triggered.connect(self.compare_selected)
        window.addAction(self.action)
        window.run_menu.addSeparator()
        window.run_menu.addAction(self.action)
        window.library.add_run_action(self.action)

        # The timeline comes back to the front when the user asks for one run or a new turn.
        window.library.run_list.selectionModel().selectionChanged.connect(self._runs_selected)
        window.runner.preparing.connect(self.show_timeline)
        window.timeline_action.triggered.connect(self._focus_timeline)
        window.welcome_action.triggered.connect(self.show_timeline)
        window.playback.playback.activeChanged.connect(self._playback_active)
        window.centre_tabs.currentChanged.connect(self._tab_changed)

    def compare_selected(self) -> None:
        """Compares the runs selected in the runs list, oldest first (the baseline)."""
        chosen = self.window.library.selected_runs()
        started = {r.run_id: r.started_at for r in self.window.library.runs.runs()}
        self.compare(sorted(chosen, key=lambda run_id: started.get(run_id, "")))

    def compare(self, run_ids: list[str]) -> None:
        run_ids = list(dict.fromkeys(run_ids))
        bar = self.window.message_bar
        problem = count_problem(run_ids)
        if problem is None:
            problem = self._recording_problem(run_ids)
        if problem is not None:
            bar.show_message("warning", problem)
            return
        bar.clear()
        path = self.window.store.path
        self._read.start(
            f"Comparing {len(run_ids)} runs…",
            partial(load_comparison, path, run_ids),
            self._loaded,
            "Cannot compare",
        )

    def _recording_problem(self, run_ids: list[str]) -> str | None:
        live = self.window.live
        if self.window.runner.busy and live is not None and live.run_id in run_ids:
            return f"Run {live.run_id} is still recording; compare it once it has finished."
        return None

    def _loaded(self, loaded: tuple[list[RunRecord], Comparison]) -> None:
        records, comparison = loaded
        self.view.show_comparison(records, comparison)
        self.window.centre_tabs.setCurrentWidget(self.view)
        names = different_scenarios(records, id_chars=8)
        if names is not None:
            self.window.message_bar.show_message(
                "warning", f"These runs are not the same turn ({names}): compared anyway."
            )

    def show_timeline(self) -> None:
        self._read.drop()  # the user moved on: a comparison still being read must not land
        self.window.centre_tabs.setCurrentWidget(self.window.timeline_page)

    def _runs_selected(self) -> None:
        if len(self.window.library.selected_runs()) == 1:  # not while building a selection
            self.show_timeline()

    def _playback_active(self, active: bool) -> None:
        if active:  # a run played back is shown in the timeline
            self.show_timeline()

    def _tab_changed(self, _index: int) -> None:
        window = self.window
        if window.centre_tabs.currentWidget() is self.view:
            if self._put_away is None:
                right = Qt.DockWidgetArea.RightDockWidgetArea
                docks = [
                    d
                    for d in window.findChildren(QDockWidget)
                    if window.dockWidgetArea(d) == right
                    and not d.isFloating()
                    and d.toggleViewAction().isChecked()
                ]
                # Qt moves a tab group's other docks off the window: "visible" all the same.
                raised = [d for d in docks if not d.visibleRegion().isEmpty()]
                for dock in docks:
                    dock.hide()
                self._put_away = (docks, raised)
        elif self._put_away is not None:
            docks, raised = self._put_away
            self._put_away = None
            for dock in docks:
                dock.show()
            for dock in raised:
                dock.raise_()

    def _focus_timeline(self) -> None:
        self.show_timeline()
        self.window.timeline.table.setFocus()


def install_compare(window: MainWindow) -> CompareController:
    return CompareController(window)
