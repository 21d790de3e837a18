"""The policy panel: every ``Policy`` field (and the ``[model]`` fields) as a form, generated
from the pydantic models, so a new field appears by itself.

The form starts from the selected scenario's values; what the user changes becomes ``--set``
style overrides for the next run (``overrides()``). Named policies (presets) are applied to the
form as edits (``policy_preset_bar``). Values are validated with the pydantic model
on every edit and a refused value shows its message under the field.
"""

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
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.app.policy.policy_preset_bar import PolicyPresetBar
from inspector.core.policy import Policy
from inspector.core.scenario import ModelConfig, Scenario
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
from inspector.editing.provider_presets import (
    ProviderPreset,
    matching_preset,
    preset_values,
    presets,
)

# Request headers may carry credentials: they stay in the scenario file, out of the form.
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


class PolicyPanel(QWidget):
    """The policy and model of the next run; ``overrides()`` is what the Run button uses."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scenario: Scenario | None = None
        self.scenario_label = QLabel("No scenario selected", self)
        self.scenario_label.setWordWrap(True)
        self.reset_button = QPushButton("Reset to scenario", self)
        self.reset_button.setToolTip("Discard the edits: back to the scenario file's values")
        self.reset_button.clicked.connect(self.reset)
        header = QHBoxLayout()
        header.addWidget(self.scenario_label, 1)
        header.addWidget(self.reset_button)

        self.policy_form = ModelForm("Policy", "policy", Policy)
        self.model_form = ModelForm("Model", "model", ModelConfig, MODEL_FIELDS_NOT_EDITED)
        self._presets = presets()
        self.preset_box = QComboBox(self)
        self.preset_box.setObjectName("providerPresets")
        self.preset_box.setPlaceholderText("Custom")  # shown when the fields match no preset
        self.preset_box.setToolTip(
            "Fill the model fields for a provider (they become model.* overrides of the next run)"
        )
        self.preset_box.activated.connect(self._preset_chosen)
        self._fill_presets()
        presets_row = QHBoxLayout()
        presets_row.addWidget(QLabel("Provider preset:", self))
        presets_row.addWidget(self.preset_box, 1)
        self.policy_presets = PolicyPresetBar(self.policy_form, self)
        self.general_error = QLabel(self)
        self.general_error.setWordWrap(True)
        self.general_error.setStyleSheet("color: #d1242f;")
        self.general_error.hide()
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.addWidget(self.policy_form)
        body_layout.addWidget(self.model_form)
        body_layout.addStretch(1)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(body)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addLayout(presets_row)  # on top: the model form is below the long policy form
        layout.addWidget(self.policy_presets)
        layout.addWidget(self.general_error)
        layout.addWidget(scroll, 1)
        for form in (self.policy_form, self.model_form):
            form.changed.connect(self._on_changed)
        self.setEnabled(False)

    @property
    def scenario(self) -> Scenario | None:
        return self._scenario

    def set_scenario(self, scenario: Scenario | None) -> None:
        """Loads the scenario's own policy and model; earlier edits are dropped."""
        self._scenario = scenario
        self.setEnabled(scenario is not None)
        if scenario is None:
            self.scenario_label.setText("No scenario selected")
            return
        self.scenario_label.setText(f"Next run of <b>{scenario.name}</b>")
        self.reset()

    def reset(self) -> None:
        if self._scenario is not None:
            self.policy_form.set_base(self._scenario.policy)
            self.model_form.set_base(self._scenario.model)

    # ---- provider presets ------------------------------------------------------------------

    @property
    def presets(self) -> list[ProviderPreset]:
        return list(self._presets)

    def set_local_model_url(self, url: str | None) -> None:
        """The running local model's base URL (None: not known to run) for its preset."""
        self._presets = presets(url)
        self._fill_presets()

    def apply_preset(self, key: str) -> None:
        """Fills the model fields from the preset ``key`` ("scenario", "local", "openai", ...)."""
        preset = next((p for p in self._presets if p.key == key), None)
        if preset is None:
            raise KeyError(f"no provider preset {key!r}")
        self.model_form.set_values(preset_values(preset, self.model_form.base))

    def current_preset(self) -> ProviderPreset | None:
        """The preset the model fields match now (None: edited by hand)."""
        return matching_preset(self._presets, self.model_form.base, self.model_form.values())

    def _fill_presets(self) -> None:
        blocked = self.preset_box.blockSignals(True)
        try:
            self.preset_box.clear()
            for preset in self._presets:
                self.preset_box.addItem(preset.label, preset.key)
        finally:
            self.preset_box.blockSignals(blocked)
        self._sync_preset_box()

    def _sync_preset_box(self) -> None:
        preset = self.current_preset() if self._scenario is not None else self._presets[0]
        keys = [p.key for p in self._presets]
        self.preset_box.setCurrentIndex(keys.index(preset.key) if preset else -1)

    def _preset_chosen(self, index: int) -> None:
        self.apply_preset(str(self.preset_box.itemData(index)))

    def errors(self) -> dict[str, str]:
        """``section.field`` → message for every refused value."""
        return {
            f"{form.section}.{name}" if name else form.section: message
            for form in (self.policy_form, self.model_form)
            for name, message in form.errors().items()
        }

    def overrides(self) -> list[str]:
        """The edits as ``--set`` overrides, in form order (empty when nothing changed)."""
        return self.policy_form.overrides() + self.model_form.overrides()

    def _on_changed(self) -> None:
        general = [f"{k}: {m}" for k, m in self.errors().items() if k in ("policy", "model")]
        self.general_error.setText("\n".join(general))
        self.general_error.setVisible(bool(general))
        self._sync_preset_box()
        self.changed.emit()
