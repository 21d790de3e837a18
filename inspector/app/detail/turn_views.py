"""The Attempts tab's three views of a turn, side by side when each gets ``PANE_MIN`` px, else
one at a time as tabs: three panes squeezed into ~130 px each at 1024×700 broke words in two
("ASSISTAN T"). The panes move between the two layouts as the width crosses the threshold;
they are the same widgets, so what they show stays.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QSplitter, QStackedWidget, QTabWidget, QWidget

PANE_MIN = 200  # px: narrower than this each, the views go into tabs


class TurnViews(QStackedWidget):
    def __init__(self, parent: QWidget, panes: list[tuple[QWidget, str]]) -> None:
        super().__init__(parent)
        self.panes = panes
        self.split = QSplitter(Qt.Orientation.Horizontal, self)
        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the view keeps the paging keys
        self.tabs.tabBar().setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.addWidget(self.split)
        self.addWidget(self.tabs)
        for pane, _label in panes:
            self.split.addWidget(pane)
        self.setMinimumWidth(0)
        self.installEventFilter(self)

    @property
    def tabbed(self) -> bool:
        return self.currentWidget() is self.tabs

    def side_by_side_width(self) -> int:
        return len(self.panes) * PANE_MIN + (len(self.panes) - 1) * self.split.handleWidth()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self and event.type() == QEvent.Type.Resize:
            self._arrange(self.width() < self.side_by_side_width())
        return False

    def _arrange(self, tabbed: bool) -> None:
        if tabbed == self.tabbed:
            return
        if tabbed:
            current = self.tabs.currentIndex()
            for pane, label in self.panes:
                self.tabs.addTab(pane, label)
            self.tabs.setCurrentIndex(max(0, current))
            self.setCurrentWidget(self.tabs)
        else:
            for pane, _label in self.panes:
                self.split.addWidget(pane)  # takes it out of the tabs
            self.tabs.clear()
            self.setCurrentWidget(self.split)
        for pane, _label in self.panes:
            title = getattr(pane, "title", None)  # the tab says it
            if isinstance(title, QWidget):
                title.setVisible(not tabbed)
            if not tabbed:
                pane.show()  # the tabs had hidden all but their current one
