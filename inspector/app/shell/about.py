"""The About dialog: the version and the licences of the components the app ships with.

The version is ``inspector.__version__`` (pyproject reads the same attribute through hatch).
Components and licences are read from installed package metadata, walking the app's runtime
requirements, so the list matches what a wheel or the PyInstaller bundle (which copies that
metadata, see ``packaging/agent-inspector.spec``) really carries.

Public API: ``show_about(parent) -> AboutDialog``; ``bundled_components() -> list[Component]``.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable
from importlib import metadata
from typing import NamedTuple

from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector import __version__
from inspector.app.widgets.icons import app_icon

APP_DISTRIBUTION = "agent-inspector"
UNKNOWN_LICENCE = "unknown (see the package)"
_CLASSIFIER_PREFIX = "License :: OSI Approved :: "
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# A ``License`` field longer than this is the whole licence text, not its name.
_MAX_LICENCE_NAME = 80

Requires = Callable[[str], "list[str] | None"]


class Component(NamedTuple):
    """One thing the app ships with: a Python distribution, Qt itself, or Python. (A plain tuple:
    importing pydantic's lazy names after PySide6 trips shiboken's import hook.)"""

    name: str
    version: str
    licence: str


def normalized(name: str) -> str:
    """PEP 503 name: ``Jaraco.Classes`` and ``jaraco-classes`` are the same distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str | None:
    """The distribution a ``Requires-Dist`` line names; None for an extra's (dev) requirement."""
    spec, _, marker = requirement.partition(";")
    if "extra" in marker:
        return None
    match = _NAME.match(spec.strip())
    return match.group(0) if match else None


def runtime_distributions(
    root: str = APP_DISTRIBUTION, requires: Requires | None = None
) -> list[str]:
    """``root`` and every distribution it needs at run time, transitively (normalized names,
    sorted; ``root`` first). Requirements not installed (another platform's) are left out."""
    read = requires or metadata.requires
    seen: list[str] = []
    pending = [root]
    while pending:
        name = normalized(pending.pop())
        if name in seen:
            continue
        try:
            wanted = read(name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.append(name)
        pending.extend(n for n in map(requirement_name, wanted) if n is not None)
    return seen[:1] + sorted(seen[1:])


def _field(meta: metadata.PackageMetadata, key: str) -> str:
    return str(meta[key] or "").strip() if key in meta else ""


def licence_of(meta: metadata.PackageMetadata) -> str:
    """The licence as the package states it: its SPDX expression, else a short ``License`` field,
    else its trove classifiers."""
    if expression := _field(meta, "License-Expression"):
        return expression
    field = _field(meta, "License")
    if field and "\n" not in field and len(field) <= _MAX_LICENCE_NAME:
        return field
    classifiers = [
        c.removeprefix(_CLASSIFIER_PREFIX)
        for c in meta.get_all("Classifier") or []
        if c.startswith(_CLASSIFIER_PREFIX)
    ]
    return " / ".join(classifiers) or UNKNOWN_LICENCE


def bundled_components() -> list[Component]:
    """Agent Inspector, Python, Qt, then every runtime dependency by name."""
    components: list[Component] = []
    for name in runtime_distributions():
        meta = metadata.metadata(name)
        components.append(
            Component(
                name=str(meta["Name"]), version=str(meta["Version"]), licence=licence_of(meta)
            )
        )
    app = [c for c in components if normalized(c.name) == APP_DISTRIBUTION] or [
        Component(name=APP_DISTRIBUTION, version=__version__, licence="MIT")
    ]
    others = [c for c in components if normalized(c.name) != APP_DISTRIBUTION]
    runtimes = [
        Component(name="Python", version=platform.python_version(), licence="PSF-2.0"),
        # The C++ framework inside the PySide6 wheels, used under the LGPL.
        Component(name="Qt", version=qVersion(), licence="LGPL-3.0-only"),
    ]
    return app + runtimes + others


ABOUT_TEXT = """<h2>Agent Inspector {version}</h2>
<p>A desktop debugger for LLM agent turns: run one turn and see every step — what the model
was sent, what it answered, the validators' verdicts, injected feedback and the attempts thrown
away — then change a validator or policy and replay the turn to compare.</p>
<p>Agent Inspector is MIT-licensed. It ships with the components below, each under its own
licence. Qt and PySide6 are used under the GNU LGPL version 3: in the standalone app they are
the separate shared libraries in its <code>_internal/PySide6</code> folder, which you may
replace with your own build of the same version.</p>"""


class AboutDialog(QDialog):
    """Version, description and the component/licence table. Read-only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Agent Inspector")
        self.setWindowIcon(app_icon())
        self.components = bundled_components()

        self.text = QLabel(ABOUT_TEXT.format(version=__version__))
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.table = QTableWidget(len(self.components), 3)
        self.table.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for row, component in enumerate(self.components):
            for column, value in enumerate((component.name, component.version, component.licence)):
                self.table.setItem(row, column, QTableWidgetItem(value))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(640, 560)

    def licence_of(self, name: str) -> str | None:
        """The licence shown for component ``name`` (for tests and callers), None if absent."""
        for row in range(self.table.rowCount()):
            cell = self.table.item(row, 0)
            if cell is not None and normalized(cell.text()) == normalized(name):
                licence = self.table.item(row, 2)
                return licence.text() if licence is not None else None
        return None


def show_about(parent: QWidget | None = None) -> AboutDialog:
    """Opens the About dialog (modal to ``parent``, not blocking) and returns it."""
    dialog = AboutDialog(parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
