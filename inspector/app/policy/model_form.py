"""One pydantic model (a scenario section) as a form: a ``FieldEditor`` per field, diffed against
the scenario's values. The policy panel has two (policy, model); presets fill the policy one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.editing.form_fields import (
    SPIN_LIMIT,
    FieldSpec,
    field_errors,
    field_specs,
    overrides,
    parse_value_text,
    toml_literal,
    unset_fields,
)

# Request headers may carry credentials: they stay in the scenario file, out of the form.
MODEL_FIELDS_NOT_EDITED = ("headers",)


MODEL_FIELDS_NOT_EDITED = ("headers",)


SPIN_DECIMALS = 6  # timeouts in ms and temperatures to the thousandth show as they are


class FieldEditor(QWidget):
    """One field: its editor and, below it, the message when the value is refused."""

    changed = Signal()

    def __init__(self, spec: FieldSpec, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self._parse_error = ""
        self._set_number: float | None = None  # a decimal field's value as set, unrounded
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.editor = self._make_editor(spec)
        self.editor.setObjectName(f"field_{spec.name}")
        self.editor.setToolTip(spec.description)
        layout.addWidget(self.editor)
        self.error = QLabel(self)
        self.error.setObjectName(f"error_{spec.name}")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #d1242f;")
        self.error.hide()
        layout.addWidget(self.error)

    def _make_editor(self, spec: FieldSpec) -> QWidget:
        if spec.kind == "choice":
            combo = QComboBox(self)
            combo.addItems(list(spec.choices))
            combo.currentIndexChanged.connect(self.changed)
            return combo
        if spec.kind == "flag":
            check = QCheckBox(self)
            check.toggled.connect(self.changed)
            return check
        if spec.kind == "integer":
            spin = QSpinBox(self)
            spin.setRange(
                int(spec.minimum) if spec.minimum is not None else -SPIN_LIMIT, SPIN_LIMIT
            )
            spin.valueChanged.connect(self.changed)
            return spin
        if spec.kind == "number":
            dspin = DecimalSpinBox(self)
            dspin.setDecimals(SPIN_DECIMALS)
            low = spec.minimum if spec.minimum is not None else -SPIN_LIMIT
            dspin.setRange(low, SPIN_LIMIT)
            dspin.valueChanged.connect(self.changed)
            return dspin
        if spec.kind == "long_text":
            text = QPlainTextEdit(self)
            text.setTabChangesFocus(True)
            text.setFixedHeight(text.fontMetrics().lineSpacing() * 3 + 12)
            text.textChanged.connect(self.changed)
            return text
        line = QLineEdit(self)
        if spec.kind == "value":
            line.setPlaceholderText("(none)" if spec.optional else "")
        line.textChanged.connect(self.changed)
        return line

    def value(self) -> Any:
        """The editor's value; a "value" field that does not parse keeps its message."""
        w = self.editor
        self._parse_error = ""
        if isinstance(w, QComboBox):
            return w.currentText()
        if isinstance(w, QCheckBox):
            return w.isChecked()
        # Beyond the shown decimals the editor rounds: unchanged, it means the value set.
        set_number = self._set_number
        if (
            isinstance(w, QDoubleSpinBox)
            and set_number is not None
            and w.value() == round(set_number, w.decimals())
        ):
            return set_number
        if isinstance(w, QSpinBox | QDoubleSpinBox):
            return w.value()
        if isinstance(w, QPlainTextEdit):
            return w.toPlainText()
        assert isinstance(w, QLineEdit)
        if self.spec.kind == "text":
            return w.text()
        try:
            return parse_value_text(w.text(), self.spec)
        except ValueError as exc:
            self._parse_error = str(exc)
            return None

    @property
    def parse_error(self) -> str:
        return self._parse_error

    def set_value(self, value: Any) -> None:
        w = self.editor
        if isinstance(w, QComboBox):
            w.setCurrentText(str(value))
        elif isinstance(w, QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QSpinBox):
            w.setValue(int(value))
        elif isinstance(w, QDoubleSpinBox):
            self._set_number = float(value)
            w.setValue(self._set_number)
        elif isinstance(w, QPlainTextEdit):
            w.setPlainText(str(value))
        elif isinstance(w, QLineEdit):
            plain = self.spec.kind == "text" or self.spec.text_only
            w.setText(("" if value is None else str(value)) if plain else toml_literal(value))

    def show_error(self, message: str) -> None:
        self.error.setText(message)
        self.error.setVisible(bool(message))


class DecimalSpinBox(QDoubleSpinBox):
    """Enough decimals for values like 0.005 s, shown without trailing zeros ("30", "0.005")."""

    def textFromValue(self, value: float) -> str:
        locale = self.locale()
        text = locale.toString(value, "f", self.decimals()).replace(locale.groupSeparator(), "")
        point = locale.decimalPoint()
        return text.rstrip("0").rstrip(point) if point in text else text


class ModelForm(QGroupBox):
    """A form for one pydantic model (a scenario section), diffed against the scenario's values."""

    changed = Signal()

    def __init__(
        self,
        title: str,
        section: str,
        model: type[BaseModel],
        exclude: tuple[str, ...] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(title, parent)
        self.section = section
        self.model = model
        self._base: dict[str, Any] = {}
        self._loading = False
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.editors: dict[str, FieldEditor] = {}
        self.labels: dict[str, QLabel] = {}
        for spec in field_specs(model, exclude):
            editor = FieldEditor(spec, self)
            label = QLabel(spec.label, self)
            label.setToolTip(f"{section}.{spec.name}: {spec.description}".rstrip(": "))
            label.setBuddy(editor.editor)
            editor.changed.connect(self._on_changed)
            self.form.addRow(label, editor)
            self.editors[spec.name] = editor
            self.labels[spec.name] = label

    def set_base(self, values: BaseModel) -> None:
        """Shows ``values`` (the scenario's own) and diffs later edits against them."""
        self._base = values.model_dump()
        self._loading = True
        try:
            for name, editor in self.editors.items():
                editor.set_value(self._base.get(name))
        finally:
            self._loading = False
        self._on_changed()

    @property
    def base(self) -> dict[str, Any]:
        """The scenario's own values (what edits are diffed against)."""
        return dict(self._base)

    def values(self) -> dict[str, Any]:
        return {name: editor.value() for name, editor in self.editors.items()}

    def set_values(self, values: dict[str, Any]) -> None:
        """Puts ``values`` in their editors, as if typed (edits, diffed against the base)."""
        self._loading = True
        try:
            for name, value in values.items():
                self.editors[name].set_value(value)
        finally:
            self._loading = False
        self._on_changed()

    def errors(self) -> dict[str, str]:
        """Field → message for every refused value (shown under the field too)."""
        values = self.values()
        errors = {n: e.parse_error for n, e in self.editors.items() if e.parse_error}
        full = {**self._base, **values}  # excluded fields keep the scenario's values
        for name, message in field_errors(self.model, full).items():
            errors.setdefault(name, message)
        for name in unset_fields(self._base, values):
            errors.setdefault(name, "cannot be cleared here: edit the scenario file")
        return errors

    def overrides(self) -> list[str]:
        return overrides(self.section, self._base, self.values())

    def _on_changed(self) -> None:
        if self._loading:
            return
        errors = self.errors()
        values = self.values()
        for name, editor in self.editors.items():
            editor.show_error(errors.get(name, ""))
            font = QFont(self.labels[name].font())
            font.setBold(values[name] != self._base.get(name))  # edited since the scenario
            self.labels[name].setFont(font)
        self.changed.emit()
