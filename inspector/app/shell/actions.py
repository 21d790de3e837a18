"""The window's actions, menus and toolbar as one declared table: what each action says and which
keys trigger it, and where every action — the window's own and the features' — appears. The
order of the menus is read here, not from the order features were built in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QStyle, QToolBar, QWidget

Icon = QStyle.StandardPixmap


@dataclass(frozen=True)
class ActionSpec:
    id: str
    text: str
    keys: tuple[str, ...] = ()
    tip: str = ""
    icon: Icon | None = None
    checkable: bool = False

    def tooltip(self) -> str:
        return (
            f"{self.tip or self.text} ({', '.join(self.keys)})"
            if self.keys
            else (self.tip or self.text)
        )


# The window's own actions; each id names a handler of the window (see MainWindow._handlers).
WINDOW_ACTIONS = (
    ActionSpec("open", "&Open scenario…", ("Ctrl+O",), icon=Icon.SP_DialogOpenButton),
    ActionSpec(
        "edit_copy",
        "&Edit a copy of this demo",
        ("Ctrl+Shift+E",),
        "Copy the demo and its files to your scenarios folder and open the copy",
    ),
    ActionSpec("run", "&Run", ("Ctrl+R",), "Run the scenario", Icon.SP_MediaPlay),
    ActionSpec("stop", "&Stop", ("Esc", "Ctrl+."), "Stop the run", Icon.SP_MediaStop),
    ActionSpec(
        "show_cleared",
        "Show &cleared attempts",
        ("Ctrl+H",),
        "Show the attempts a streaming UI showed and then cleared",
        checkable=True,
    ),
    ActionSpec("filter", "&Filter runs", ("Ctrl+F",)),
    ActionSpec("focus_timeline", "Focus the &timeline", ("Ctrl+L",)),
    ActionSpec("quit", "&Quit", ("Ctrl+Q",)),
    ActionSpec("settings", "&Provider settings…", (), "API keys in the OS keyring"),
    ActionSpec("local_start", "&Start", (), "Start the local llama.cpp model server"),
    ActionSpec("local_stop", "S&top", (), "Stop the local model server"),
    ActionSpec("local_status", "Status", (), "Is the local model server running?"),
    ActionSpec(
        "reset_layout",
        "Reset &layout",
        ("Ctrl+Shift+L",),
        "Put every dock back where it starts, at its default width",
    ),
    ActionSpec("welcome", "&Welcome page"),
    ActionSpec("about", "&About Agent Inspector"),
)

SEPARATOR = "-"
# An entry: an action id, SEPARATOR, "dock:<objectName>" (brings the dock forward),
# "tab:attempts" (the centre's Attempts tab in front: ``CentreTabs.tab_actions``) or a
# (title, entries) submenu. Features' action ids: replay, compare_original (ReplayController),
# play_back and playback_* (PlaybackController), compare (CompareController), proxy_*
# (ProxyController), import, save_scenario, send_collector (FormatsController); open_recent is
# the File › Open recent submenu (RecentScenarios).
Entry: TypeAlias = "str | tuple[str, Sequence[Entry]]"
MENUS: tuple[tuple[str, tuple[Entry, ...]], ...] = (
    ("&File", (
        "open", "open_recent", "edit_copy", "import", SEPARATOR, "save_scenario",
        "send_collector", SEPARATOR, "settings", SEPARATOR, "quit",
    )),
    ("&Run", (
        "run", "stop", SEPARATOR, "replay", "compare_original", SEPARATOR, "play_back",
        ("Playback", ("playback_toggle", "playback_back", "playback_forward", "playback_stop")),
        SEPARATOR, "compare",
    )),
    ("&View", (
        "show_cleared", "filter", "focus_timeline", "tab:attempts", SEPARATOR,
        "dock:libraryDock", "dock:stepDock", "dock:policyDock", "dock:validatorsDock",
        "dock:scenarioDock", SEPARATOR, "reset_layout",
    )),
    ("&Local model", ("local_start", "local_stop", "local_status")),
    ("&Proxy", ("proxy_start", "proxy_stop", "proxy_copy_url")),
    ("&Help", ("welcome", "about")),
)  # fmt: skip
# Action ids, SEPARATOR or "widget:<objectName>" (a widget the window passes in).
TOOLBAR: tuple[str, ...] = ("open", "run", "stop", SEPARATOR, "replay", "widget:replayOffline")


def make_action(spec: ActionSpec, parent: QWidget) -> QAction:
    action = QAction(spec.text, parent)
    action.setShortcuts([QKeySequence(k) for k in spec.keys])
    action.setToolTip(spec.tooltip())
    if spec.icon is not None:
        action.setIcon(parent.style().standardIcon(spec.icon))
    action.setCheckable(spec.checkable)
    return action


def fill_menu(
    menu: QMenu, entries: Sequence[Entry], actions: Mapping[str, QAction | QMenu]
) -> None:
    """Adds ``entries`` to ``menu``; ``actions`` maps ids (and ``dock:`` names) to actions."""
    for entry in entries:
        if isinstance(entry, tuple):
            title, inner = entry
            fill_menu(menu.addMenu(title), inner, actions)
        elif entry == SEPARATOR:
            menu.addSeparator()
        else:
            found = actions[entry]
            assert isinstance(found, QAction)
            menu.addAction(found)


def build_menus(bar: QMenuBar, actions: Mapping[str, QAction]) -> dict[str, QMenu]:
    """The menus of ``MENUS``, by title without its ``&`` ("Run", "View"…)."""
    menus = {}
    for title, entries in MENUS:
        menu = bar.addMenu(title)
        fill_menu(menu, entries, actions)
        menus[title.replace("&", "")] = menu
    return menus


def fill_toolbar(
    toolbar: QToolBar, actions: Mapping[str, QAction], widgets: Mapping[str, QWidget]
) -> None:
    for entry in TOOLBAR:
        if entry == SEPARATOR:
            toolbar.addSeparator()
        elif entry.startswith("widget:"):
            toolbar.addWidget(widgets[entry.removeprefix("widget:")])
        else:
            toolbar.addAction(actions[entry])
