"""The scenario's ``[[tools]]``: a list of tools and a form for the selected one.

Each tool is kept as the file's own table (a dict): the form changes only the keys it has a field
for, and only when the user edits that field, so a value it cannot show exactly (a number as a
canned result, a key it does not know) is written back as it was read.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.app.widgets.form_widgets import error_label, text_box
from inspector.editing.scenario_edits import json_text, parse_result, parse_schema, result_text

DEFAULT_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
RESULT, FUNCTION = "canned result", "function"


class ToolsEditor(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tools: list[dict[str, Any]] = []
        self._origins: list[int | None] = []  # the [[tools]] table each came from
        # Per tool, a JSON field that does not parse: key -> (message, its text), shown until fixed.
        self._bad: list[dict[str, tuple[str, str]]] = []
        self._filling = False

        self.list = QListWidget(self)
        self.list.setObjectName("toolsList")
        self.list.setMaximumHeight(90)
        self.add_button = QPushButton("Add tool", self)
        self.remove_button = QPushButton("Remove tool", self)
        self.name = QLineEdit(self)
        self.description = QLineEdit(self)
        self.parameters = text_box(self, 5)
        self.parameters.setPlaceholderText('JSON schema of the arguments: {"type": "object", ...}')
        self.parameters_error = error_label(self)
        self.answer = QComboBox(self)
        self.answer.addItems([RESULT, FUNCTION])
        self.answer.setToolTip("What the tool returns: a fixed result, or a python function")
        self.result = text_box(self, 3)
        self.result.setPlaceholderText("Text, or JSON starting with { or [")
        self.result_error = error_label(self)
        self.function = QLineEdit(self)
        self.function.setPlaceholderText("tools.py:lookup")
        # Short: a long check box label would set the Scenario dock's width.
        self.side_effects = QCheckBox("Side effects", self)
        self.side_effects.setToolTip(
            "The tool changes something outside: a replay never runs it again and reuses "
            "the recorded result"
        )

        self.form = QWidget(self)
        form = QFormLayout(self.form)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Name", self.name)
        form.addRow("Description", self.description)
        form.addRow("Parameters", self.parameters)
        form.addRow("", self.parameters_error)
        form.addRow("Answer with", self.answer)
        form.addRow("Result", self.result)
        form.addRow("", self.result_error)
        form.addRow("Function", self.function)
        form.addRow("", self.side_effects)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        layout.addWidget(self.form)

        self.list.currentRowChanged.connect(self._fill)
        self.add_button.clicked.connect(self.add_tool)
        self.remove_button.clicked.connect(self.remove_tool)
        self.name.textEdited.connect(lambda text: self._set("name", text))
        self.description.textEdited.connect(lambda text: self._set("description", text or None))
        self.parameters.textChanged.connect(self._parameters_edited)
        self.answer.activated.connect(self._answer_chosen)
        self.result.textChanged.connect(self._result_edited)
        self.function.textEdited.connect(lambda text: self._set("function", text or None))
        self.side_effects.toggled.connect(lambda on: self._set("side_effects", on or None))
        self._fill(-1)

    # ---- contents --------------------------------------------------------------------------

    def set_tools(
        self, tools: list[dict[str, Any]], origins: list[int | None] | None = None
    ) -> None:
        """``origins``: the file's table each tool came from (default: tool i from table i)."""
        self._tools = [dict(t) for t in tools]
        self._origins = list(range(len(tools))) if origins is None else list(origins)
        self._bad = [{} for _ in tools]
        self._refill(0 if tools else -1)

    def tools(self) -> list[dict[str, Any]]:
        """The tools as tables (a field with a JSON error keeps its last valid value)."""
        return [dict(t) for t in self._tools]

    def origins(self) -> list[int | None]:
        return list(self._origins)

    def errors(self) -> dict[str, str]:
        """``tools[1].parameters`` → the JSON problem of that field."""
        return {
            f"tools[{i}].{key}": message
            for i, bad in enumerate(self._bad)
            for key, (message, _) in bad.items()
        }

    def select(self, row: int) -> None:
        self.list.setCurrentRow(row)

    def add_tool(self) -> None:
        n = len(self._tools) + 1
        names = {t.get("name") for t in self._tools}
        while f"tool_{n}" in names:
            n += 1
        self._tools.append(
            {"name": f"tool_{n}", "description": "", "parameters": dict(DEFAULT_PARAMETERS)}
        )
        self._origins.append(None)
        self._bad.append({})
        self._refill(len(self._tools) - 1)
        self.changed.emit()

    def remove_tool(self) -> None:
        row = self.list.currentRow()
        if not 0 <= row < len(self._tools):
            return
        for items in (self._tools, self._origins, self._bad):
            del items[row]
        self._refill(min(row, len(self._tools) - 1))
        self.changed.emit()

    # ---- the form --------------------------------------------------------------------------

    def _refill(self, row: int) -> None:
        blocked = self.list.blockSignals(True)
        self.list.clear()
        self.list.addItems([str(t.get("name", "")) for t in self._tools])
        self.list.setCurrentRow(row)
        self.list.blockSignals(blocked)
        self._fill(row)

    def _fill(self, row: int) -> None:
        self._filling = True
        try:
            valid = 0 <= row < len(self._tools)
            self.form.setEnabled(valid)
            self.remove_button.setEnabled(valid)
            tool = self._tools[row] if valid else {}
            bad = self._bad[row] if valid else {}
            self.name.setText(str(tool.get("name", "")))
            self.description.setText(str(tool.get("description") or ""))
            parameters = tool.get("parameters", DEFAULT_PARAMETERS if valid else None)
            self.parameters.setPlainText(
                bad["parameters"][1]
                if "parameters" in bad
                else ("" if parameters is None else json_text(parameters))
            )
            uses_function = bool(tool.get("function"))
            self.answer.setCurrentText(FUNCTION if uses_function else RESULT)
            self.result.setPlainText(
                bad["result"][1] if "result" in bad else result_text(tool.get("result"))
            )
            self.function.setText(str(tool.get("function") or ""))
            self.side_effects.setChecked(bool(tool.get("side_effects")))
            self._show_answer(uses_function)
            self._show_errors(bad)
        finally:
            self._filling = False

    def _show_answer(self, uses_function: bool) -> None:
        self.result.setEnabled(not uses_function)
        self.function.setEnabled(uses_function)

    def _show_errors(self, bad: dict[str, tuple[str, str]]) -> None:
        for key, label in (("parameters", self.parameters_error), ("result", self.result_error)):
            label.setText(bad[key][0] if key in bad else "")
            label.setVisible(key in bad)

    def _current(self) -> int:
        row = self.list.currentRow()
        return row if 0 <= row < len(self._tools) else -1

    def _set(self, key: str, value: Any) -> None:
        if self._store(key, value):
            self.changed.emit()

    def _store(self, key: str, value: Any) -> bool:
        """Puts ``value`` in the current tool (None removes the key); False when there is none
        or the form is being filled. Callers say ``changed`` once per edit."""
        row = self._current()
        if self._filling or row < 0:
            return False
        if value is None:
            self._tools[row].pop(key, None)
        else:
            self._tools[row][key] = value
        if key == "name":
            item = self.list.item(row)
            if item is not None:
                item.setText(str(value))
        return True

    def _json_field(self, key: str, text: str, parse: Any, *, notify: bool = True) -> None:
        row = self._current()
        if self._filling or row < 0:
            return
        bad = self._bad[row]
        try:
            value = parse(text)
        except ValueError as exc:
            bad[key] = (str(exc), text)
        else:
            bad.pop(key, None)
            self._store(key, value)
        self._show_errors(bad)
        if notify:
            self.changed.emit()

    def _parameters_edited(self) -> None:
        self._json_field("parameters", self.parameters.toPlainText(), parse_schema)

    def _result_edited(self) -> None:
        self._json_field("result", self.result.toPlainText(), parse_result)

    def _answer_chosen(self) -> None:
        uses_function = self.answer.currentText() == FUNCTION
        self._show_answer(uses_function)
        row = self._current()
        if row < 0:
            return
        # The one not chosen is dropped: a tool gives either a result or a function.
        if uses_function:
            self._tools[row].pop("result", None)
            self._bad[row].pop("result", None)
            self._store("function", self.function.text() or None)
        else:
            self._tools[row].pop("function", None)
            self._json_field("result", self.result.toPlainText(), parse_result, notify=False)
        self._show_errors(self._bad[row])
        self.changed.emit()
