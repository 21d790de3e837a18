"""The scenario's built-in validators (``[[validators]]``) as an editable table.

Each row is checked as it is typed against the core's ``ValidatorSpec``: the offending cell turns
red with the message as its tooltip, and the first problem is shown under the table. Save (or
Ctrl+S while the table has focus) writes the validators back through ``ScenarioDocument``, which
keeps the file's comments; a built-in demo is saved as a copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from inspector.app.validators.validators_item_model import ValidatorsItemModel
from inspector.app.widgets.flow_layout import flow_row
from inspector.app.widgets.form_widgets import error_label
from inspector.app.widgets.scenario_files import ask_copy_path, save_document, scenario_file
from inspector.core.errors import ScenarioError
from inspector.editing import ScenarioDocument
from inspector.editing.validator_rows import (
    KIND,
    KINDS,
    PARAMETERS,
    WHEN,
    WHEN_CHOICES,
    ValidatorRow,
)

_Index = QModelIndex | QPersistentModelIndex
_INVALID_EDITOR = "QLineEdit { background: rgba(209, 36, 47, 0.22); }"  # see INVALID_BACKGROUND


class _RowDelegate(QStyledItemDelegate):
    """Drop-downs for kind and ``when``; text cells checked keystroke by keystroke."""

    candidateProblem = Signal(str)  # the row's problem with the text being typed ("" if none)

    def __init__(self, model: ValidatorsItemModel, parent: QWidget) -> None:
        super().__init__(parent)
        self._model = model

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: _Index) -> QWidget:
        if index.column() in (KIND, WHEN):
            box = QComboBox(parent)
            box.addItems(list(KINDS if index.column() == KIND else WHEN_CHOICES))
            return box
        editor = QLineEdit(parent)
        row, column = index.row(), index.column()
        editor.textEdited.connect(lambda text: self._check(editor, row, column, text))
        return editor

    def _check(self, editor: QLineEdit, row: int, column: int, text: str) -> None:
        if not 0 <= row < self._model.rowCount():
            return
        problem = self._model.check_candidate(row, column, text)
        marked = problem is not None and problem.column == column
        editor.setStyleSheet(_INVALID_EDITOR if marked else "")
        editor.setToolTip(problem.message if marked and problem else "")
        self.candidateProblem.emit(f"validators[{row}].{problem.message}" if problem else "")

    def setEditorData(self, editor: QWidget, index: _Index) -> None:
        text = str(index.data(Qt.ItemDataRole.EditRole) or "")
        if isinstance(editor, QComboBox):
            editor.setCurrentIndex(max(0, editor.findText(text)))
        else:
            super().setEditorData(editor, index)

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: _Index) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentText())
        else:
            super().setModelData(editor, model, index)


class ValidatorsTable(QWidget):
    saved = Signal(str)  # the scenario path, after the validators were written

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path: Path | None = None
        self._source = ""
        self._read_only = False
        self._loaded: list[dict[str, Any]] = []  # the validators as read: origins refer to them
        self._dirty = False
        self._load_error = ""
        # Unsaved rows of a scenario left for another, with the tables they were edited from.
        self._drafts: dict[str, tuple[list[ValidatorRow], list[dict[str, Any]]]] = {}

        self.model = ValidatorsItemModel(self)
        self.view = QTableView(self)
        self.view.setObjectName("validatorsTable")
        self.view.setModel(self.model)
        self.delegate = _RowDelegate(self.model, self.view)
        self.view.setItemDelegate(self.delegate)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
        )
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(PARAMETERS, QHeaderView.ResizeMode.Stretch)

        self.heading = QLabel("No scenario selected", self)
        self.heading.setWordWrap(True)
        self.add_button = QPushButton("Add", self)
        self.remove_button = QPushButton("Remove", self)
        self.up_button = QPushButton("Move up", self)
        self.down_button = QPushButton("Move down", self)
        self.save_button = QPushButton("Save", self)
        self.save_button.setToolTip("Write the validators to the scenario file (Ctrl+S)")
        self.error_label = error_label(self)
        self.error_label.setObjectName("validatorsError")

        # Wrapped onto a second line in a narrow dock rather than widening it.
        buttons = flow_row(
            self,
            self.add_button,
            self.remove_button,
            self.up_button,
            self.down_button,
            self.save_button,
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)

        self.add_button.clicked.connect(self.add_row)
        self.remove_button.clicked.connect(self.remove_row)
        self.up_button.clicked.connect(lambda: self.move_row(-1))
        self.down_button.clicked.connect(lambda: self.move_row(1))
        self.save_button.clicked.connect(self.save)
        self.model.edited.connect(self._on_edited)
        self.delegate.candidateProblem.connect(self._show_candidate)
        # Only while the table has focus: the window and other editors keep their own Ctrl+S.
        self.save_shortcut = QShortcut(QKeySequence("Ctrl+S"), self)
        self.save_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.save_shortcut.activated.connect(self.save)
        self.set_scenario_file(None)

    # ---- the scenario ----------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def dirty(self) -> bool:
        return self._dirty

    def unsaved(self) -> list[str]:
        """What would be lost on quitting: the scenarios whose validators are edited, unsaved."""
        sources = [*self._drafts]
        if self._path is not None and self._dirty and self._source not in sources:
            sources.insert(0, self._source)
        return [f"{source} (validators)" for source in sources]

    def set_scenario_file(self, path: Path | str | None) -> None:
        """Shows the validators of ``path`` (a file, or ``demo:NAME``; a built-in demo is
        read-only: saving asks for a copy). The unsaved edits of another file are kept: they are
        shown again when that file is; those of ``path`` itself are dropped (it is re-read)."""
        if self._path is not None and self._dirty and str(path) != self._source:
            self._drafts[self._source] = (self.model.rows(), self._loaded)
        self._path, self._read_only, self._loaded, self._dirty = None, False, [], False
        self._load_error = ""
        tables: list[dict[str, Any]] = []
        if path is not None:
            try:
                file, source, read_only = scenario_file(path)
                doc = ScenarioDocument.load(file, source=source)
            except ScenarioError as exc:
                self._load_error = str(exc)
            else:
                self._path, self._source, self._read_only = file, source, read_only
                tables = self._loaded = doc.validators
                self._configure(doc)
        draft = self._drafts.pop(self._source, None) if self._path is not None else None
        if draft is None:
            self.model.set_tables(tables)
        else:
            rows, self._loaded = draft
            self.model.set_rows(rows)
            self._dirty = True
        self.view.resizeColumnsToContents()
        self._update_heading()
        enabled = self._path is not None
        for widget in (self.view, self.add_button, self.remove_button, self.up_button,
                       self.down_button, self.save_button):  # fmt: skip
            widget.setEnabled(enabled)
        self._refresh_errors()

    def _configure(self, doc: ScenarioDocument) -> None:
        """What the rows are checked against: the scenario's tools and folder."""
        self.model.tool_names = [str(t.get("name")) for t in doc.tools]
        self.model.base_dir = doc.base_dir

    def _update_heading(self) -> None:
        if self._path is None:
            self.heading.setText(
                "The validators cannot be shown." if self._load_error else "No scenario selected"
            )
            return
        where = self._source + (" (built-in demo: saving makes a copy)" if self._read_only else "")
        self.heading.setText(f"Validators of {where}" + (" — edited" if self._dirty else ""))

    # ---- editing ---------------------------------------------------------------------------

    def _current_row(self) -> int:
        index = self.view.currentIndex()
        return index.row() if index.isValid() else -1

    def add_row(self) -> None:
        at = self._current_row() + 1 if self._current_row() >= 0 else self.model.rowCount()
        row = self.model.insert_row(at)
        self.view.setCurrentIndex(self.model.index(row, KIND))

    def remove_row(self) -> None:
        row = self._current_row()
        if row >= 0:
            self.model.remove_row(row)

    def move_row(self, delta: int) -> None:
        row = self._current_row()
        if row >= 0:
            now = self.model.move_row(row, delta)
            self.view.setCurrentIndex(self.model.index(now, self.view.currentIndex().column()))

    def errors(self) -> list[str]:
        """One line per invalid row (``validators[1].max: ...``); [] when all are valid."""
        return self.model.problems()

    def _on_edited(self) -> None:
        self._dirty = True
        self._update_heading()
        self._refresh_errors()

    def _refresh_errors(self) -> None:
        problems = self.errors()
        self._show_error(problems[0] if problems else self._load_error)

    def _show_candidate(self, problem: str) -> None:
        if problem:
            self._show_error(problem)
        else:
            self._refresh_errors()

    def _show_error(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.setVisible(bool(text))

    # ---- saving ----------------------------------------------------------------------------

    def ask_copy_path(self, original: Path) -> Path | None:
        """Where a demo's copy goes (a method, so tests can answer the dialog)."""
        return ask_copy_path(self, original)

    def save(self) -> bool:
        """Writes the validators to the scenario file, its comments kept (a demo: to a copy the
        user names). False, with the reason under the table, when nothing was written."""
        if self._path is None:
            return False
        problems = self.errors()
        if problems:
            self._show_error(problems[0])
            return False
        target = self._path
        if self._read_only:
            chosen = self.ask_copy_path(self._path)
            if chosen is None:
                return False
            target = chosen
        try:
            # Read afresh: what other editors (or another program) saved meanwhile stays.
            doc = ScenarioDocument.load(self._path, source=self._source)
            tables, origins = self.model.tables()
            same_file = doc.validators == self._loaded
            doc.set_validators(tables, origins if same_file else None)
            written = save_document(doc, self._read_only, target)
        except (ScenarioError, ValueError) as exc:
            self._show_error(str(exc))
            return False
        self._dirty = False  # written: nothing to keep for the file left (a demo's copy)
        self.set_scenario_file(written)
        self.saved.emit(str(written))
        return True
