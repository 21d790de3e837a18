"""Icons from ``resources/icons`` (SVG, read through ``inspector.resources`` so a checkout, a
wheel and a frozen bundle all find them). Loaded once and cached: views ask per row."""

from __future__ import annotations

from functools import cache

from PySide6.QtGui import QIcon

from inspector.resources import resources_dir

APP_ICON = "agent-inspector"
# RunRecord.status values, plus "running" for the turn in flight.
STATUSES = ("succeeded", "fallback", "failed", "error", "cancelled", "interrupted", "running")


def icon_path(name: str) -> str:
    return str(resources_dir() / "icons" / f"{name}.svg")


@cache
def icon(name: str) -> QIcon:
    """The icon ``resources/icons/NAME.svg``; a null icon for a name that has none."""
    app_png = resources_dir() / "icons" / f"{name}.png"
    result = QIcon(icon_path(name))
    if app_png.is_file():  # a bitmap too, for window managers that ignore SVG
        result.addFile(str(app_png))
    return result


def app_icon() -> QIcon:
    return icon(APP_ICON)


def status_icon(status: str) -> QIcon:
    return icon(f"status-{status}") if status in STATUSES else QIcon()


def scenario_icon(is_demo: bool) -> QIcon:
    return icon("scenario-demo" if is_demo else "scenario-file")
