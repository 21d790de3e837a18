"""The window's docks as one declared table: title, object name, side, and the dock whose tab
group it joins. Read top to bottom, it is the order of the tabs on the right."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget, QWidget

LEFT, RIGHT = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea

# (object name, title, side, the dock whose tab group it joins)
DOCKS: tuple[tuple[str, str, Qt.DockWidgetArea, str | None], ...] = (
    ("libraryDock", "Scenarios and runs", LEFT, None),
    ("stepDock", "Step", RIGHT, None),
    ("policyDock", "Policy", RIGHT, "stepDock"),
    ("validatorsDock", "Validators", RIGHT, "policyDock"),
    ("scenarioDock", "Scenario", RIGHT, "policyDock"),
)
FRONT = "stepDock"  # the right side's tab in front at start


def add_docks(window: QMainWindow, panels: Mapping[str, QWidget]) -> dict[str, QDockWidget]:
    """A movable, closable, floatable dock per row of ``DOCKS`` holding ``panels[name]``."""
    docks: dict[str, QDockWidget] = {}
    window.setTabPosition(RIGHT, QTabWidget.TabPosition.North)
    for name, title, side, joins in DOCKS:
        dock = docks[name] = QDockWidget(title, window)
        dock.setObjectName(name)
        dock.setWidget(panels[name])
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        window.addDockWidget(side, dock)
        if joins is not None:
            window.tabifyDockWidget(docks[joins], dock)
    docks[FRONT].raise_()
    return docks
