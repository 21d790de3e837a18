"""View-menu actions that bring a dock forward: shown if hidden, raised over its tab siblings and
focused — never hidden (a dock's own toggleViewAction hides an open dock, which is not what a
user reaching for "Policy" wants). Each dock has a shortcut, Alt+1 … in the View menu's order."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QWidget

# The View menu's docks in order; the shortcut of the n-th is Alt+n.
DOCK_ORDER = (
    "libraryDock",
    "stepDock",
    "policyDock",
    "validatorsDock",
    "scenarioDock",
)


def bring_forward(dock: QDockWidget) -> None:
    dock.show()
    dock.raise_()
    widget = dock.widget()
    if widget is not None:
        widget.setFocus()


def dock_actions(docks: Sequence[QDockWidget], parent: QWidget) -> dict[str, QAction]:
    """``{"dock:<objectName>": action}`` for each dock; the ones in ``DOCK_ORDER`` get Alt+n."""
    actions: dict[str, QAction] = {}
    for dock in docks:
        name = dock.objectName()
        action = QAction(dock.windowTitle(), parent)
        if name in DOCK_ORDER:
            key = QKeySequence(f"Alt+{DOCK_ORDER.index(name) + 1}")
            action.setShortcut(key)
            action.setToolTip(f"Bring the {dock.windowTitle()} dock forward ({key.toString()})")
        action.triggered.connect(lambda _=False, d=dock: bring_forward(d))
        parent.addAction(action)  # the shortcut works wherever the focus is in the window
        actions[f"dock:{name}"] = action
    return actions
