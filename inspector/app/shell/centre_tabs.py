"""The centre of the window: the "Timeline" page, the "Compare" and "Sweep" tabs. While Compare
(or Sweep) is in front,
the docks on the right are put away (they show one run's step, not the comparison) so that 2–4
columns of request lines get the window's width; they come back with the Timeline tab."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget, QWidget


class CentreTabs(QTabWidget):
    def __init__(
        self, window: QMainWindow, timeline_page: QWidget, compare: QWidget, sweep: QWidget
    ) -> None:
        super().__init__()
        self.setObjectName("centreTabs")
        self.setDocumentMode(True)
        self._window, self.timeline_page, self.compare_page = window, timeline_page, compare
        # The right docks put away while Compare is in front, and which of them were the raised
        # tab of their group (None: none put away).
        self._put_away: tuple[list[QDockWidget], list[QDockWidget]] | None = None
        self.addTab(timeline_page, "Timeline")
        self.addTab(compare, "Compare")
        self.sweep_page = sweep
        self.addTab(sweep, "Sweep")
        for page in (compare, sweep):  # shown with the right docks put away: there is room,
            page.setMinimumWidth(1)  # and their own minimum must not widen the Timeline's
        self.currentChanged.connect(self._tab_changed)

    def show_timeline(self) -> None:
        self.setCurrentWidget(self.timeline_page)

    def show_sweep(self) -> None:
        self.setCurrentWidget(self.sweep_page)

    def show_compare(self) -> None:
        self.setCurrentWidget(self.compare_page)

    def _tab_changed(self, _index: int) -> None:
        window = self._window
        if self.currentWidget() in (self.compare_page, self.sweep_page):
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
