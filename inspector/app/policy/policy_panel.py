"""The policy panel: every ``Policy`` field (and the ``[model]`` fields) as a form, generated
from the pydantic models, so a new field appears by itself.

The form starts from the selected scenario's values; what the user changes becomes ``--set``
style overrides for the next run (``overrides()``). Named policies (presets) are applied to the
form as edits (``policy_preset_bar``). Values are validated with the pydantic model
on every edit and a refused value shows its message under the field.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.app.policy.model_form import (
    MODEL_FIELDS_NOT_EDITED,
    ModelForm,
)
from inspector.app.policy.policy_preset_bar import PolicyPresetBar
from inspector.core.policy import Policy
from inspector.core.scenario import ModelConfig, Scenario
from inspector.editing.provider_presets import (
    ProviderPreset,
    matching_preset,
    preset_values,
    presets,
)


# Request headers may carry credentials: they stay in the scenario file, out of the form.
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

    def model_edits(self) -> dict[str, object]:
        """The model settings that differ from the file's (the scenario editor saves them to
        the scenario's [model] table)."""
        form = self.model_form
        return {
            name: value
            for name, value in form.values().items()
            if value is not None and value != form.base.get(name)
        }

    def _on_changed(self) -> None:
        general = [f"{k}: {m}" for k, m in self.errors().items() if k in ("policy", "model")]
        self.general_error.setText("\n".join(general))
        self.general_error.setVisible(bool(general))
        self._sync_preset_box()
        self.changed.emit()
