"""The centre of the window: the "Timeline" page, the "Attempts" (side by side), "Compare" and
"Sweep" tabs. While Compare (or Sweep) is in front, the docks on the right are put away (they show
one run's step, not the comparison) so that 2–4 columns of request lines get the window's width;
they come back with the Timeline or Attempts tab. The Attempts tab keeps them: the Step dock
shows the step of the attempt clicked there; a run started, picked or played back leaves the
Attempts tab in front (it shows that run), and brings the Timeline forward from the others."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget, QWidget

ATTEMPTS_KEYS = "Ctrl+Shift+A"


class CentreTabs(QTabWidget):
    def __init__(
        self,
        window: QMainWindow,
        timeline_page: QWidget,
        attempts: QWidget,
        compare: QWidget,
        sweep: QWidget,
    ) -> None:
        super().__init__()
        self.setObjectName("centreTabs")
        self.setDocumentMode(True)
        self._window, self.timeline_page, self.compare_page = window, timeline_page, compare
        self.attempts_page, self.sweep_page = attempts, sweep
        # The right docks put away while Compare is in front, and which of them were the raised
        # tab of their group (None: none put away).
        self._put_away: tuple[list[QDockWidget], list[QDockWidget]] | None = None
        self.addTab(timeline_page, "Timeline")
        self.addTab(attempts, "Attempts")
        self.setTabToolTip(1, f"Attempts side by side ({ATTEMPTS_KEYS})")
        self.addTab(compare, "Compare")
        self.addTab(sweep, "Sweep")
        for page in (compare, sweep):  # shown with the right docks put away: there is room,
            page.setMinimumWidth(1)  # and their own minimum must not widen the Timeline's
        self.currentChanged.connect(self._tab_changed)

    def tab_actions(self, parent: QWidget) -> dict[str, QAction]:
        """``{"tab:attempts": action}``: the Attempts tab in front, focused (its paging keys)."""
        action = QAction("&Attempts side by side", parent)
        action.setShortcut(QKeySequence(ATTEMPTS_KEYS))
        action.setToolTip(f"The attempts side by side, in the centre ({ATTEMPTS_KEYS})")
        action.triggered.connect(self.show_attempts)
        parent.addAction(action)  # the shortcut works wherever the focus is in the window
        return {"tab:attempts": action}

    def show_timeline(self, focus: QWidget | None = None) -> None:
        self._front(self.timeline_page)
        if focus is not None:
            focus.setFocus()

    def show_run_views(self) -> None:
        """A run is shown (started, picked, played back): the Timeline comes forward unless the
        Attempts tab, which shows the run too, is in front."""
        if self.currentWidget() is not self.attempts_page:
            self.show_timeline()

    def show_attempts(self) -> None:
        self._front(self.attempts_page)
        self.attempts_page.setFocus()

    def show_sweep(self) -> None:
        self._front(self.sweep_page)

    def show_compare(self) -> None:
        self._front(self.compare_page)

    def _front(self, page: QWidget) -> None:
        """``page`` in front. A focus inside the page it hides moves to ``page``'s first
        focusable widget, as Qt moves it there when the chain leads into it; but Qt hands it
        on down the window's whole chain, and from the Timeline that was the library's
        scenario list, which then chose its first scenario (loaded into the policy, the
        scenario editor and the validators: 40–100 ms of the UI thread, and a window changed
        behind the user's back). It waits on the tab bar meanwhile."""
        current, focus = self.currentWidget(), self._window.focusWidget()
        moved = page is not current and focus is not None and current.isAncestorOf(focus)
        if moved:
            self.tabBar().setFocus()
        self.setCurrentWidget(page)
        if moved and (first := _first_focusable(page)) is not None:
            first.setFocus(Qt.FocusReason.TabFocusReason)

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


def _first_focusable(page: QWidget) -> QWidget | None:
    """The first widget of ``page`` in the focus chain that takes the focus by Tab."""
    widget = page.nextInFocusChain()
    while widget is not None and widget is not page:
        if (
            page.isAncestorOf(widget)
            and widget.isVisible()
            and widget.isEnabled()
            and widget.focusPolicy().value & Qt.FocusPolicy.TabFocus.value
        ):
            return widget
        widget = widget.nextInFocusChain()
    return None
